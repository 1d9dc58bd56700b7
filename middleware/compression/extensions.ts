/**
 * The compression factory's second argument (keel extensions outside the CompressionConfig record)
 * and the defaults behind them.
 */
import { availableParallelism } from 'node:os';
import { fail } from '../../lib/records/define.js';

/** Bounds of the default {@link DEFAULT_COMPRESSION_SYNC_THRESHOLD}, bytes. */
export const MIN_SYNC_THRESHOLD = 4096;
export const MAX_SYNC_THRESHOLD = 65536;
/** libuv's thread pool has 4 threads by default: more cores than that do not speed up async zlib. */
const MAX_USEFUL_PARALLELISM = 4;

/**
 * The largest whole body compressed synchronously on the event loop, for a host with `parallelism`
 * usable cores. Async zlib runs on the libuv thread pool: it only pays off when a spare core can
 * overlap that work with the event loop, and it costs a thread hand-off, a stream and its buffers
 * per response (measured: about 1.7× the CPU time of the synchronous call for a 16 KB JSON body).
 * So: 64 KiB on one core, divided by 8 for every further core, never below 4 KiB. This is the rule
 * (and the measurement behind it) of @fastify/compress's `computeSyncThreshold()`, so keel and
 * Fastify make the same trade on the same host. `availableParallelism()` honours CPU affinity
 * (taskset, cpusets).
 */
export function syncThresholdFor(parallelism: number): number {
  const cores = Math.min(Math.max(1, parallelism), MAX_USEFUL_PARALLELISM);
  return Math.min(Math.max(MAX_SYNC_THRESHOLD >> (3 * (cores - 1)), MIN_SYNC_THRESHOLD), MAX_SYNC_THRESHOLD);
}

/** This host's default sync threshold ({@link syncThresholdFor} of `os.availableParallelism()`). */
export const DEFAULT_COMPRESSION_SYNC_THRESHOLD = syncThresholdFor(availableParallelism());

/** Distinct Accept-Encoding / Content-Type values whose answers are remembered per middleware. */
export const COMPRESSION_MEMO_SIZE = 256;
/** Longer header values are answered afresh each time (real ones are far shorter: `gzip, deflate, br, zstd`). */
export const COMPRESSION_MEMO_KEY_LENGTH = 256;

/** keel extensions, not part of the CompressionConfig record; the factory's second argument. */
export interface CompressionExtensions {
  /**
   * A whole body given to `res.end()` of at most this many bytes is compressed synchronously on the
   * event loop; bigger bodies, and bodies written in pieces, go through zlib on the thread pool.
   * 0 turns the synchronous path off. Default {@link DEFAULT_COMPRESSION_SYNC_THRESHOLD}.
   */
  syncThreshold?: number;
}

export function checkExtensions(ext: CompressionExtensions): void {
  const bad = (key: string, value: unknown, expected: string): never => fail('CompressionConfig', 'compression(options, extensions)', key, value, expected);
  if (typeof ext !== 'object' || ext === null) bad('', ext, 'an object');
  for (const k of Object.keys(ext)) if (k !== 'syncThreshold') bad(k, ext[k as keyof CompressionExtensions], 'the extension syncThreshold');
  const t = ext.syncThreshold;
  if (t !== undefined && !(Number.isSafeInteger(t) && t >= 0)) bad('syncThreshold', t, 'an integer ≥ 0 (bytes)');
}
