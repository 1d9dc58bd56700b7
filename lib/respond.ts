/**
 * Writing a KeelResponse to node's ServerResponse without Express's res.json/res.send: JSON is
 * serialised once with JSON.stringify, strings and bytes written as they are, streams piped.
 */
import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { KeelResponse, ResponseCookie } from './handler.js';

const JSON_TYPE = 'application/json';
const TEXT_TYPE = 'text/plain; charset=utf-8';
const BYTES_TYPE = 'application/octet-stream';

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

/** Write `r` to `res`. Returns when the body has been handed to the socket. */
export async function writeResponse(res: ServerResponse, r: KeelResponse): Promise<void> {
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
  const c = r.content;
  if (noBody(r.status_code) || c === null || c === undefined) {
    if (!noBody(r.status_code)) res.setHeader('Content-Length', 0);
    res.end();
    return;
  }
  if (typeof c === 'string') {
    if (!hasType) res.setHeader('Content-Type', TEXT_TYPE);
    res.setHeader('Content-Length', Buffer.byteLength(c));
    res.end(c);
    return;
  }
  if (c instanceof Uint8Array) {
    if (!hasType) res.setHeader('Content-Type', BYTES_TYPE);
    res.setHeader('Content-Length', c.byteLength);
    res.end(c);
    return;
  }
  if (isStream(c)) {
    if (!hasType) res.setHeader('Content-Type', BYTES_TYPE);
    const source = c instanceof Readable ? c : Readable.from(c as AsyncIterable<unknown>);
    await pipeline(source, res).catch(() => {
      // The client went away or the source failed mid-stream: the status line is gone, so the only
      // honest signal left is an aborted connection.
      if (!res.writableEnded) res.destroy();
    });
    return;
  }
  const body = JSON.stringify(c);
  if (!hasType) res.setHeader('Content-Type', JSON_TYPE);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
