/**
 * One gRPC call on one HTTP/2 stream (gRPC over HTTP/2: https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md):
 * checks, deadline, guard, dispatch by method kind, response framing under the size caps, and the final
 * status in trailers (or in a Trailers-Only response when nothing was sent yet).
 */
import { constants as h2, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { GrpcRouter } from './router.js';
import type { GrpcCharge } from './work.js';
import type { GrpcCallSettings } from './call-settings.js';
import { ServerCall } from './server-call.js';

export { GRPC_COMPRESS_MIN_BYTES, isGrpcRequest, type GrpcCallSettings, type GrpcGuard, type GrpcGuardContext } from './call-settings.js';

/** Serve one gRPC call on `stream`; never throws (every failure becomes a status). `charge`: the work limits' (lib/grpc/work.ts). */
export function handleGrpcCall(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, router: GrpcRouter, settings: GrpcCallSettings, charge?: GrpcCharge): ServerCall {
  const path = String(headers[h2.HTTP2_HEADER_PATH] ?? '');
  const span = settings.tracing?.start(path, headers, stream);
  const call = new ServerCall(stream, headers, settings, span, charge);
  const run = () => void call.run(router).catch((err: unknown) => call.fail(err, path));
  if (span) span.run(run);
  else run();
  return call;
}
