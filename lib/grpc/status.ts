/**
 * gRPC status codes and the error a handler throws to end a call with one.
 *
 * The codes are the ones of https://github.com/grpc/grpc/blob/master/doc/statuscodes.md; they travel in
 * the `grpc-status` trailer with a percent-encoded `grpc-message` (gRPC over HTTP/2, "Responses").
 */
import { HttpError } from '../http/errors.js';

/** gRPC status codes (same numbers as `@grpc/grpc-js`'s `status`). */
export const GrpcStatus = Object.freeze({
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
});
export type GrpcStatusName = keyof typeof GrpcStatus;
export type GrpcStatusCode = (typeof GrpcStatus)[GrpcStatusName];

/** `GrpcStatus` name of a code (`5` → `NOT_FOUND`). */
export function grpcStatusName(code: number): GrpcStatusName | undefined {
  return (Object.keys(GrpcStatus) as GrpcStatusName[]).find((k) => GrpcStatus[k] === code);
}

/** Metadata values: strings, or Buffers for `-bin` keys (sent base64-encoded). */
export type GrpcMetadataValue = string | Buffer | readonly (string | Buffer)[];
export type GrpcMetadataInit = Readonly<Record<string, GrpcMetadataValue>>;

/** A final status: what ends every call. */
export interface GrpcStatusObject {
  code: number;
  message: string;
  /** Extra trailing metadata sent beside `grpc-status`. */
  metadata?: GrpcMetadataInit;
  /**
   * When the client may retry, ms: the `grpc-retry-pushback-ms` trailer (gRFC A6 "Pushback"; a
   * reserved `grpc-` key, so not settable through `metadata`). Set from a rate limit's Retry-After.
   */
  retryPushbackMs?: number;
}

/**
 * Throw from a handler to end the call with `code` and `message`; both reach the client as they are,
 * so never put internals in `message`.
 *
 * @example
 * throw new GrpcError(GrpcStatus.NOT_FOUND, `no user ${req.id}`, { 'x-lookup': 'users' });
 */
export class GrpcError extends Error {
  readonly code: number;
  readonly metadata: GrpcMetadataInit;
  /** See GrpcStatusObject.retryPushbackMs. */
  readonly retryPushbackMs: number | undefined;
  constructor(code: number, message: string, metadata: GrpcMetadataInit = {}, options: { retryPushbackMs?: number } = {}) {
    super(message);
    this.name = 'GrpcError';
    this.code = code;
    this.metadata = metadata;
    this.retryPushbackMs = options.retryPushbackMs;
  }
}

/**
 * The message used for errors that are not GrpcErrors: nothing internal reaches the client
 * (grpc-js servers send the raw `Error.message`; keel does not).
 */
export const UNKNOWN_ERROR_MESSAGE = 'Unknown error';

/**
 * The HTTP → gRPC mapping of https://github.com/grpc/grpc/blob/master/doc/http-grpc-status-mapping.md,
 * with 400/413/422 given their closer gRPC meaning for errors raised inside keel (not by a proxy).
 */
export function grpcCodeForHttpStatus(status: number): number {
  switch (status) {
    case 400: case 422: return GrpcStatus.INVALID_ARGUMENT;
    case 401: return GrpcStatus.UNAUTHENTICATED;
    case 403: return GrpcStatus.PERMISSION_DENIED;
    case 404: return GrpcStatus.NOT_FOUND;
    case 408: return GrpcStatus.DEADLINE_EXCEEDED;
    case 413: case 429: return GrpcStatus.RESOURCE_EXHAUSTED;
    case 501: return GrpcStatus.UNIMPLEMENTED;
    case 502: case 503: case 504: return GrpcStatus.UNAVAILABLE;
    default: return GrpcStatus.UNKNOWN;
  }
}

/**
 * Map whatever a handler threw to a status. GrpcError and grpc-js style errors (`{ code: 0..16, details }`)
 * keep their code and message; keel's HttpError keeps its (client-safe) detail under the mapped code;
 * anything else becomes UNKNOWN without its message.
 */
export function statusFromError(err: unknown): GrpcStatusObject {
  if (err instanceof GrpcError) {
    const status: GrpcStatusObject = { code: err.code, message: err.message, metadata: err.metadata };
    if (err.retryPushbackMs !== undefined) status.retryPushbackMs = err.retryPushbackMs;
    return status;
  }
  if (err instanceof HttpError) {
    const code = grpcCodeForHttpStatus(err.status);
    return { code, message: err.status < 500 ? err.detail ?? err.title : UNKNOWN_ERROR_MESSAGE };
  }
  const e = err as { code?: unknown; details?: unknown; message?: unknown } | null;
  if (e && typeof e.code === 'number' && Number.isInteger(e.code) && e.code > 0 && e.code <= 16) {
    const message = typeof e.details === 'string' ? e.details : typeof e.message === 'string' ? e.message : '';
    return { code: e.code, message };
  }
  return { code: GrpcStatus.UNKNOWN, message: UNKNOWN_ERROR_MESSAGE };
}

/**
 * Percent-encode a status message (gRPC over HTTP/2: "Status-Message"): bytes outside 0x20-0x7E and
 * `%` itself are sent as %XX of their UTF-8 encoding.
 */
export function encodeGrpcMessage(message: string): string {
  let out = '';
  for (const byte of Buffer.from(message, 'utf8')) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Inverse of encodeGrpcMessage; malformed escapes are kept as they are (the spec asks receivers not to fail). */
export function decodeGrpcMessage(wire: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < wire.length; i++) {
    const hex = wire.slice(i + 1, i + 3);
    if (wire[i] === '%' && /^[0-9a-fA-F]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(wire[i]!, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}
