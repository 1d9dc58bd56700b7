/** What every gRPC call (lib/grpc/call.ts) reads: the guard, the per-server settings, and the request checks on headers (content type, accepted encodings). */
import type { IncomingHttpHeaders } from 'node:http2';
import { GRPC_ENCODINGS, type GrpcEncoding } from './framing.js';
import type { GrpcIncomingMetadata } from './router.js';
import type { GrpcTracing } from '../observability/grpc-spans.js';

/** Response messages smaller than this are sent uncompressed even when the client accepts gzip (as compression.min_size). */
export const GRPC_COMPRESS_MIN_BYTES = 1024;

/** What a guard sees: the call's address and its metadata (headers included, for `authorization` / `x-api-key`). */
export interface GrpcGuardContext {
  readonly path: string;
  readonly service: string;
  readonly method: string;
  readonly metadata: GrpcIncomingMetadata;
  readonly headers: IncomingHttpHeaders;
  readonly peer: string | undefined;
}

/**
 * Runs before every handler (server auth). Throw to reject: a GrpcError keeps its code, keel's HttpError
 * maps 401 → UNAUTHENTICATED, 403 → PERMISSION_DENIED, 429 → RESOURCE_EXHAUSTED. What it returns becomes `call.auth`.
 */
export type GrpcGuard = (ctx: GrpcGuardContext) => void | Readonly<Record<string, unknown>> | Promise<void | Readonly<Record<string, unknown>>>;

/** Per-server settings every call reads (precomputed once from GrpcConfig). */
export interface GrpcCallSettings {
  readonly maxMessageSize: number;
  readonly compression: boolean;
  readonly requestTimeoutMs: number | undefined;
  readonly maxStreamResponseBytes: number | null;
  /** Caps on one call's client stream (client-streaming and bidi requests): max_stream_request_bytes / _messages. */
  readonly streamRequestLimits?: { readonly bytes: number | null; readonly messages: number | null };
  readonly requestId: boolean;
  readonly guard: GrpcGuard | undefined;
  /** Services the guard does not run for (default: the health service, so probes need no credentials). */
  readonly publicServices: ReadonlySet<string>;
  readonly isShuttingDown: () => boolean;
  /** Called with errors that are not GrpcErrors (they reach the client as UNKNOWN without their message). */
  readonly onError: ((err: unknown, path: string) => void) | undefined;
  /** A SERVER span per call when the App's spans are on (lib/observability/grpc-spans.ts). */
  readonly tracing?: GrpcTracing;
}

const GRPC_CONTENT_TYPE = /^application\/grpc(\+[a-z0-9.-]+)?\s*(;|$)/i;

/** True for `application/grpc`, `application/grpc+proto`, `application/grpc+json`, … (not grpc-web). */
export function isGrpcRequest(headers: IncomingHttpHeaders): boolean {
  return GRPC_CONTENT_TYPE.test(String(headers['content-type'] ?? ''));
}

export function acceptsEncoding(headers: IncomingHttpHeaders): GrpcEncoding | undefined {
  const accepted = String(headers['grpc-accept-encoding'] ?? '').split(',').map((s) => s.trim());
  return GRPC_ENCODINGS.find((e) => accepted.includes(e));
}
