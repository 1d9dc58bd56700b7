/**
 * gRPC calls under the App's work limits (lib/server/cost.ts, issue 35 item 2): a client past its CPU budget, or a
 * server shedding expensive work, gets its call refused before the message is read or decoded, with one
 * Trailers-Only answer; an admitted call's work (decoding, the handler's synchronous part, each streamed
 * message produced, encoding) is charged to its client as it runs. Calls are not queued: a stream lives as
 * long as its client wants and must not hold one of the gate's few slots. The health service is neither
 * refused nor charged (probes must see the server's state, not a budget).
 */
import { constants as h2, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import { WorkRefusal, type AppWorkGate } from '../server/cost.js';
import type { KeelRequest } from '../http/request.js';
import { HEALTH_SERVICE } from './health.js';
import { GrpcStatus, encodeGrpcMessage } from './status.js';

/** Charges `ms` of a call's work to its client. */
export type GrpcCharge = (ms: number) => void;

const HEALTH_PREFIX = `/${HEALTH_SERVICE}/`;

/**
 * The call's client key as the rate limit reads it (the peer address, or the forwarded one from a trusted
 * proxy), refused with a WorkRefusal or admitted with its charge; undefined for health checks.
 */
export function admitCall(work: AppWorkGate, stream: ServerHttp2Stream, headers: IncomingHttpHeaders): GrpcCharge | undefined {
  if (String(headers[h2.HTTP2_HEADER_PATH] ?? '').startsWith(HEALTH_PREFIX)) return undefined;
  const remoteAddress = stream.session?.socket?.remoteAddress;
  // What proxy-addr and the key function read of a request: its headers and the socket's address.
  const req = { headers, socket: { remoteAddress }, connection: { remoteAddress } } as unknown as KeelRequest;
  const key = work.keyOf(req);
  work.gate.admit(key);
  return (ms) => work.gate.charge(key, ms);
}

/**
 * A work refusal as gRPC says it, Trailers-Only: RESOURCE_EXHAUSTED for the client's budget (429), UNAVAILABLE
 * for an overloaded server (503), with Retry-After as `grpc-retry-pushback-ms` (gRFC A6). The request is not read.
 */
export function refuseCallForWork(stream: ServerHttp2Stream, err: WorkRefusal): void {
  stream.on('error', () => {});
  if (stream.destroyed || stream.closed) return;
  stream.respond({
    [h2.HTTP2_HEADER_STATUS]: 200,
    'content-type': 'application/grpc',
    'grpc-status': String(err.status === 429 ? GrpcStatus.RESOURCE_EXHAUSTED : GrpcStatus.UNAVAILABLE),
    'grpc-message': encodeGrpcMessage(err.detail ?? err.message),
    'grpc-retry-pushback-ms': String(err.retryAfterSeconds * 1000),
  }, { endStream: true });
}
