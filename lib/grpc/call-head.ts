/**
 * What a gRPC call's request HEADERS decide before any handler runs (lib/grpc/server-call.ts): the method, the
 * codec, the request and response encodings, the deadline and the request id, or the status that refuses it.
 */
import { randomUUID } from 'node:crypto';
import { constants as h2, type IncomingHttpHeaders } from 'node:http2';
import { GrpcStatus, type GrpcStatusObject } from './status.js';
import { isGrpcEncoding, parseGrpcTimeout, type GrpcEncoding } from './framing.js';
import type { GrpcMethod, GrpcRouter } from './router.js';
import { acceptsEncoding, type GrpcCallSettings } from './call-settings.js';

const REQUEST_ID = /^[\w.:@/+=-]{1,200}$/;

/** A call its headers admit. */
export interface CallHead {
  path: string;
  method: GrpcMethod;
  /** The request's grpc-encoding; undefined: identity. */
  requestEncoding: GrpcEncoding | undefined;
  /** What the responses are compressed with (one the client accepts), if compression is on. */
  responseEncoding: GrpcEncoding | undefined;
  /** The earlier of grpc-timeout and grpc.request_timeout, ms; undefined: none. */
  timeoutMs: number | undefined;
  /** Epoch ms the call must end by (GrpcCallContext.deadline). */
  deadline: number | undefined;
  /** The client's valid x-request-id or a new one, when request ids are on. */
  requestId: string | undefined;
}

/** A call its headers refuse: the status, and the HTTP status of its Trailers-Only answer. */
export interface CallHeadRefusal {
  refusal: GrpcStatusObject;
  httpStatus?: number;
}

const refuse = (code: GrpcStatusObject['code'], message: string, httpStatus?: number): CallHeadRefusal => ({ refusal: { code, message }, httpStatus });

/** Read a call's request headers, in the order the checks answer: method, codec, shutdown, route, encoding. */
export function readCallHead(headers: IncomingHttpHeaders, router: GrpcRouter, s: GrpcCallSettings): CallHead | CallHeadRefusal {
  const path = String(headers[h2.HTTP2_HEADER_PATH] ?? '');
  if (headers[h2.HTTP2_HEADER_METHOD] !== 'POST') return refuse(GrpcStatus.UNIMPLEMENTED, 'gRPC requires POST', 405);
  const subtype = /^application\/grpc\+([a-z0-9.-]+)/i.exec(String(headers['content-type']))?.[1];
  if (subtype && subtype.toLowerCase() !== 'proto') return refuse(GrpcStatus.UNIMPLEMENTED, `Unsupported codec "${subtype}"`, 415);
  if (s.isShuttingDown()) return refuse(GrpcStatus.UNAVAILABLE, 'Server is shutting down');
  const method = router.lookup(path);
  if (!method) return refuse(GrpcStatus.UNIMPLEMENTED, `Method not found: ${path}`);
  if (!method.handler) return refuse(GrpcStatus.UNIMPLEMENTED, `Method not implemented: ${path}`);

  const requestEncoding = String(headers['grpc-encoding'] ?? 'identity');
  if (requestEncoding !== 'identity' && (!s.compression || !isGrpcEncoding(requestEncoding))) {
    return refuse(GrpcStatus.UNIMPLEMENTED, `Unsupported grpc-encoding "${requestEncoding}"`);
  }

  const timeouts = [parseGrpcTimeout(headers['grpc-timeout'] as string | undefined), s.requestTimeoutMs].filter((t): t is number => t !== undefined);
  const timeoutMs = timeouts.length ? Math.min(...timeouts) : undefined;

  let requestId: string | undefined;
  if (s.requestId) {
    const given = headers['x-request-id'];
    requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  }
  return {
    path,
    method,
    requestEncoding: requestEncoding === 'identity' ? undefined : (requestEncoding as GrpcEncoding),
    responseEncoding: s.compression ? acceptsEncoding(headers) : undefined,
    timeoutMs,
    deadline: timeoutMs === undefined ? undefined : Date.now() + timeoutMs,
    requestId,
  };
}
