/**
 * gRPC's Length-Prefixed-Message framing (gRPC over HTTP/2, "Requests"): a 1-byte compressed flag, a
 * 4-byte big-endian length, then the message. HTTP/2 DATA frames and messages do not line up, so the
 * decoder is incremental.
 */
import { promisify } from 'node:util';
import { gzip, gunzip, deflate, inflate } from 'node:zlib';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);
const deflateAsync = promisify(deflate);
const inflateAsync = promisify(inflate);

/** Size of the prefix before every message. */
export const FRAME_HEADER_BYTES = 5;

/** Message encodings keel reads and writes besides `identity` (`grpc-encoding` values). */
export const GRPC_ENCODINGS = ['gzip', 'deflate'] as const;
export type GrpcEncoding = (typeof GRPC_ENCODINGS)[number];

export function isGrpcEncoding(v: string): v is GrpcEncoding {
  return (GRPC_ENCODINGS as readonly string[]).includes(v);
}

/** One message as it came off the wire. */
export interface RawMessage {
  compressed: boolean;
  data: Buffer;
}

/** A message (or a decompressed message) larger than the cap. */
export class MessageTooLargeError extends Error {
  readonly size: number;
  readonly limit: number;
  constructor(size: number, limit: number) {
    super(`Message of ${size} bytes exceeds the limit of ${limit} bytes`);
    this.size = size;
    this.limit = limit;
  }
}

/**
 * Splits a byte stream into messages. A message whose declared length is over `maxMessageSize` is
 * rejected from its 5-byte header alone, before its bytes are buffered.
 */
export class MessageDecoder {
  private readonly max: number;
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  constructor(maxMessageSize: number) {
    this.max = maxMessageSize;
  }

  /** Feed a chunk; returns the messages it completed. Throws MessageTooLargeError. */
  push(chunk: Buffer): RawMessage[] {
    this.buffered.push(chunk);
    this.bufferedBytes += chunk.length;
    const out: RawMessage[] = [];
    for (;;) {
      if (this.bufferedBytes < FRAME_HEADER_BYTES) break;
      const head = this.peek(FRAME_HEADER_BYTES);
      const length = head.readUInt32BE(1);
      if (length > this.max) throw new MessageTooLargeError(length, this.max);
      if (this.bufferedBytes < FRAME_HEADER_BYTES + length) break;
      const frame = this.take(FRAME_HEADER_BYTES + length);
      out.push({ compressed: frame[0] === 1, data: frame.subarray(FRAME_HEADER_BYTES) });
    }
    return out;
  }

  /** True when a message was started but not finished (the client ended the stream mid-message). */
  get partial(): boolean {
    return this.bufferedBytes > 0;
  }

  private peek(n: number): Buffer {
    if (this.buffered[0]!.length < n) this.buffered = [Buffer.concat(this.buffered)];
    return this.buffered[0]!.subarray(0, n);
  }

  private take(n: number): Buffer {
    const all = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered);
    const frame = all.subarray(0, n);
    const rest = all.subarray(n);
    this.buffered = rest.length ? [rest] : [];
    this.bufferedBytes = rest.length;
    return frame;
  }
}

/** Prefix an (already compressed, when `compressed`) message. */
export function frameMessage(data: Buffer, compressed: boolean): Buffer {
  const head = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  head[0] = compressed ? 1 : 0;
  head.writeUInt32BE(data.length, 1);
  return Buffer.concat([head, data]);
}

export async function compressMessage(encoding: GrpcEncoding, data: Buffer): Promise<Buffer> {
  return encoding === 'gzip' ? gzipAsync(data) : deflateAsync(data);
}

/**
 * Decompress under the cap: zlib stops at `maxMessageSize + 1` output bytes, so a small compressed
 * message cannot inflate into a huge buffer (a "zip bomb").
 */
export async function decompressMessage(encoding: GrpcEncoding, data: Buffer, maxMessageSize: number): Promise<Buffer> {
  try {
    const options = { maxOutputLength: maxMessageSize + 1 };
    const out = encoding === 'gzip' ? await gunzipAsync(data, options) : await inflateAsync(data, options);
    if (out.length > maxMessageSize) throw new MessageTooLargeError(out.length, maxMessageSize);
    return out;
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new MessageTooLargeError(maxMessageSize + 1, maxMessageSize);
    throw err;
  }
}

const TIMEOUT_UNITS_MS: Readonly<Record<string, number>> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };

/**
 * Parse `grpc-timeout` ("TimeoutValue TimeoutUnit": at most 8 digits and one of H M S m u n) into
 * milliseconds; undefined when absent or malformed (a malformed header is ignored, as grpc-js does).
 */
export function parseGrpcTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d{1,8})([HMSmun])$/.exec(value);
  if (!m) return undefined;
  return Number(m[1]) * TIMEOUT_UNITS_MS[m[2]!]!;
}
