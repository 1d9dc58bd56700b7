/**
 * Response headers whose name and value a factory checked once, written without node's per-call checks.
 *
 * node's `setHeader(name, value)` runs the RFC 9110 token check on the name, the field-value check on
 * the value and lowercases the name on every call, then stores `[name, value]` under the lowercased
 * name in the response's header map. For a header a factory fixed at start-up (the security headers,
 * `Vary: Accept-Encoding`) or a value it checked itself (a request id of token characters) that work is
 * the same on every request: here it is done once (fixedHeader) and each response only gets its map
 * entries, which is all setHeader leaves behind. Where that map is not node's (an HTTP/2 compatibility
 * response, a runtime without it) or setHeader is not node's own (an instrumentation or a test wrapped
 * it, and must keep seeing every call), the headers go through `res.setHeader` as before.
 */
import { OutgoingMessage, validateHeaderName, validateHeaderValue, type ServerResponse } from 'node:http';

/** One header, checked: its name as given, the map key (lowercased) and its value. */
export interface FixedHeader {
  readonly name: string;
  readonly key: string;
  readonly value: string;
}

const nativeSetHeader = OutgoingMessage.prototype.setHeader;
const nativeGetHeader = OutgoingMessage.prototype.getHeader;
/** node's own header map (`{ __proto__: null, [lowercased name]: [name, value] }`), found by its symbol's name. */
const kOutHeaders: symbol | undefined = Object.getOwnPropertySymbols(new OutgoingMessage()).find((s) => s.description === 'kOutHeaders');

/**
 * A header map as node makes it, without a prototype's members to find, in V8's fast mode: node's
 * `{ __proto__: null }` is kept as a dictionary (every header a hash insert, and writing the head
 * enumerates it and sorts its keys), and `Object.setPrototypeOf({}, null)` is fast but a runtime call
 * (~580 instructions per response). Its prototype is empty, null-prototyped and frozen: a name such as
 * `constructor` finds nothing, as in node's map, and node's `for…in` sees its own entries only.
 */
const HeaderMapObject = function HeaderMap() {} as unknown as new () => HeaderMap;
HeaderMapObject.prototype = Object.freeze(Object.create(null) as object) as HeaderMap;

type HeaderMap = Record<string, [string, unknown]>;
type WithMap = ServerResponse & Record<symbol, HeaderMap | null | undefined>;

/** Check a header once (node's own checks, so the same names and values are refused with the same errors). */
export function fixedHeader(name: string, value: string): FixedHeader {
  validateHeaderName(name);
  validateHeaderValue(name, value);
  return Object.freeze({ name, key: name.toLowerCase(), value });
}

/** node's header map of `res` when writing into it is what setHeader would do, else undefined. */
function headerMap(res: ServerResponse): HeaderMap | undefined {
  if (kOutHeaders === undefined || res.setHeader !== nativeSetHeader || res.headersSent) return undefined;
  const r = res as WithMap;
  let map = r[kOutHeaders];
  if (map === undefined) return undefined;
  if (map === null) r[kOutHeaders] = map = new HeaderMapObject();
  return map;
}

/** `res.setHeader(h.name, h.value)` for each, without re-checking them. */
export function setFixedHeaders(res: ServerResponse, headers: readonly FixedHeader[]): void {
  const map = headerMap(res);
  if (map === undefined) {
    for (let i = 0; i < headers.length; i++) res.setHeader(headers[i]!.name, headers[i]!.value);
    return;
  }
  // A fresh entry per response: node's appendHeader() pushes onto an entry's value in place.
  for (let i = 0; i < headers.length; i++) map[headers[i]!.key] = [headers[i]!.name, headers[i]!.value];
}

/**
 * `res.setHeader(name, value)` for a name checked once (`key` its lowercase form) and a value the
 * caller has checked (or a number, as node stores a Content-Length given as one).
 */
export function setCheckedHeader(res: ServerResponse, name: string, key: string, value: string | number): void {
  const map = headerMap(res);
  if (map === undefined) res.setHeader(name, value);
  else map[key] = [name, value];
}

/** `res.getHeader(name)` for a lowercase `key`, without lowercasing it again. */
export function getCheckedHeader(res: ServerResponse, key: string): string | number | string[] | undefined {
  if (kOutHeaders === undefined || res.getHeader !== nativeGetHeader) return res.getHeader(key);
  const map = (res as WithMap)[kOutHeaders];
  if (map === undefined) return res.getHeader(key);
  return (map?.[key]?.[1] ?? undefined) as string | number | string[] | undefined;
}
