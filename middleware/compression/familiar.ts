/**
 * The `compression` package's options for keel's compression, translated once at factory time into
 * a CompressionConfig record (plus the package's brotli quality and an optional filter).
 */
import type { ServerResponse } from 'node:http';
import zlib from 'node:zlib';
import bytes from 'bytes';
import { fail } from '../../lib/records/define.js';
import type { KeelRequest } from '../../lib/http/request.js';
import { isPackageStyle as packageStyle } from '../../lib/http/package-style.js';
import type { Coding } from './negotiate.js';

/** The compression package's default threshold: 1 kb. */
export const PACKAGE_DEFAULT_THRESHOLD = 1024;
/** zlib's default level (what `level: -1`, the package's default, means). */
export const ZLIB_DEFAULT_LEVEL = 6;
/** The compression package's default brotli quality (1.8): 4. */
export const PACKAGE_DEFAULT_BROTLI_QUALITY = 4;

/** The `compression` package options keel accepts (compression 1.8 names and meanings). */
export interface CompressionPackageOptions {
  /** Smallest body compressed: bytes, or a string such as '1kb'. Default 1kb. */
  threshold?: number | string;
  /** gzip level, -1 (zlib's default, 6) to 9. */
  level?: number;
  /** Compress this response? Default: a compressible Content-Type (`compression.filter`). */
  filter?: (req: any, res: any) => boolean;
  /**
   * The coding used when the request has no Accept-Encoding at all (RFC 9110 §12.5.3: then any coding
   * is acceptable): `gzip` or `br`; anything else (`identity`, `deflate`, `*`, unknown) compresses nothing.
   * An empty Accept-Encoding is not absent: it asks for no coding, and gets none. Default `identity`.
   */
  enforceEncoding?: string;
  /** Brotli options; only `params[BROTLI_PARAM_QUALITY]` (0-11). Default quality 4. */
  brotli?: { params?: Record<number, number> };
}

export const PACKAGE_KEYS: readonly string[] = ['threshold', 'level', 'filter', 'enforceEncoding'];
/** The compression package's default enforceEncoding: identity (nothing forced). */
export const PACKAGE_DEFAULT_ENFORCE_ENCODING = 'identity';
const RECORD_KEYS = ['gzip', 'min_size', 'minSize', 'quality'];

/** compression-package options keel cannot honour, with what to use instead. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  chunkSize: 'keel sizes zlib buffers itself',
  memLevel: 'keel uses zlib defaults besides the level: use level',
  strategy: 'keel uses zlib defaults besides the level: use level',
  windowBits: 'keel uses zlib defaults besides the level: use level',
};

export interface TranslatedCompression {
  record: { gzip: true; brotli: true; min_size: number; quality: number };
  brotliQuality: number;
  filter?: (req: KeelRequest, res: ServerResponse) => boolean;
  /** The coding for a request without Accept-Encoding (enforceEncoding), when keel has it. */
  enforce?: Coding;
}

const WHERE = 'compression(compression package options)';

/** True when `options` uses the compression package's keys (or a `brotli` options object); both styles is a ConfigError. */
export function isPackageStyle(options: object): boolean {
  const o = options as Record<string, unknown>;
  return packageStyle(
    options,
    (k, v) => PACKAGE_KEYS.includes(k) || k in UNSUPPORTED || (k === 'brotli' && typeof v === 'object'),
    (k, v) => RECORD_KEYS.includes(k) || (k === 'brotli' && typeof v === 'boolean'),
    (pkg, keel) => fail('CompressionConfig', 'compression(options)', keel, o[keel], `keel's CompressionConfig keys or the compression package's (${pkg.join(', ')}), not both`,
      `${pkg[0]} is the compression package's, ${keel} is keel's: write the whole call in one style.`),
  );
}

/** Translate compression-package options; a ConfigError names any option keel cannot honour. */
export function fromCompressionPackage(options: Record<string, unknown>): TranslatedCompression {
  const bad = (key: string, expected: string, fix?: string): never => fail('CompressionConfig', WHERE, key, options[key], expected, fix);
  for (const key of Object.keys(options)) {
    if (options[key] === undefined) continue;
    if (key in UNSUPPORTED) bad(key, 'an option keel supports', `${key} is not supported: ${UNSUPPORTED[key]}.`);
    if (!PACKAGE_KEYS.includes(key) && key !== 'brotli') bad(key, `one of the compression package options keel accepts (${[...PACKAGE_KEYS, 'brotli'].join(', ')})`);
  }
  let threshold = PACKAGE_DEFAULT_THRESHOLD;
  if (options.threshold !== undefined) {
    const parsed = typeof options.threshold === 'number' || typeof options.threshold === 'string' ? bytes.parse(options.threshold) : null;
    if (parsed === null || !Number.isFinite(parsed) || parsed < 0) bad('threshold', "a size in bytes or a string such as '1kb'");
    threshold = Math.floor(parsed!);
  }
  const level = options.level ?? -1;
  if (!Number.isInteger(level) || (level as number) < -1 || (level as number) > 9) bad('level', 'an integer from -1 (zlib default) to 9');
  let brotliQuality = PACKAGE_DEFAULT_BROTLI_QUALITY;
  if (options.brotli !== undefined) {
    const b = options.brotli as { params?: Record<string, unknown> };
    const extra = Object.keys(b).filter((k) => k !== 'params');
    const params = b.params ?? {};
    const other = Object.keys(params).filter((k) => Number(k) !== zlib.constants.BROTLI_PARAM_QUALITY);
    if (extra.length || other.length) bad('brotli', 'only { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 0-11 } }', 'keel sets the other brotli parameters itself.');
    const q = params[zlib.constants.BROTLI_PARAM_QUALITY];
    if (q !== undefined) {
      if (!Number.isInteger(q) || (q as number) < 0 || (q as number) > 11) bad('brotli', 'a brotli quality from 0 to 11');
      brotliQuality = q as number;
    }
  }
  if (options.filter !== undefined && typeof options.filter !== 'function') bad('filter', 'a function (req, res) => boolean');
  const enforce = options.enforceEncoding ?? PACKAGE_DEFAULT_ENFORCE_ENCODING;
  if (typeof enforce !== 'string') bad('enforceEncoding', "a coding name such as 'gzip'");
  // The package ignores a coding it does not know (and `identity`); keel has no deflate (see docs).
  return {
    record: { gzip: true, brotli: true, min_size: threshold, quality: level === -1 ? ZLIB_DEFAULT_LEVEL : (level as number) },
    brotliQuality,
    ...(options.filter ? { filter: options.filter as TranslatedCompression['filter'] } : {}),
    ...(enforce === 'gzip' || enforce === 'br' ? { enforce: enforce as Coding } : {}),
  };
}
