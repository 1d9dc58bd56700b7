/**
 * Parsing a raw body by its media type (RFC 9110 §8.3): JSON (application/json and any +json,
 * RFC 6839), urlencoded forms, multipart/form-data, text.
 */
import qs from 'qs';
import { HttpError } from './errors.js';
import { parseMultipart, type UploadFile } from './multipart.js';

export interface ParsedBody {
  body: unknown;
  files: Record<string, UploadFile | UploadFile[]>;
}

export interface MediaType {
  type: string;
  params: Record<string, string>;
}

/** `Application/JSON; charset="UTF-8"` → `{type: 'application/json', params: {charset: 'utf-8'}}`. */
export function parseMediaType(header: string | undefined): MediaType | null {
  if (!header) return null;
  const [type, ...rest] = header.split(';');
  const params: Record<string, string> = {};
  for (const p of rest) {
    const i = p.indexOf('=');
    if (i < 0) continue;
    params[p.slice(0, i).trim().toLowerCase()] = p.slice(i + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
  }
  return { type: type!.trim().toLowerCase(), params };
}

export function isJsonType(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

/**
 * Deepest nesting of objects/arrays a JSON body may have. Deeper documents are refused before they
 * are parsed: recursive code downstream (schema validation, cloning, logging) would otherwise spend
 * its stack on them. Real payloads stay far below this.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Nesting depth of a JSON text, counted on its bytes (brackets outside strings), stopping as soon as
 * it passes `limit`. Malformed text is left for JSON.parse to report.
 */
export function jsonDepthExceeds(raw: Buffer, limit: number): boolean {
  // A document needs at least `limit + 1` opening brackets to be too deep.
  if (raw.length <= limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

const EMPTY: ParsedBody = Object.freeze({ body: undefined, files: Object.freeze({}) }) as ParsedBody;

/** Most fields one urlencoded body may carry; more is a 400 rather than silently dropped fields. */
export const FORM_PARAMETER_LIMIT = 1000;
/** Deepest bracket nesting (`a[b][c]`) read as objects; deeper keys stay literal (qs semantics). */
export const FORM_DEPTH_LIMIT = 5;
/** Highest explicit array index (`a[99]`) read as an array; beyond it qs builds an object instead. */
export const FORM_ARRAY_LIMIT = 100;

/**
 * urlencoded → object with qs (the parser behind Express's `extended` forms): repeated keys and
 * `tags[]` become arrays, `user[name]` nests; `__proto__` keys are ignored. Values stay strings;
 * validation converts them to the body schema's types. More than FORM_PARAMETER_LIMIT (1000) fields is a 400.
 */
export function parseUrlEncoded(text: string): Record<string, unknown> {
  try {
    return qs.parse(text, {
      depth: FORM_DEPTH_LIMIT,
      arrayLimit: FORM_ARRAY_LIMIT,
      parameterLimit: FORM_PARAMETER_LIMIT,
      throwOnLimitExceeded: true,
    }) as Record<string, unknown>;
  } catch (err) {
    throw new HttpError(400, `Invalid form body: ${(err as Error).message}`);
  }
}

/**
 * Parse `raw` according to `contentType`.
 * @param expectJson the route declares a JSON body schema: a body of another media type is a 415.
 */
export async function parseBody(
  raw: Buffer,
  contentType: string | undefined,
  headers: Record<string, string | string[] | undefined>,
  expectJson: boolean,
): Promise<ParsedBody> {
  const media = parseMediaType(contentType);
  if (raw.length === 0 && media?.type !== 'multipart/form-data') return EMPTY;
  // A JSON route with no Content-Type reads the body as JSON (lenient, as most clients mean it).
  const type = media?.type ?? (expectJson ? 'application/json' : 'application/octet-stream');
  const charset = media?.params.charset;
  if (isJsonType(type)) {
    if (charset && charset !== 'utf-8' && charset !== 'utf8') {
      // RFC 8259 §8.1: JSON exchanged between systems MUST be UTF-8.
      throw new HttpError(415, `Unsupported charset '${charset}' for JSON. Only UTF-8 is supported.`, {
        code: 'KEEL_UNSUPPORTED_MEDIA_TYPE',
        title: 'Unsupported Charset',
        type: 'https://keel.dev/errors/unsupported-charset',
      });
    }
    if (jsonDepthExceeds(raw, MAX_JSON_DEPTH)) {
      throw new HttpError(400, `JSON body nesting exceeds the limit of ${MAX_JSON_DEPTH} levels`, { code: 'KEEL_BAD_REQUEST', extensions: { limit: MAX_JSON_DEPTH } });
    }
    try {
      return { body: JSON.parse(raw.toString('utf8')), files: {} };
    } catch (err) {
      throw new HttpError(400, `Malformed JSON body: ${(err as Error).message}`, { code: 'KEEL_MALFORMED_JSON' });
    }
  }
  if (type === 'application/x-www-form-urlencoded') return { body: parseUrlEncoded(raw.toString('utf8')), files: {} };
  if (type === 'multipart/form-data') {
    if (!media?.params.boundary) throw new HttpError(400, 'multipart/form-data requires a boundary parameter (RFC 7578 §4.1)');
    const { fields, files } = await parseMultipart(raw, headers);
    return { body: fields, files };
  }
  if (expectJson) {
    // The accepted type goes in Accept (RFC 9110 §12.5.1 allows it on a 415), the detail stays generic.
    throw new HttpError(415, 'Unsupported media type', { code: 'KEEL_UNSUPPORTED_MEDIA_TYPE', headers: { Accept: 'application/json' } });
  }
  if (type.startsWith('text/')) return { body: raw.toString('utf8'), files: {} };
  return { body: raw, files: {} };
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
