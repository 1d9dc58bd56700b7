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
 * a media type worth compressing (record options: anything but gRPC, images other than SVG and
 * `text/event-stream`, as the reference; compression-package options: keel's list of compressible
 * types; never `text/event-stream`, whose events must reach the client as they are written), a known
 * size of at least `min_size` (or an unknown, streamed size), and a coding the client accepts
 * (negotiate.ts). Every response that could be compressed carries
 * `Vary: Accept-Encoding` (RFC 9110 §12.5.5), compressed or not, so caches keep the variants apart.
 */
import type { ServerResponse } from 'node:http';
import zlib from 'node:zlib';
import { CompressionConfig, DEFAULT_COMPRESSION_MIN_SIZE, DEFAULT_COMPRESSION_QUALITY } from '../../lib/records/server.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';
import { BoundedMemo } from './memo.js';
import { checkExtensions, COMPRESSION_MEMO_KEY_LENGTH, COMPRESSION_MEMO_SIZE, DEFAULT_COMPRESSION_SYNC_THRESHOLD, type CompressionExtensions } from './extensions.js';
import { negotiateEncoding, type Coding } from './negotiate.js';
import { compressResponse, type CompressionSettings } from './response.js';
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
/** Largest effective `min_size`: the reference clamps it to u16::MAX (`SizeAbove`, server/mod.rs). */
export const MAX_EFFECTIVE_MIN_SIZE = 65535;

/**
 * CompressionConfig input, snake_case or camelCase: `gzip` (default {@link DEFAULT_COMPRESSION_GZIP}),
 * `brotli` (default {@link DEFAULT_COMPRESSION_BROTLI}), `min_size` bytes (default
 * {@link DEFAULT_COMPRESSION_MIN_SIZE}, 1024), `quality` 0-11 (default {@link DEFAULT_COMPRESSION_QUALITY}, 6).
 */
export type { CompressionConfigInput } from '../../lib/records/server.js';
import type { CompressionConfigInput } from '../../lib/records/server.js';

/** `text/*` except event streams, JSON/XML/YAML and their `+suffix` types, JavaScript, SVG, wasm, fonts. */
const COMPRESSIBLE = /^(?:text\/(?!event-stream$)[^;]+|application\/(?:json|javascript|ecmascript|xml|x-ndjson|ndjson|yaml|x-yaml|graphql|wasm|x-www-form-urlencoded|vnd\.ms-fontobject)|[a-z]+\/[^;]+\+(?:json|xml|yaml)|font\/(?:ttf|otf)|image\/(?:x-icon|vnd\.microsoft\.icon|bmp))$/;

/** True for media types worth compressing (already-compressed images, video, archives are not). */
export function isCompressible(contentType: unknown): boolean {
  if (typeof contentType !== 'string') return false;
  return COMPRESSIBLE.test(contentType.split(';', 1)[0]!.trim().toLowerCase());
}

/**
 * The record's rule (the reference: tower-http's `NotForContentType` GRPC, IMAGES and SSE predicates in
 * spikard-http `server/mod.rs`): every media type except `application/grpc*`, `image/*` other than
 * `image/svg+xml`, and `text/event-stream`; a response without a Content-Type is compressed too.
 * Options in the compression package's style keep {@link isCompressible} (migrating-from-express.md).
 */
export function isCompressibleByRecord(contentType: unknown): boolean {
  if (contentType === undefined) return true;
  if (typeof contentType !== 'string') return false;
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  if (type === 'image/svg+xml') return true;
  return !(type.startsWith('application/grpc') || type.startsWith('image/') || type === 'text/event-stream');
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
export function compression(options: CompressionConfigInput | CompressionPackageOptions | null = {}, extensions: CompressionExtensions = {}): Middleware {
  // `compression(null)` is the package's call with its defaults (it reads `options || {}`).
  const familiar: TranslatedCompression | undefined = options === null
    ? fromCompressionPackage({})
    : typeof options === 'object' && isPackageStyle(options)
      ? fromCompressionPackage(options as Record<string, unknown>)
      : undefined;
  const c = CompressionConfig.parse(familiar ? familiar.record : options, 'CompressionConfig');
  // The compression package's own choices: its brotli quality (4 unless given) and a filter function.
  const brotliQuality = familiar?.brotliQuality ?? c.quality;
  const filter = familiar?.filter;
  checkExtensions(extensions);
  const offered: Coding[] = [...(c.brotli ? (['br'] as const) : []), ...(c.gzip ? (['gzip'] as const) : [])];
  // `enabled: false` (the reference's records carry it) or no coding left: compress nothing.
  if (!c.enabled || offered.length === 0) {
    return function compressionDisabled(_req: KeelRequest, _res: ServerResponse, next: NextFunction): void {
      next();
    };
  }
  const gzipOptions: zlib.ZlibOptions = { level: Math.min(c.quality, MAX_GZIP_LEVEL) };
  const minSize = Math.min(c.min_size, MAX_EFFECTIVE_MIN_SIZE);
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
  // enforceEncoding (package options): a request with no Accept-Encoding accepts any coding (RFC 9110 §12.5.3).
  const enforced = familiar?.enforce !== undefined && offered.includes(familiar.enforce) ? familiar.enforce : null;
  const negotiate = (header: string | string[] | undefined): Coding | null =>
    typeof header === 'string' ? negotiated.get(header, negotiateOne) : header === undefined ? enforced : negotiateEncoding(header, offered);
  const compressibleTypes = new BoundedMemo<boolean>(COMPRESSION_MEMO_SIZE, COMPRESSION_MEMO_KEY_LENGTH);
  const rule = familiar ? isCompressible : isCompressibleByRecord;
  const compressible = (contentType: unknown): boolean =>
    typeof contentType === 'string' ? compressibleTypes.get(contentType, rule) : rule(contentType);

  const settings: CompressionSettings = Object.freeze({ minSize, syncThreshold, filter, compressible, negotiate, createStream, compressOnce, compressSync });

  return function compression(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    compressResponse(req, res, settings);
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
