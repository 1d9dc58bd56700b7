/**
 * Writing a KeelResponse to node's ServerResponse without Express's res.json/res.send: JSON is
 * serialised once with JSON.stringify, strings and bytes written as they are, streams piped.
 */
import { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { KeelResponse, ResponseCookie } from './handler.js';
import { setTypeAndLength } from '../http/fixed-headers.js';

const JSON_TYPE = 'application/json';
const TEXT_TYPE = 'text/plain; charset=utf-8';
const BYTES_TYPE = 'application/octet-stream';
/**
 * JSON bodies longer than this (UTF-16 units) are encoded to bytes once before writing; shorter ones
 * stay strings, which node writes together with the head in one buffer.
 */
const ENCODE_ONCE_FROM = 4096;

/** RFC 6265 §4.1.1 Set-Cookie serialisation. Names and values are checked, never silently mangled. */
export function serializeCookie(c: ResponseCookie): string {
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(c.name)) throw new TypeError(`Invalid cookie name ${JSON.stringify(c.name)}`);
  const value = encodeURIComponent(c.value);
  let s = `${c.name}=${value}`;
  if (c.maxAge !== undefined) s += `; Max-Age=${Math.floor(c.maxAge)}`;
  if (c.expires) s += `; Expires=${c.expires.toUTCString()}`;
  if (c.domain) s += `; Domain=${c.domain}`;
  if (c.path) s += `; Path=${c.path}`;
  if (c.secure) s += '; Secure';
  if (c.httpOnly) s += '; HttpOnly';
  if (c.sameSite) s += `; SameSite=${c.sameSite}`;
  return s;
}

function isStream(v: unknown): v is Readable | AsyncIterable<unknown> {
  return v instanceof Readable || (typeof v === 'object' && v !== null && Symbol.asyncIterator in v);
}

/** Statuses that never carry a body (RFC 9110 §15.2, §15.3.5, §15.4.5). */
function noBody(status: number): boolean {
  return status === 204 || status === 304 || (status >= 100 && status < 200);
}

/**
 * Write `r` to `res`. Synchronous unless the content is a stream: then the returned promise
 * settles when the stream has been handed to the socket.
 */
export function writeResponse(res: ServerResponse, r: KeelResponse, json?: string): void | Promise<void> {
  if (res.writableEnded) return;
  res.statusCode = r.status_code;
  let hasType = false;
  for (const key in r.headers) {
    const v = r.headers[key]!;
    if (key.length === 12 && key.toLowerCase() === 'content-type') hasType = true;
    res.setHeader(key, v);
  }
  if (r.cookies.length) {
    const prev = res.getHeader('set-cookie');
    const list = prev === undefined ? [] : Array.isArray(prev) ? prev : [String(prev)];
    res.setHeader('Set-Cookie', [...list, ...r.cookies.map(serializeCookie)]);
  }
  return json === undefined ? writeContent(res, r.status_code, r.content, hasType) : writeJson(res, r.status_code, json, hasType);
}

/**
 * Write a handler's plain return value (not a Response): 200 with the value, 204 for undefined.
 * The common case of a route, so it skips building a Response object.
 */
export function writeValue(res: ServerResponse, value: unknown, json?: string): void | Promise<void> {
  if (res.writableEnded) return;
  if (json !== undefined) return writeJson(res, 200, json, false);
  return writeContent(res, value === undefined ? 204 : 200, value === undefined ? null : value, false);
}

function writeContent(res: ServerResponse, status: number, c: unknown, hasType: boolean): void | Promise<void> {
  if (noBody(status) || c === null || c === undefined) {
    res.statusCode = status;
    if (!noBody(status)) res.setHeader('Content-Length', 0);
    res.end();
    return;
  }
  if (typeof c === 'string') return endWith(res, status, c, Buffer.byteLength(c), hasType ? undefined : TEXT_TYPE);
  if (c instanceof Uint8Array) return endWith(res, status, c, c.byteLength, hasType ? undefined : BYTES_TYPE);
  if (isStream(c)) {
    res.statusCode = status;
    if (!hasType) res.setHeader('Content-Type', BYTES_TYPE);
    const source = c instanceof Readable ? c : Readable.from(c as AsyncIterable<unknown>);
    return pipeline(source, res).catch(() => {
      // The client went away or the source failed mid-stream: the status line is gone, so the only
      // honest signal left is an aborted connection.
      if (!res.writableEnded) res.destroy();
    });
  }
  return writeJson(res, status, JSON.stringify(c), hasType);
}

/** A JSON text (JSON.stringify's, or a route's compiled serialiser's: lib/app/pipeline/contract.ts). */
function writeJson(res: ServerResponse, status: number, body: string, hasType: boolean): void {
  if (noBody(status)) return void writeContent(res, status, null, hasType);
  if (body.length > ENCODE_ONCE_FROM) {
    // Encoded once here: Buffer.byteLength plus the socket's own encoding would walk a long string twice.
    const bytes = Buffer.from(body);
    return endWith(res, status, bytes, bytes.byteLength, hasType ? undefined : JSON_TYPE);
  }
  return endWith(res, status, body, Buffer.byteLength(body), hasType ? undefined : JSON_TYPE);
}

const nativeWriteHead = ServerResponse.prototype.writeHead;

/**
 * Status, type, length and body in one go. The type is one of this file's constants and the length a
 * number, so nothing for node's header checks to find: they go into node's header map directly
 * (lib/http/fixed-headers.ts), and writeHead(status) writes the map without checking each name and
 * value again (a header list given to writeHead() is checked pair by pair: two regular expressions per
 * header on every response). Headers set earlier are kept; a response whose writeHead is wrapped
 * (compression decides at end() on the whole body) gets the headers and its status, and end() writes the head.
 */
function endWith(res: ServerResponse, status: number, body: string | Uint8Array, length: number, type: string | undefined): void {
  const native = res.writeHead === nativeWriteHead;
  // As before: node's writeHead stored the length as text; a wrapper sees the number it always saw.
  setTypeAndLength(res, type, native ? String(length) : length);
  if (native) res.writeHead(status);
  else res.statusCode = status;
  res.end(body);
}
