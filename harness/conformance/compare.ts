/**
 * Comparing a response snapshot with a case's expected response.
 *
 * Rules (and only these):
 * - status: equal.
 * - headers: the listed ones only, names case-insensitive. `<<absent>>`, `<<present>>` and `<<uuid>>`
 *   are tokens. A value containing `.*` is an anchored regular expression: the corpus writes
 *   `"X-Response-Time": ".*ms"` and `"X-Request-ID": ".*"` meaning "any value (ending in ms)", never
 *   a literal `.*`. A `Content-Type` listed without parameters is compared as a media type (type and
 *   subtype, case-insensitive; parameters free); a listed `Vary` is met by any list naming each of its
 *   field names (case-insensitive, others free). Every other value is compared exactly.
 * - JSON bodies: deep-equal (key order free, no extra or missing keys, except `input` and `ctx` in an
 *   item of a problem's `errors` list: the corpus format marks them optional (`{type, loc, msg, input?,
 *   ctx?}`), so an item that omits them asserts nothing about them); the header tokens work on
 *   string leaves too (`<<absent>>` as a member value: the member must not exist); a problem `type` that is an
 *   absolute URI is compared by its last path segment (the corpus uses another project's base URI);
 *   a string leaf containing `.*` is a pattern, as for headers.
 * - text bodies: exact; when the response is JSON and the expected body a string, the JSON string
 *   value is compared.
 * - cookies: each listed Set-Cookie by name, with the listed attributes.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ResponseSnapshot } from '../snapshot.js';
import type { CaseExpectedResponse } from './types.js';

export interface Mismatch {
  /** `status`, `header <name>`, `body`, `body <json path>` or `cookie <name>`. */
  what: string;
  expected: unknown;
  actual: unknown;
  note?: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ABSOLUTE_URI = /^[a-z][a-z0-9+.-]*:/i;
/** More than this many JSON differences are summarised. */
const MAX_BODY_DIFFS = 20;

/** True when the corpus means `value` as a pattern (see the module comment). */
export function isPattern(value: string): boolean {
  return value.includes('.*');
}

function matchesPattern(pattern: string, actual: string): boolean {
  try {
    return new RegExp(`^(?:${pattern})$`, 's').test(actual);
  } catch {
    return pattern === actual;
  }
}

function headerValue(snap: ResponseSnapshot, name: string): string | undefined {
  const v = snap.headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * A Content-Type's media type, lower case, without parameters: RFC 9110 §8.3.1 makes type and subtype
 * case-insensitive, and a case that lists no parameter does not ask for their absence
 * (`application/problem+json; charset=utf-8` is `application/problem+json`, as frameworks send it).
 */
function mediaType(value: string): string {
  return value.split(';', 1)[0]!.trim().toLowerCase();
}

/**
 * `Vary`'s field names, lower case: RFC 9110 §12.5.5 makes it a list of case-insensitive field names,
 * and a cache reads it as a set. A case listing `Accept-Encoding` is met by `Origin, accept-encoding`
 * (a CORS layer adds `Origin`).
 */
function fieldNames(value: string): string[] {
  return value.split(',').map((f) => f.trim().toLowerCase()).filter(Boolean);
}

export function compareHeaders(expected: Record<string, string>, snap: ResponseSnapshot, out: Mismatch[]): void {
  for (const [name, want] of Object.entries(expected)) {
    const got = headerValue(snap, name);
    const what = `header ${name.toLowerCase()}`;
    const wantStr = String(want);
    if (wantStr === '<<absent>>') {
      if (got !== undefined) out.push({ what, expected: '<<absent>>', actual: got });
    } else if (wantStr === '<<present>>') {
      if (got === undefined) out.push({ what, expected: '<<present>>', actual: '<<absent>>' });
    } else if (got === undefined) {
      out.push({ what, expected: wantStr, actual: '<<absent>>' });
    } else if (wantStr === '<<uuid>>') {
      if (!UUID.test(got)) out.push({ what, expected: '<<uuid>>', actual: got });
    } else if (isPattern(wantStr)) {
      if (!matchesPattern(wantStr, got)) out.push({ what, expected: wantStr, actual: got, note: 'compared as a regular expression' });
    } else if (name.toLowerCase() === 'vary') {
      const missing = fieldNames(wantStr).filter((f) => !fieldNames(got).includes(f));
      if (missing.length) out.push({ what, expected: wantStr, actual: got, note: 'compared as a list of field names: each listed one must be named' });
    } else if (name.toLowerCase() === 'content-type' && !wantStr.includes(';') ? mediaType(got) !== mediaType(wantStr) : got !== wantStr) {
      out.push({ what, expected: wantStr, actual: got, ...(name.toLowerCase() === 'content-type' && !wantStr.includes(';') ? { note: 'compared as a media type (parameters not listed are free)' } : {}) });
    }
  }
}

function lastSegment(uri: string): string {
  const path = uri.replace(/[?#].*$/, '').replace(/\/+$/, '');
  return path.slice(path.lastIndexOf('/') + 1);
}

function jsonPath(parent: string, key: string | number): string {
  return typeof key === 'number' ? `${parent}[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

/** Collect differences between two JSON values (`$` is the root). */
/** Members of an `errors[i]` item a case may leave out (corpus README: `{type, loc, msg, input?, ctx?}`). */
export const OPTIONAL_ERROR_ITEM_KEYS: readonly string[] = ['input', 'ctx'];
const ERROR_ITEM_PATH = /\.errors\[\d+\]$/;

export function diffJson(expected: unknown, actual: unknown, path: string, out: Mismatch[], key?: string): void {
  if (out.length >= MAX_BODY_DIFFS) return;
  if (expected === '<<present>>') return;
  if (expected === '<<uuid>>') {
    if (typeof actual !== 'string' || !UUID.test(actual)) out.push({ what: `body ${path}`, expected, actual });
    return;
  }
  if (typeof expected === 'string' && typeof actual === 'string') {
    if (key === 'type' && ABSOLUTE_URI.test(expected) && ABSOLUTE_URI.test(actual)) {
      if (lastSegment(expected) !== lastSegment(actual)) out.push({ what: `body ${path}`, expected, actual, note: 'problem type compared by last path segment' });
      return;
    }
    if (isPattern(expected)) {
      if (!matchesPattern(expected, actual)) out.push({ what: `body ${path}`, expected, actual, note: 'compared as a regular expression' });
      return;
    }
  }
  if (Array.isArray(expected) && Array.isArray(actual)) {
    if (expected.length !== actual.length) out.push({ what: `body ${path}.length`, expected: expected.length, actual: actual.length });
    const n = Math.min(expected.length, actual.length);
    for (let i = 0; i < n; i++) diffJson(expected[i], actual[i], jsonPath(path, i), out);
    return;
  }
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isObj(expected) && isObj(actual)) {
    for (const k of Object.keys(expected)) {
      if (expected[k] === '<<absent>>') {
        if (k in actual) out.push({ what: `body ${jsonPath(path, k)}`, expected: '<<absent>>', actual: actual[k] });
      } else if (!(k in actual)) out.push({ what: `body ${jsonPath(path, k)}`, expected: expected[k], actual: '<<missing>>' });
      else diffJson(expected[k], actual[k], jsonPath(path, k), out, k);
    }
    const optional = ERROR_ITEM_PATH.test(path) ? OPTIONAL_ERROR_ITEM_KEYS : [];
    for (const k of Object.keys(actual)) {
      if (!(k in expected) && !optional.includes(k)) out.push({ what: `body ${jsonPath(path, k)}`, expected: '<<not expected>>', actual: actual[k] });
    }
    return;
  }
  if (!isDeepStrictEqual(expected, actual)) out.push({ what: `body ${path}`, expected, actual });
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

export function compareBody(expected: unknown, snap: ResponseSnapshot, out: Mismatch[]): void {
  if (expected === null || expected === '') {
    if (snap.body.length !== 0) out.push({ what: 'body', expected: '<<empty>>', actual: snap.text });
    return;
  }
  if (typeof expected === 'string') {
    if (snap.text === expected) return;
    const parsed = snap.json !== undefined ? { ok: true as const, value: snap.json } : { ok: false as const };
    if (parsed.ok && parsed.value === expected) return;
    out.push({ what: 'body', expected, actual: snap.text });
    return;
  }
  const parsed = snap.json !== undefined ? { ok: true as const, value: snap.json } : parseJson(snap.text);
  if (!parsed.ok) {
    out.push({ what: 'body', expected, actual: snap.text, note: 'response body is not JSON' });
    return;
  }
  const before = out.length;
  diffJson(expected, parsed.value, '$', out);
  if (out.length >= before + MAX_BODY_DIFFS) out.push({ what: 'body', expected: '…', actual: '…', note: `more than ${MAX_BODY_DIFFS} differences` });
}

interface ParsedCookie {
  value: string;
  attributes: Record<string, string | true>;
}

/** Parse Set-Cookie lines (RFC 6265 §5.2) by cookie name; attribute names lower-cased. */
export function parseSetCookies(lines: readonly string[]): Map<string, ParsedCookie> {
  const out = new Map<string, ParsedCookie>();
  for (const line of lines) {
    const [pair = '', ...attrs] = line.split(';');
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const attributes: Record<string, string | true> = {};
    for (const a of attrs) {
      const i = a.indexOf('=');
      const k = (i < 0 ? a : a.slice(0, i)).trim().toLowerCase();
      if (k) attributes[k] = i < 0 ? true : a.slice(i + 1).trim();
    }
    out.set(pair.slice(0, eq).trim(), { value: pair.slice(eq + 1).trim(), attributes });
  }
  return out;
}

function cookieAttr(name: string, want: unknown, got: ParsedCookie): string | undefined {
  const key = name === 'max_age' ? 'max-age' : name.toLowerCase();
  const actual = got.attributes[key];
  if (typeof want === 'boolean') return (actual !== undefined) === want ? undefined : `${key}=${actual ?? '<<absent>>'}`;
  if (actual === undefined) return `${key}=<<absent>>`;
  let a = String(actual);
  let w = String(want);
  // RFC 6265 §5.2.3: a leading dot in Domain is ignored; §5.2.7: SameSite values are case-insensitive.
  if (key === 'domain') [a, w] = [a.replace(/^\./, ''), w.replace(/^\./, '')];
  if (key === 'samesite') [a, w] = [a.toLowerCase(), w.toLowerCase()];
  return a === w ? undefined : `${key}=${actual}`;
}

export function compareCookies(expected: Record<string, unknown>, snap: ResponseSnapshot, out: Mismatch[]): void {
  const raw = snap.headers['set-cookie'];
  const cookies = parseSetCookies(Array.isArray(raw) ? raw : raw ? [raw] : []);
  for (const [name, spec] of Object.entries(expected)) {
    const got = cookies.get(name);
    const what = `cookie ${name}`;
    if (!got) {
      out.push({ what, expected: spec, actual: '<<absent>>' });
      continue;
    }
    const wants = typeof spec === 'object' && spec !== null ? (spec as Record<string, unknown>) : { value: spec };
    const wrong: string[] = [];
    for (const [attr, want] of Object.entries(wants)) {
      if (attr === 'value') {
        if (got.value !== String(want)) wrong.push(`value=${got.value}`);
      } else {
        const w = cookieAttr(attr, want, got);
        if (w) wrong.push(w);
      }
    }
    if (wrong.length) out.push({ what, expected: spec, actual: wrong.join('; ') });
  }
}

/**
 * How much of a response is graded:
 * - `strict` (default): status, the listed headers and cookies, and the whole body (rules above);
 * - `lenient`: the status, the problem `type` slug (last path segment) and, for each item of a
 *   problem's `errors` list, its `loc` and `type` (same items, same order), and the headers an RFC
 *   says MUST accompany the status (LENIENT_MUST_HEADERS). Messages, `ctx`, `input`, other headers,
 *   cookies and success bodies are not graded.
 */
export type ConformanceLevel = 'strict' | 'lenient';
export const CONFORMANCE_LEVELS: readonly ConformanceLevel[] = ['strict', 'lenient'];

function isProblemLike(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && ('type' in v || 'errors' in v);
}

/**
 * Headers the lenient level still grades, listed or not: an answer without them is wrong, not merely
 * worded otherwise (the strict level grades what the case lists: keel's cases list these).
 * `Allow` on a 405 (RFC 9110 §15.5.6: the origin server MUST generate it), `WWW-Authenticate` on a
 * 401 (§15.5.2: MUST send at least one challenge), and `Retry-After` where the case lists it (keel's
 * 429 cases: a client must learn when to retry, §10.2.3). Checked for presence; a listed `Allow` is
 * compared as a set of methods (the order is not the RFC's).
 */
export const LENIENT_MUST_HEADERS: ReadonlyArray<{ header: string; when: (e: CaseExpectedResponse) => boolean; why: string }> = [
  { header: 'allow', when: (e) => e.status_code === 405, why: 'RFC 9110 §15.5.6: a 405 MUST carry Allow' },
  { header: 'www-authenticate', when: (e) => e.status_code === 401, why: 'RFC 9110 §15.5.2: a 401 MUST carry a WWW-Authenticate challenge' },
  { header: 'retry-after', when: (e) => listedHeader(e, 'retry-after') !== undefined, why: 'the case lists Retry-After (RFC 9110 §10.2.3)' },
];

function listedHeader(e: CaseExpectedResponse, name: string): string | undefined {
  const hit = Object.entries(e.headers ?? {}).find(([k]) => k.toLowerCase() === name);
  return hit === undefined ? undefined : String(hit[1]);
}

const methodSet = (v: string) => [...new Set(v.split(',').map((m) => m.trim()).filter(Boolean))].sort().join(', ');

function compareMustHeaders(expected: CaseExpectedResponse, snap: ResponseSnapshot, out: Mismatch[]): void {
  // Only when the status is right: a wrong status is the difference that matters.
  if (snap.status !== expected.status_code) return;
  for (const rule of LENIENT_MUST_HEADERS) {
    if (!rule.when(expected)) continue;
    const want = listedHeader(expected, rule.header);
    if (want === '<<absent>>') continue;
    const got = headerValue(snap, rule.header);
    if (got === undefined) out.push({ what: `header ${rule.header}`, expected: want ?? '<<present>>', actual: '<<absent>>', note: rule.why });
    else if (rule.header === 'allow' && want !== undefined && !want.startsWith('<<') && !isPattern(want) && methodSet(want) !== methodSet(got)) {
      out.push({ what: 'header allow', expected: want, actual: got, note: 'compared as a set of methods' });
    }
  }
}

function compareLenient(expected: CaseExpectedResponse, snap: ResponseSnapshot, out: Mismatch[]): void {
  compareMustHeaders(expected, snap, out);
  const want = expected.body;
  if (!isProblemLike(want)) return;
  const parsed = snap.json !== undefined ? { ok: true as const, value: snap.json } : parseJson(snap.text);
  const body = parsed.ok ? parsed.value : undefined;
  const actual = isProblemLike(body) ? body : {};
  if (typeof want.type === 'string') {
    const a = typeof actual.type === 'string' ? actual.type : '<<missing>>';
    if (lastSegment(want.type) !== lastSegment(a)) out.push({ what: 'body $.type', expected: want.type, actual: a, note: 'problem type compared by last path segment' });
  }
  if (Array.isArray(want.errors)) {
    const items = (list: unknown) => (Array.isArray(list) ? list : []).map((e) => ({ type: (e as Record<string, unknown>)?.type, loc: (e as Record<string, unknown>)?.loc }));
    const w = items(want.errors);
    const a = items(actual.errors);
    if (w.length !== a.length) out.push({ what: 'body $.errors.length', expected: w.length, actual: a.length });
    for (let i = 0; i < Math.min(w.length, a.length); i++) {
      for (const k of ['type', 'loc'] as const) {
        if (!isDeepStrictEqual(w[i]![k], a[i]![k])) out.push({ what: `body $.errors[${i}].${k}`, expected: w[i]![k], actual: a[i]![k] ?? '<<missing>>' });
      }
    }
  }
}

/** Every difference between the expected response and the snapshot; empty = the case passes. */
export function compareResponse(expected: CaseExpectedResponse, snap: ResponseSnapshot, level: ConformanceLevel = 'strict'): Mismatch[] {
  const out: Mismatch[] = [];
  if (snap.status !== expected.status_code) out.push({ what: 'status', expected: expected.status_code, actual: snap.status });
  if (level === 'lenient') {
    compareLenient(expected, snap, out);
    return out;
  }
  if (expected.headers) compareHeaders(expected.headers, snap, out);
  if ('body' in expected) compareBody(expected.body, snap, out);
  if (expected.cookies) compareCookies(expected.cookies, snap, out);
  return out;
}
