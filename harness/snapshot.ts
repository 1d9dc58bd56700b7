/**
 * Response snapshots: one plain value `{status, headers, body, text, json?}` from whatever client a test
 * used (fetch, supertest, a raw node:http response), with the body decoded from its content codings so
 * two snapshots compare by meaning rather than by compressor output.
 */
import type { IncomingMessage } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { SnapshotError } from '../lib/http/errors.js';

/** A response, decoded: lower-case header names, `set-cookie` always a list, body without content codings. */
export interface ResponseSnapshot {
  status: number;
  headers: Record<string, string | string[]>;
  /** The body after every content coding was removed (RFC 9110 §8.4). */
  body: Buffer;
  /** The body as UTF-8 (invalid sequences replaced). */
  text: string;
  /** The parsed body, when the media type is JSON (`application/json` or `*+json`) and it parses. */
  json?: unknown;
}

/** The parts of a response before decoding: what `snapshotFromParts` accepts. */
export interface RawResponseParts {
  status: number;
  /**
   * Header name/value pairs as received. Values are byte strings (latin1, as node's parser and the
   * Fetch standard deliver them); they are decoded as UTF-8 here.
   */
  headers: Iterable<readonly [string, string]> | Record<string, string | readonly string[] | undefined>;
  body: Buffer | Uint8Array;
  /** The body is already free of content codings (fetch and superagent decode them themselves). */
  decoded?: boolean;
}

/** A supertest / superagent response (only the members we read). */
export interface SupertestLikeResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text?: unknown;
  body?: unknown;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** Decode one header value delivered as a latin1 byte string; invalid UTF-8 is a SnapshotError. */
export function decodeHeaderValue(name: string, latin1: string): string {
  // Pure ASCII is by far the common case and needs no work.
  if (/^[\x00-\x7f]*$/.test(latin1)) return latin1;
  try {
    return strictUtf8.decode(Buffer.from(latin1, 'latin1'));
  } catch (err) {
    throw new SnapshotError('InvalidHeader', `Response header "${name}" is not valid UTF-8`, { cause: err });
  }
}

function headerPairs(headers: RawResponseParts['headers']): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const isIterable = typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function';
  if (isIterable) {
    for (const [k, v] of headers as Iterable<readonly [string, string]>) out.push([k, v]);
    return out;
  }
  for (const [k, v] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const item of v) out.push([k, item]);
    else out.push([k, v as string]);
  }
  return out;
}

/** Merge repeated fields with ", " (RFC 9110 §5.3), except Set-Cookie, which cannot be merged (RFC 6265 §3). */
function normaliseHeaders(pairs: Array<[string, string]>): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [rawName, rawValue] of pairs) {
    const name = rawName.toLowerCase();
    const value = decodeHeaderValue(name, rawValue);
    if (name === 'set-cookie') {
      const list = (headers[name] as string[] | undefined) ?? [];
      list.push(value);
      headers[name] = list;
    } else {
      const prev = headers[name] as string | undefined;
      headers[name] = prev === undefined ? value : `${prev}, ${value}`;
    }
  }
  return headers;
}

/** The content codings of a response, in the order they were applied. */
export function contentCodings(headers: Record<string, string | string[]>): string[] {
  const value = headers['content-encoding'];
  if (typeof value !== 'string') return [];
  return value
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
}

function decodeOne(coding: string, data: Buffer): Buffer {
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return gunzipSync(data);
    case 'br':
      return brotliDecompressSync(data);
    case 'deflate':
      // RFC 9110 §8.4.1.2: "deflate" is the zlib format; some servers send raw DEFLATE, which every
      // browser accepts too, so we fall back to it rather than reject a working server.
      try {
        return inflateSync(data);
      } catch {
        return inflateRawSync(data);
      }
    default:
      throw new Error(`unsupported content coding "${coding}"`);
  }
}

/**
 * Remove content codings in the reverse order of their listing (RFC 9110 §8.4: codings are listed in
 * the order they were applied). An empty body (HEAD, 204, 304) has nothing to decode.
 */
export function decodeBody(codings: readonly string[], body: Buffer): Buffer {
  if (body.length === 0 || codings.length === 0) return body;
  let data = body;
  for (let i = codings.length - 1; i >= 0; i--) {
    const coding = codings[i]!;
    try {
      data = decodeOne(coding, data);
    } catch (err) {
      throw new SnapshotError('Decompression', `Response body could not be decoded from "${coding}": ${(err as Error).message}`, { cause: err });
    }
  }
  return data;
}

/** True for `application/json` and structured-syntax `+json` media types (RFC 6839 §3.1). */
export function isJsonMediaType(contentType: string | string[] | undefined): boolean {
  if (typeof contentType !== 'string') return false;
  const media = contentType.split(';')[0]!.trim().toLowerCase();
  return media === 'application/json' || media.endsWith('+json');
}

/** Build a snapshot from raw parts: decode headers (strict UTF-8) and body (content codings). */
export function snapshotFromParts(parts: RawResponseParts): ResponseSnapshot {
  const headers = normaliseHeaders(headerPairs(parts.headers));
  const raw = Buffer.isBuffer(parts.body) ? parts.body : Buffer.from(parts.body.buffer, parts.body.byteOffset, parts.body.byteLength);
  const body = parts.decoded ? raw : decodeBody(contentCodings(headers), raw);
  const snap: ResponseSnapshot = { status: parts.status, headers, body, text: body.toString('utf8') };
  if (isJsonMediaType(headers['content-type']) && body.length > 0) {
    try {
      snap.json = JSON.parse(snap.text);
    } catch {
      // Not JSON after all: the snapshot keeps the text; comparing it is the caller's business.
    }
  }
  return snap;
}

function isFetchResponse(v: unknown): v is Response {
  return typeof Response !== 'undefined' && v instanceof Response;
}

function isIncomingMessage(v: unknown): v is IncomingMessage {
  return typeof v === 'object' && v !== null && Array.isArray((v as IncomingMessage).rawHeaders) && typeof (v as IncomingMessage).on === 'function';
}

async function readStream(stream: AsyncIterable<Buffer | string>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

function pairsFromRaw(rawHeaders: readonly string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) pairs.push([rawHeaders[i]!, rawHeaders[i + 1]!]);
  return pairs;
}

/**
 * Snapshot a response from fetch, supertest or node:http.
 *
 * - node:http `IncomingMessage` (unread): the body is read here and every content coding removed.
 * - fetch `Response`: the Fetch standard already removed gzip/deflate/br codings; a corrupt body
 *   surfaces as a read error, reported as `SnapshotError('Decompression')`.
 * - supertest response: superagent already decoded the body; `text` (or a Buffer `body`) is used.
 *
 * @example
 * const res = await fetch('http://127.0.0.1:3000/health');
 * const snap = await snapshotResponse(res);
 * snap.status; // 200
 */
export async function snapshotResponse(res: Response | IncomingMessage | SupertestLikeResponse): Promise<ResponseSnapshot> {
  if (isFetchResponse(res)) {
    let body: Buffer;
    try {
      body = Buffer.from(await res.arrayBuffer());
    } catch (err) {
      throw new SnapshotError('Decompression', `Response body could not be read: ${(err as Error).message}`, { cause: err });
    }
    return snapshotFromParts({ status: res.status, headers: res.headers.entries(), body, decoded: true });
  }
  if (isIncomingMessage(res)) {
    const body = await readStream(res);
    return snapshotFromParts({ status: res.statusCode ?? 0, headers: pairsFromRaw(res.rawHeaders), body });
  }
  const st = res as SupertestLikeResponse;
  let body: Buffer;
  if (Buffer.isBuffer(st.body)) body = st.body;
  else if (typeof st.text === 'string') body = Buffer.from(st.text, 'utf8');
  else if (st.body !== undefined && st.body !== null && typeof st.body === 'object' && Object.keys(st.body).length > 0) body = Buffer.from(JSON.stringify(st.body));
  else body = Buffer.alloc(0);
  return snapshotFromParts({ status: st.status, headers: st.headers, body, decoded: true });
}
