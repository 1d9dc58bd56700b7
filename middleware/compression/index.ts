/**
 * Response compression (gzip, brotli) from a CompressionConfig record, on node:zlib.
 *
 * Why not the `compression` package: it cannot switch gzip or brotli off individually (the record's
 * `gzip`/`brotli` flags), it also answers `deflate`, and with a `min_size` of 0 it labels empty 204/304
 * responses as compressed. The response plumbing below follows its design (intercept writeHead, route
 * writes through a zlib stream, keep back-pressure).
 *
 * A response is compressed only when all hold: a status with content (not 1xx, 204, 304), not HEAD,
 * no Content-Encoding yet (never encode twice), no `Cache-Control: no-transform` (RFC 9111 §5.2.2.6),
 * a compressible media type that is not `text/event-stream` (events must reach the client as they
 * are written), a known size of at least `min_size` (or an unknown, streamed size), and a coding the
 * client accepts (negotiate.ts). Every response that could be compressed carries
 * `Vary: Accept-Encoding` (RFC 9110 §12.5.5), compressed or not, so caches keep the variants apart.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import zlib from 'node:zlib';
import { CompressionConfig, DEFAULT_COMPRESSION_MIN_SIZE, DEFAULT_COMPRESSION_QUALITY } from '../../lib/records/server.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/request.js';
import { BoundedMemo } from './memo.js';
import { checkExtensions, COMPRESSION_MEMO_KEY_LENGTH, COMPRESSION_MEMO_SIZE, DEFAULT_COMPRESSION_SYNC_THRESHOLD, type CompressionExtensions } from './extensions.js';
import { negotiateEncoding, type Coding } from './negotiate.js';
import { fromCompressionPackage, isPackageStyle, type CompressionPackageOptions, type TranslatedCompression } from './familiar.js';

export { DEFAULT_COMPRESSION_MIN_SIZE, DEFAULT_COMPRESSION_QUALITY };
export { negotiateEncoding, parseAcceptEncoding, type Coding } from './negotiate.js';
export { PACKAGE_DEFAULT_BROTLI_QUALITY, PACKAGE_DEFAULT_THRESHOLD, type CompressionPackageOptions } from './familiar.js';
export { COMPRESSION_MEMO_KEY_LENGTH, COMPRESSION_MEMO_SIZE, DEFAULT_COMPRESSION_SYNC_THRESHOLD, MAX_SYNC_THRESHOLD, MIN_SYNC_THRESHOLD, syncThresholdFor, type CompressionExtensions } from './extensions.js';

/** gzip is on: true. */
export const DEFAULT_COMPRESSION_GZIP = true;
/** brotli is on: true. */
export const DEFAULT_COMPRESSION_BROTLI = true;
/** Highest zlib level; gzip uses min(quality, 9). */
export const MAX_GZIP_LEVEL = 9;

type CompressionFields = { gzip: boolean; brotli: boolean; min_size: number; quality: number };
/**
 * CompressionConfig input, snake_case or camelCase: `gzip` (default {@link DEFAULT_COMPRESSION_GZIP}),
 * `brotli` (default {@link DEFAULT_COMPRESSION_BROTLI}), `min_size` bytes (default
 * {@link DEFAULT_COMPRESSION_MIN_SIZE}, 1024), `quality` 0-11 (default {@link DEFAULT_COMPRESSION_QUALITY}, 6).
 */
export type CompressionConfigInput = Partial<CompressionFields> | { gzip?: boolean; brotli?: boolean; minSize?: number; quality?: number };

/** `text/*` except event streams, JSON/XML/YAML and their `+suffix` types, JavaScript, SVG, wasm, fonts. */
const COMPRESSIBLE = /^(?:text\/(?!event-stream$)[^;]+|application\/(?:json|javascript|ecmascript|xml|x-ndjson|ndjson|yaml|x-yaml|graphql|wasm|x-www-form-urlencoded|vnd\.ms-fontobject)|[a-z]+\/[^;]+\+(?:json|xml|yaml)|font\/(?:ttf|otf)|image\/(?:x-icon|vnd\.microsoft\.icon|bmp))$/;

/** True for media types worth compressing (already-compressed images, video, archives are not). */
export function isCompressible(contentType: unknown): boolean {
  if (typeof contentType !== 'string') return false;
  return COMPRESSIBLE.test(contentType.split(';', 1)[0]!.trim().toLowerCase());
}

/** Append `Accept-Encoding` to Vary unless it is there already or Vary is `*`. */
function addVary(res: ServerResponse): void {
  const current = res.getHeader('Vary');
  if (current === undefined) {
    res.setHeader('Vary', 'Accept-Encoding');
    return;
  }
  const value = Array.isArray(current) ? current.join(', ') : current === undefined ? '' : String(current);
  const tokens = value.split(',').map((s) => s.trim().toLowerCase());
  if (tokens.includes('*') || tokens.includes('accept-encoding')) return;
  res.setHeader('Vary', value.trim() ? `${value}, Accept-Encoding` : 'Accept-Encoding');
}

const NO_TRANSFORM = /(?:^|,)\s*no-transform\s*(?:,|$)/i;

/** Apply headers passed to writeHead() with setHeader, so the decision sees them. */
function applyHeaderArgument(res: ServerResponse, headers: unknown): void {
  if (Array.isArray(headers)) {
    // Flat raw form [name, value, name, value] or [[name, value], ...].
    const pairs: unknown[][] = Array.isArray(headers[0]) ? (headers as unknown[][]) : [];
    if (!pairs.length) for (let i = 0; i + 1 < headers.length; i += 2) pairs.push([headers[i], headers[i + 1]]);
    for (const [k, v] of pairs) res.setHeader(String(k), v as string);
  } else if (headers && typeof headers === 'object') {
    for (const [k, v] of Object.entries(headers as OutgoingHttpHeaders)) if (v !== undefined) res.setHeader(k, v);
  }
}

type Chunk = string | Buffer | Uint8Array;
type Callback = (err?: Error | null) => void;

function toBuffer(chunk: Chunk, encoding?: BufferEncoding): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : typeof chunk === 'string' ? Buffer.from(chunk, encoding) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/**
 * Compress responses with brotli or gzip, as the client accepts and the record allows.
 *
 * @example
 * import express from 'express';
 * import { compression } from 'keel/middleware/compression';
 *
 * const app = express();
 * app.use(compression({ brotli: true, gzip: true, min_size: 1024, quality: 5 }));
 * app.get('/big', (_req, res) => res.json({ items: Array.from({ length: 1000 }, (_, i) => ({ i })) }));
 * app.listen(8000);
 */
export function compression(options: CompressionConfigInput | CompressionPackageOptions = {}, extensions: CompressionExtensions = {}): Middleware {
  const familiar: TranslatedCompression | undefined = typeof options === 'object' && options !== null && isPackageStyle(options)
    ? fromCompressionPackage(options as Record<string, unknown>)
    : undefined;
  const c = CompressionConfig.parse(familiar ? familiar.record : options, 'CompressionConfig');
  // The compression package's own choices: its brotli quality (4 unless given) and a filter function.
  const brotliQuality = familiar?.brotliQuality ?? c.quality;
  const filter = familiar?.filter;
  checkExtensions(extensions);
  const offered: Coding[] = [...(c.brotli ? (['br'] as const) : []), ...(c.gzip ? (['gzip'] as const) : [])];
  if (offered.length === 0) {
    return function compressionDisabled(_req: KeelRequest, _res: ServerResponse, next: NextFunction): void {
      next();
    };
  }
  const gzipOptions: zlib.ZlibOptions = { level: Math.min(c.quality, MAX_GZIP_LEVEL) };
  const minSize = c.min_size;
  const syncThreshold = extensions.syncThreshold ?? DEFAULT_COMPRESSION_SYNC_THRESHOLD;
  const brotliOptions = (size: number | undefined): zlib.BrotliOptions => ({
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: brotliQuality,
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
      ...(size !== undefined ? { [zlib.constants.BROTLI_PARAM_SIZE_HINT]: size } : {}),
    },
  });
  const createStream = (coding: Coding, size: number | undefined): zlib.Gzip | zlib.BrotliCompress =>
    coding === 'gzip' ? zlib.createGzip(gzipOptions) : zlib.createBrotliCompress(brotliOptions(size));
  /** A whole body in one call: no stream, no chunked framing, and an exact Content-Length. */
  const compressOnce = (coding: Coding, body: Buffer, cb: (err: Error | null, out: Buffer) => void): void => {
    if (coding === 'gzip') zlib.gzip(body, gzipOptions, cb);
    else zlib.brotliCompress(body, brotliOptions(body.length), cb);
  };
  const compressSync = (coding: Coding, body: Buffer): Buffer =>
    coding === 'gzip' ? zlib.gzipSync(body, gzipOptions) : zlib.brotliCompressSync(body, brotliOptions(body.length));
  // Clients send a handful of distinct header values: parse each once (bounded, see BoundedMemo).
  const negotiated = new BoundedMemo<Coding | null>(COMPRESSION_MEMO_SIZE, COMPRESSION_MEMO_KEY_LENGTH);
  const negotiateOne = (header: string): Coding | null => negotiateEncoding(header, offered);
  const negotiate = (header: string | string[] | undefined): Coding | null =>
    typeof header === 'string' ? negotiated.get(header, negotiateOne) : negotiateEncoding(header, offered);
  const compressibleTypes = new BoundedMemo<boolean>(COMPRESSION_MEMO_SIZE, COMPRESSION_MEMO_KEY_LENGTH);
  const compressible = (contentType: unknown): boolean => typeof contentType === 'string' && compressibleTypes.get(contentType, isCompressible);

  return function compression(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    // node's own methods, typed loosely: we forward whatever argument shape the caller used.
    const origWriteHead = res.writeHead as (this: ServerResponse, statusCode: number, ...rest: unknown[]) => ServerResponse;
    const origWrite = res.write as (this: ServerResponse, chunk: Chunk, encoding?: BufferEncoding, cb?: Callback) => boolean;
    const origEnd = res.end as (this: ServerResponse, chunk?: Chunk | (() => void), encoding?: BufferEncoding, cb?: Callback) => ServerResponse;
    let stream: zlib.Gzip | zlib.BrotliCompress | null = null;
    let decided = false;
    let ended = false;
    /** Body size when the whole body arrives in one res.end(chunk). */
    let endLength: number | undefined;
    let endCallback: (() => void) | undefined;

    /** Which coding this response gets, or null. Adds Vary to every response that could vary. */
    const choose = (status: number, size: number | undefined): Coding | null => {
      if (status < 200 || status === 204) return null;
      if (status === 304) {
        addVary(res);
        return null;
      }
      const encoding = res.getHeader('Content-Encoding');
      if (encoding !== undefined && String(encoding).toLowerCase() !== 'identity') return null;
      const cacheControl = res.getHeader('Cache-Control');
      if (cacheControl !== undefined && NO_TRANSFORM.test(String(cacheControl))) return null;
      if (filter === undefined ? !compressible(res.getHeader('Content-Type')) : !filter(req, res)) return null;
      addVary(res);
      if (req.method === 'HEAD') return null;
      if (size !== undefined && (size === 0 || size < minSize)) return null;
      return negotiate(req.headers['accept-encoding']);
    };
    /** Headers of an encoded representation. */
    const markEncoded = (coding: Coding): void => {
      res.setHeader('Content-Encoding', coding);
      res.removeHeader('Content-Length');
      // A strong validator names one exact representation (RFC 9110 §8.8.1); the encoded bytes differ.
      const etag = res.getHeader('ETag');
      if (typeof etag === 'string' && etag.startsWith('"')) res.setHeader('ETag', `W/${etag}`);
    };
    /** Route the body through a zlib stream (a body written in pieces, or one too big to compress inline). */
    const decide = (status: number): void => {
      const declared = res.getHeader('Content-Length');
      const size = declared !== undefined ? Number(declared) : endLength;
      const coding = choose(status, size);
      if (!coding) return;
      const s = (stream = createStream(coding, size));
      markEncoded(coding);
      s.on('data', (chunk: Buffer) => {
        if (origWrite.call(res, chunk) === false) s.pause();
      });
      s.on('end', () => {
        origEnd.call(res, endCallback);
      });
      s.on('error', (err) => res.destroy(err));
      // Writers wait for 'drain' on res; their bytes queue in the zlib stream, so forward its drain.
      s.on('drain', () => res.emit('drain'));
      // Only a streamed response needs these: listeners cost every response that never streams.
      res.on('drain', () => {
        if (!res.writableNeedDrain) s.resume();
      });
      res.once('close', () => {
        if (!s.destroyed) s.destroy();
      });
    };

    res.writeHead = function writeHead(this: ServerResponse, statusCode: number, ...rest: unknown[]) {
      const reason = typeof rest[0] === 'string' ? rest[0] : undefined;
      const headers = typeof rest[0] === 'string' ? rest[1] : rest[0];
      if (!decided && !this.headersSent) {
        applyHeaderArgument(this, headers);
        decided = true;
        decide(statusCode);
        return reason === undefined ? origWriteHead.call(this, statusCode) : origWriteHead.call(this, statusCode, reason);
      }
      return origWriteHead.call(this, statusCode, ...rest);
    } as typeof res.writeHead;

    res.write = function write(this: ServerResponse, chunk: Chunk, encoding?: BufferEncoding | Callback, cb?: Callback): boolean {
      if (ended) return false;
      if (!decided && !this.headersSent) this.writeHead(this.statusCode);
      const enc = typeof encoding === 'string' ? encoding : undefined;
      const callback = typeof encoding === 'function' ? encoding : cb;
      if (!stream) return origWrite.call(this, chunk, enc, callback);
      return stream.write(toBuffer(chunk, enc), callback);
    } as typeof res.write;

    res.end = function end(this: ServerResponse, chunk?: Chunk | Callback, encoding?: BufferEncoding | Callback, cb?: Callback) {
      if (ended) return this;
      const callback = typeof chunk === 'function' ? chunk : typeof encoding === 'function' ? encoding : cb;
      const data = typeof chunk === 'function' ? undefined : chunk;
      const enc = typeof encoding === 'string' ? encoding : undefined;
      if (!decided && !this.headersSent) {
        const declared = this.getHeader('Content-Length');
        if (declared === undefined) endLength = !data ? 0 : typeof data === 'string' ? Buffer.byteLength(data, enc) : data.byteLength;
        if (data) {
          // The whole body is here (the common case: res.json(), keel's own responses): compress it in
          // one call, no stream. Small bodies inline (see DEFAULT_COMPRESSION_SYNC_THRESHOLD), bigger
          // ones on the thread pool.
          decided = true;
          const size = declared !== undefined ? Number(declared) : endLength!;
          const coding = choose(this.statusCode, size);
          if (!coding) return origEnd.call(this, data, enc, callback);
          ended = true;
          const body = toBuffer(data, enc);
          if (body.length <= syncThreshold) {
            let out: Buffer;
            try {
              out = compressSync(coding, body);
            } catch (err) {
              res.destroy(err as Error);
              return this;
            }
            markEncoded(coding);
            res.setHeader('Content-Length', out.length);
            return origEnd.call(this, out, undefined, callback);
          }
          compressOnce(coding, body, (err, out) => {
            if (err) return void res.destroy(err);
            if (res.destroyed) return;
            markEncoded(coding);
            res.setHeader('Content-Length', out.length);
            origEnd.call(res, out, undefined, callback);
          });
          return this;
        }
        this.writeHead(this.statusCode);
      }
      if (!stream) return origEnd.call(this, data, enc, callback);
      ended = true;
      endCallback = callback as (() => void) | undefined;
      if (data !== undefined && data !== null) stream.end(toBuffer(data, enc));
      else stream.end();
      return this;
    } as typeof res.end;

    /** Push what the compressor holds to the client now (streamed JSON lines, long polls). */
    (res as ServerResponse & { flush?: () => void }).flush = function flush(): void {
      stream?.flush();
    };

    next();
  };
}

/**
 * The default decision as a filter function, for a `filter` option that adds to it, as with the
 * compression package: `filter: (req, res) => !req.headers['x-no-compression'] && compression.filter(req, res)`.
 */
compression.filter = function filter(_req: KeelRequest, res: ServerResponse): boolean {
  return isCompressible(res.getHeader('Content-Type'));
};
