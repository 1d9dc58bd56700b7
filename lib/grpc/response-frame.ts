/**
 * One gRPC response message, from the handler's object to the frame written on the stream
 * (lib/grpc/server-call.ts): encoded, capped at max_message_size, compressed, framed.
 */
import { performance } from 'node:perf_hooks';
import { GrpcError, GrpcStatus } from './status.js';
import { compressMessage, frameMessage, type GrpcEncoding } from './framing.js';
import type { GrpcMethod } from './router.js';
import type { GrpcCharge } from './work.js';
import { GRPC_COMPRESS_MIN_BYTES } from './call-settings.js';

/**
 * `message` encoded with `method`'s response type (the encoding charged to the client's CPU budget when
 * `charge` is given), then compressed with `encoding` from GRPC_COMPRESS_MIN_BYTES on, and framed (gRPC's
 * 5-byte prefix). Throws a GrpcError: INTERNAL when it cannot be encoded, RESOURCE_EXHAUSTED over `maxMessageSize`.
 */
export async function responseFrame(method: GrpcMethod, message: unknown, maxMessageSize: number, encoding: GrpcEncoding | undefined, charge?: GrpcCharge): Promise<Buffer> {
  let data: Buffer;
  const t0 = charge ? performance.now() : 0;
  try {
    data = method.encode(message ?? {});
  } catch {
    throw new GrpcError(GrpcStatus.INTERNAL, 'Response message could not be encoded');
  } finally {
    charge?.(performance.now() - t0);
  }
  // Never a truncated write: an oversize message fails the call instead (spec: max_message_size, both directions).
  if (data.length > maxMessageSize) {
    throw new GrpcError(GrpcStatus.RESOURCE_EXHAUSTED, `Response message of ${data.length} bytes exceeds max_message_size (${maxMessageSize})`);
  }
  let compressed = false;
  if (encoding && data.length >= GRPC_COMPRESS_MIN_BYTES) {
    data = await compressMessage(encoding, data);
    compressed = true;
  }
  return frameMessage(data, compressed);
}
