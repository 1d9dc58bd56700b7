/**
 * Parsing a raw body by its media type (RFC 9110 §8.3): JSON (application/json and any +json,
 * RFC 6839), urlencoded forms, multipart/form-data, text.
 */
import type qsModule from 'qs';
import { lazyRequire } from './lazy-require.js';

/** qs, loaded by the first form that uses bracket syntax (lib/http/lazy-require.ts). */
const loadQs = lazyRequire<typeof qsModule>('qs');
import { HttpError } from './errors.js';
import { parseMultipart, type MultipartLimits, type UploadFile } from './multipart.js';
import { decodeUrlencoded, plusAsSpace } from './query.js';
import { DEFAULT_JSON_POISONING, parseJsonText, type JsonPoisoning } from './json-parse.js';

export interface ParsedBody {
  body: unknown;
  files: Record<string, UploadFile | UploadFile[]>;
}

export interface MediaType {
  type: string;
  params: Record<string, string>;
}

const QUOTED = /^"(.*)"$/;
const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** `Application/JSON; charset="UTF-8"` → `{type: 'application/json', params: {charset: 'utf-8'}}` (params read-only). */
export function parseMediaType(header: string | undefined): MediaType | null {
  if (!header) return null;
  // Most requests name a bare type (`application/json`): no parameters to split out.
  if (header.indexOf(';') < 0) return { type: header.trim().toLowerCase(), params: NO_PARAMS };
  const [type, ...rest] = header.split(';');
  const params: Record<string, string> = {};
  for (const p of rest) {
    const i = p.indexOf('=');
    if (i < 0) continue;
    const value = p.slice(i + 1).trim();
    params[p.slice(0, i).trim().toLowerCase()] = (value.charCodeAt(0) === 0x22 ? value.replace(QUOTED, '$1') : value).toLowerCase();
  }
  return { type: type!.trim().toLowerCase(), params };
}

export function isJsonType(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

/**
 * Deepest nesting of objects/arrays a JSON body may have. Deeper documents are refused before any
 * other code sees them: recursive code downstream (schema validation, cloning, logging) would
 * otherwise spend its stack on them. Real payloads stay far below this.
 */
export const MAX_JSON_DEPTH = 64;

/** Bytes the depth scan acts on: 1 opens a string, 2 opens an object or array, 3 closes one. */
const JSON_STRUCTURE = new Uint8Array(256);
JSON_STRUCTURE[0x22] = 1; // "
JSON_STRUCTURE[0x7b] = 2; // {
JSON_STRUCTURE[0x5b] = 2; // [
JSON_STRUCTURE[0x7d] = 3; // }
JSON_STRUCTURE[0x5d] = 3; // ]

/**
 * Nesting depth of a JSON text, counted on its bytes (brackets outside strings), stopping as soon as
 * it passes `limit`. Malformed text is left for JSON.parse to report. One table lookup per byte
 * outside strings and a tight loop inside them.
 */
export function jsonDepthExceeds(raw: Buffer, limit: number): boolean {
  const n = raw.length;
  // A document needs at least `limit + 1` opening brackets to be too deep.
  if (n <= limit) return false;
  let depth = 0;
  let i = 0;
  while (i < n) {
    const kind = JSON_STRUCTURE[raw[i++]!];
    if (kind === 0) continue;
    if (kind === 1) {
      // Inside a string until the next quote that is not escaped.
      while (i < n) {
        const c = raw[i++];
        if (c === 0x22) break;
        if (c === 0x5c) i++; // a backslash escapes the next byte
      }
    } else if (kind === 2) {
      if (++depth > limit) return true;
    } else depth--;
  }
  return false;
}

/**
 * Whether a parsed JSON value nests more than `limit` objects and arrays: for valid JSON, exactly what
 * jsonDepthExceeds counts on its text, at about a third of the cost (it visits values, not bytes).
 */
export function valueDepthExceeds(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (limit === 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item !== null && typeof item === 'object' && valueDepthExceeds(item, limit - 1)) return true;
    }
    return false;
  }
  // for…in without an intermediate array: a parsed JSON object has only own, enumerable keys (an own
  // "__proto__" key shadows the accessor, so the read below sees the parsed value).
  for (const key in value) {
    const item: unknown = (value as Record<string, unknown>)[key];
    if (item !== null && typeof item === 'object' && valueDepthExceeds(item, limit - 1)) return true;
  }
  return false;
}

/**
 * Bodies larger than this are scanned for depth before JSON.parse; smaller ones are parsed first and
 * their value's depth checked. V8 parses deep nesting ~2× slower per byte than the costliest flat
 * JSON, so a deep body costs at most about twice a flat one of its size; the byte scan costs ~20% of
 * the parse on every body, the value walk ~6% (150 KB order document: 207 vs 71 µs, parse 1.1 ms).
 * Past a megabyte, refusing before parsing is worth the scan.
 */
export const JSON_SCAN_FIRST_BYTES = 1024 * 1024;

const EMPTY: ParsedBody = Object.freeze({ body: undefined, files: Object.freeze({}) }) as ParsedBody;

/** Most fields one urlencoded body may carry; more is a 400 rather than silently dropped fields. */
export const FORM_PARAMETER_LIMIT = 1000;
/** Deepest bracket nesting (`a[b][c]`) read as objects; deeper keys stay literal (qs semantics). */
export const FORM_DEPTH_LIMIT = 5;
/** Highest explicit array index (`a[99]`) read as an array; beyond it qs builds an object instead. */
export const FORM_ARRAY_LIMIT = 100;

/** In a urlencoded body, `[`, `]` or their escapes make qs read keys as paths (`user[name]`, `tags[]`). */
const FORM_PATH_SYNTAX = /[[\]]|%5[bd]/i;

const limitError = (what: 'Parameter' | 'Array', limit: number) =>
  new RangeError(what === 'Parameter' ? `Parameter limit exceeded. Only ${limit} parameters allowed.` : `Array limit exceeded. Only ${limit} elements allowed in an array.`);

/** One name or value of a form, decoded as qs decodes it: a malformed escape leaves the text as sent (with its spaces). */
function decodeFormText(text: string): string {
  return decodeUrlencoded(text) ?? plusAsSpace(text);
}

/** Whether `text` has more than `limit` `&`-separated parts (counted only when it is long enough to). */
function exceedsParts(text: string, limit: number): boolean {
  if (text.length < limit) return false;
  let parts = 1;
  for (let i = text.indexOf('&'); i >= 0; i = text.indexOf('&', i + 1)) if (++parts > limit) return true;
  return false;
}

/**
 * A form without any bracket syntax: flat `name=value` pairs, read with exactly qs's rules for
 * them (same decoding, repeated names → list, empty names and Object.prototype member names dropped,
 * the same limits, checked in the same order, with the same messages) in a fraction of qs's time,
 * which goes mostly into the bracket machinery a flat form never uses.
 */
function parseFlatForm(text: string): Record<string, unknown> {
  if (exceedsParts(text, FORM_PARAMETER_LIMIT)) throw limitError('Parameter', FORM_PARAMETER_LIMIT);
  const out: Record<string, string | string[]> = {};
  // qs counts a dropped name's repeats against the list limit too.
  let dropped: Map<string, number> | undefined;
  const n = text.length;
  let start = 0;
  // The next `=` at or after `start`, kept across pairs so a long body without one is read once.
  let eq = text.indexOf('=');
  for (;;) {
    let end = text.indexOf('&', start);
    if (end < 0) end = n;
    if (eq >= 0 && eq < start) eq = text.indexOf('=', start);
    const hasValue = eq >= 0 && eq < end;
    const key = decodeFormText(text.slice(start, hasValue ? eq : end));
    const value = hasValue ? decodeFormText(text.slice(eq + 1, end)) : '';
    const prev = out[key];
    // An inherited value means an Object.prototype name (`constructor`, `__proto__`).
    if (key === '' || (prev !== undefined && !Object.hasOwn(out, key))) {
      dropped ??= new Map();
      const seen = (dropped.get(key) ?? 0) + 1;
      if (seen > FORM_ARRAY_LIMIT) throw limitError('Array', FORM_ARRAY_LIMIT);
      dropped.set(key, seen);
    } else if (prev === undefined) out[key] = value;
    else if (typeof prev === 'string') out[key] = [prev, value];
    else if (prev.length >= FORM_ARRAY_LIMIT) throw limitError('Array', FORM_ARRAY_LIMIT);
    else prev.push(value);
    if (end === n) return out;
    start = end + 1;
  }
}

/**
 * The first hole of an indexed list (`items[0]=a&items[2]=b`) anywhere in a parsed form, as
 * `[expected index, index given]`, or null. qs would compact such a list, moving `b` to index 1; the
 * reference refuses it (serde_qs: "missing index"), and so does keel, rather than shift what the client indexed.
 */
function firstHole(value: unknown): [number, number] | null {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) {
        let next = i + 1;
        while (next < value.length && !(next in value)) next++;
        return [i, next];
      }
      const inner = firstHole(value[i]);
      if (inner) return inner;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const k in value) {
      const inner = firstHole((value as Record<string, unknown>)[k]);
      if (inner) return inner;
    }
  }
  return null;
}

/**
 * urlencoded → object with qs's semantics (the parser behind Express's `extended` forms): repeated
 * keys and `tags[]` become arrays, `user[name]` nests; `__proto__` keys are ignored. Values stay
 * strings; validation converts them to the body schema's types. More than FORM_PARAMETER_LIMIT (1000)
 * fields is a 400, and so is an indexed list with a gap (`items[0]=…&items[2]=…`), which qs would
 * compact. Only a body that uses bracket syntax pays for qs.
 */
export function parseUrlEncoded(text: string): Record<string, unknown> {
  let form: Record<string, unknown>;
  try {
    if (!FORM_PATH_SYNTAX.test(text)) return parseFlatForm(text);
    form = loadQs().parse(text, {
      depth: FORM_DEPTH_LIMIT,
      arrayLimit: FORM_ARRAY_LIMIT,
      parameterLimit: FORM_PARAMETER_LIMIT,
      throwOnLimitExceeded: true,
      allowSparse: true,
    }) as Record<string, unknown>;
  } catch (err) {
    throw new HttpError(400, `Invalid form body: ${(err as Error).message}`);
  }
  const hole = firstHole(form);
  // The reference's words (serde_qs through its urlencoded reader).
  if (hole) throw new HttpError(400, `Failed to parse URL-encoded form data: missing index, expected: ${hole[0]} got ${hole[1]}`);
  return form;
}

/** The 400 for a multipart/form-data Content-Type without its required boundary (RFC 7578 §4.1), in the reference's words. */
export function missingBoundary(media: MediaType | null): HttpError | null {
  return media?.type === 'multipart/form-data' && !media.params.boundary ? new HttpError(400, "multipart/form-data requires 'boundary' parameter") : null;
}

/**
 * Parse `raw` according to `contentType`: synchronously, except multipart (busboy is a stream),
 * whose result is a Promise. Errors are thrown (or rejected) as HttpErrors.
 * @param expectJson the route declares a JSON body schema: a body of another media type is a 415.
 * @param poisoning what `__proto__` / `constructor.prototype` keys in a JSON body get (default: a 400).
 * @param multipart the bounds of a multipart body (ServerConfig.multipart_max_*; default: none).
 */
export function parseBody(
  raw: Buffer,
  contentType: string | undefined,
  headers: Record<string, string | string[] | undefined>,
  expectJson: boolean,
  poisoning: JsonPoisoning = DEFAULT_JSON_POISONING,
  multipart?: MultipartLimits,
): ParsedBody | Promise<ParsedBody> {
  const media = parseMediaType(contentType);
  if (raw.length === 0 && media?.type !== 'multipart/form-data') return EMPTY;
  // A JSON route with no Content-Type reads the body as JSON (lenient, as most clients mean it).
  const type = media?.type ?? (expectJson ? 'application/json' : 'application/octet-stream');
  if (isJsonType(type)) return { body: parseJson(raw, media?.params.charset, poisoning), files: {} };
  if (type === 'application/x-www-form-urlencoded') return { body: parseUrlEncoded(raw.toString('utf8')), files: {} };
  if (type === 'multipart/form-data') {
    const refused = missingBoundary(media);
    if (refused) throw refused;
    return parseMultipart(raw, headers, multipart).then(({ fields, files }) => ({ body: fields, files }));
  }
  if (expectJson) {
    // The accepted type goes in Accept (RFC 9110 §12.5.1 allows it on a 415), the detail stays generic.
    throw new HttpError(415, 'Unsupported media type', { code: 'KEEL_UNSUPPORTED_MEDIA_TYPE', headers: { Accept: 'application/json' } });
  }
  if (type.startsWith('text/')) return { body: raw.toString('utf8'), files: {} };
  return { body: raw, files: {} };
}

function parseJson(raw: Buffer, charset: string | undefined, poisoning: JsonPoisoning): unknown {
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    // RFC 8259 §8.1: JSON exchanged between systems MUST be UTF-8.
    throw new HttpError(415, `Unsupported charset '${charset}' for JSON. Only UTF-8 is supported.`, {
      code: 'KEEL_UNSUPPORTED_MEDIA_TYPE',
      title: 'Unsupported Charset',
      type: 'https://keel.dev/errors/unsupported-charset',
    });
  }
  // Either order gives the same answers: a text both malformed and too deep is "too deep".
  const scanFirst = raw.length > JSON_SCAN_FIRST_BYTES;
  if (scanFirst && jsonDepthExceeds(raw, MAX_JSON_DEPTH)) throw tooDeep();
  let value: unknown;
  try {
    value = parseJsonText(raw.toString('utf8'), poisoning);
  } catch (err) {
    if (err instanceof HttpError) throw err;
    if (!scanFirst && jsonDepthExceeds(raw, MAX_JSON_DEPTH)) throw tooDeep();
    throw new HttpError(400, `Malformed JSON body: ${(err as Error).message}`, { code: 'KEEL_MALFORMED_JSON' });
  }
  if (!scanFirst && valueDepthExceeds(value, MAX_JSON_DEPTH)) throw tooDeep();
  return value;
}

/** The 400 problem for JSON (or YAML) nested past MAX_JSON_DEPTH: one answer wherever keel parses it. */
export const tooDeep = (): HttpError =>
  new HttpError(400, `JSON body nesting exceeds the limit of ${MAX_JSON_DEPTH} levels`, { code: 'KEEL_BAD_REQUEST', extensions: { limit: MAX_JSON_DEPTH } });

/**
 * The one nesting rule for JSON keel parses outside parseBody (JSON-RPC bodies, GraphQL bodies and
 * `variables`, AsyncAPI documents): the byte scan runs before JSON.parse, so a document deeper than
 * MAX_JSON_DEPTH never reaches recursive code; it throws the same 400 HttpError as a JSON body.
 */
export function refuseDeepJson(text: string | Buffer): void {
  if (text.length <= MAX_JSON_DEPTH) return;
  if (jsonDepthExceeds(typeof text === 'string' ? Buffer.from(text, 'utf8') : text, MAX_JSON_DEPTH)) throw tooDeep();
}

/**
 * A form body described as parameters (`parameters.body: {type: 'multipart/form-data', properties:
 * {file: {type: 'file'}, files: {type: 'file[]'}, note: {type: 'string'}}}`) → the JSON Schema the body
 * is validated against: a file is OpenAPI's `{type: 'string', format: 'binary'}`.
 */
export function formBodySchema(spec: Record<string, unknown>, where: string): Record<string, unknown> {
  const media = spec.type;
  if (media !== 'multipart/form-data' && media !== 'application/x-www-form-urlencoded') {
    throw new TypeError(`${where}.type must be "multipart/form-data" or "application/x-www-form-urlencoded", got ${JSON.stringify(media)}`);
  }
  const file = { type: 'string', format: 'binary' };
  const properties: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries((spec.properties ?? {}) as Record<string, Record<string, unknown>>)) {
    const t = raw?.type;
    properties[name] = t === 'file' ? file : t === 'file[]' ? { type: 'array', items: file } : raw;
  }
  const required = Array.isArray(spec.required) ? { required: spec.required } : {};
  return { type: 'object', properties, ...required };
}
