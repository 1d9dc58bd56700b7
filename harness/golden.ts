/**
 * Golden files for response snapshots: stable JSON (sorted lower-case headers, volatile values
 * replaced by tokens) so a diff in review shows behaviour changes, not clock ticks.
 */
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ResponseSnapshot } from './snapshot.js';

/** Headers whose values change on every response; normalised to `<<volatile>>`. */
export const DEFAULT_VOLATILE_HEADERS: readonly string[] = Object.freeze([
  'date', 'x-request-id', 'etag', 'last-modified', 'x-response-time', 'age', 'expires',
]);

/** Any RFC 9562 UUID (case-insensitive). */
export const UUID_PATTERN = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

export interface NormalizeOptions {
  /** Headers replaced by `<<volatile>>` (default DEFAULT_VOLATILE_HEADERS). */
  volatileHeaders?: readonly string[];
  /** Replace UUIDs in header values and body by `<<uuid>>` (default true). */
  uuids?: boolean;
  /** Extra replacements applied to header values and body text, in order. */
  replace?: ReadonlyArray<readonly [RegExp, string]>;
}

export interface SerializeOptions {
  /** `true` (the defaults), `false` (byte-exact), or explicit options. Default false. */
  normalize?: boolean | NormalizeOptions;
}

function resolveNormalize(n: SerializeOptions['normalize']): Required<NormalizeOptions> | null {
  if (!n) return null;
  const o = n === true ? {} : n;
  return {
    volatileHeaders: (o.volatileHeaders ?? DEFAULT_VOLATILE_HEADERS).map((h) => h.toLowerCase()),
    uuids: o.uuids ?? true,
    replace: o.replace ?? [],
  };
}

function scrub(s: string, n: Required<NormalizeOptions> | null): string {
  if (!n) return s;
  let out = n.uuids ? s.replace(UUID_PATTERN, '<<uuid>>') : s;
  for (const [re, by] of n.replace) out = out.replace(re, by);
  return out;
}

function scrubJson(v: unknown, n: Required<NormalizeOptions> | null): unknown {
  if (typeof v === 'string') return scrub(v, n);
  if (Array.isArray(v)) return v.map((x) => scrubJson(x, n));
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, scrubJson((v as Record<string, unknown>)[k], n)]));
  }
  return v;
}

/**
 * Stable JSON for a snapshot: keys sorted, headers lower-case, the body as parsed JSON, as text
 * (valid UTF-8), or as `{base64}` (binary).
 */
export function serializeSnapshot(snap: ResponseSnapshot, options: SerializeOptions = {}): string {
  const n = resolveNormalize(options.normalize);
  const headers: Record<string, string | string[]> = {};
  for (const name of Object.keys(snap.headers).map((h) => h.toLowerCase()).sort()) {
    const value = snap.headers[name] ?? '';
    if (n?.volatileHeaders.includes(name)) headers[name] = '<<volatile>>';
    else headers[name] = Array.isArray(value) ? value.map((v) => scrub(v, n)) : scrub(value, n);
  }
  let body: unknown;
  if (snap.json !== undefined) body = { json: scrubJson(snap.json, n) };
  else if (snap.body.length === 0) body = null;
  else if (Buffer.from(snap.text, 'utf8').equals(snap.body)) body = { text: scrub(snap.text, n) };
  else body = { base64: snap.body.toString('base64') };
  return JSON.stringify({ status: snap.status, headers, body }, null, 2) + '\n';
}

/**
 * Compare a snapshot with a golden file (normalised by default). With `UPDATE_SNAPSHOTS=1` the
 * file is (re)written instead; a missing file is an error otherwise, so a new test cannot pass
 * without a reviewed golden file.
 *
 * @example
 * await expectSnapshot(await snapshotResponse(res), new URL('./__snapshots__/health.json', import.meta.url).pathname);
 */
export function expectSnapshot(snap: ResponseSnapshot, file: string, options: SerializeOptions = { normalize: true }): void {
  const actual = serializeSnapshot(snap, options);
  if (process.env.UPDATE_SNAPSHOTS === '1') {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  if (!existsSync(file)) {
    throw new assert.AssertionError({ message: `Golden file ${file} does not exist; run with UPDATE_SNAPSHOTS=1 to create it` });
  }
  assert.equal(actual, readFileSync(file, 'utf8'), `Snapshot differs from ${file} (UPDATE_SNAPSHOTS=1 rewrites it)`);
}
