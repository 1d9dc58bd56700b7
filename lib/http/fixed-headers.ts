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

/** node's header map: the lowercased name to `[name as given, value]`. */
export type HeaderMap = Record<string, [string, unknown]>;
type WithMap = ServerResponse & Record<symbol, HeaderMap | null | undefined>;

/** Check a header once (node's own checks, so the same names and values are refused with the same errors). */
export function fixedHeader(name: string, value: string): FixedHeader {
  validateHeaderName(name);
  validateHeaderValue(name, value);
  return Object.freeze({ name, key: name.toLowerCase(), value });
}

/** node's header map of `res` when writing into it is what setHeader would do, else undefined. */
export function headerMap(res: ServerResponse): HeaderMap | undefined {
  if (kOutHeaders === undefined || res.setHeader !== nativeSetHeader || res.headersSent) return undefined;
  const r = res as WithMap;
  let map = r[kOutHeaders];
  if (map === undefined) return undefined;
  // node makes `{ __proto__: null }`, which V8 keeps in dictionary mode: every header then costs a hash
  // insert, and writing the head enumerates the dictionary and sorts its keys. A map in V8's fast mode is
  // enumerated from its cache. Object.create of an empty, frozen, null-prototype object is such a map with
  // nothing to inherit (no name resolves through it), at a fraction of Object.setPrototypeOf({}, null)'s
  // runtime call (≈ 580 instructions per response).
  if (map === null) r[kOutHeaders] = map = Object.create(NOTHING) as HeaderMap;
  return map;
}

/** The prototype of the header maps made here: no properties, no prototype, frozen. */
const NOTHING: object = Object.freeze(Object.create(null));

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

/**
 * `res.setHeader('Content-Type', type)` (when given) and `res.setHeader('Content-Length', length)` for an answer
 * keel wrote itself (lib/app/respond.ts, lib/http/problem.ts). Literal keys: setCheckedHeader's store by a key
 * argument is megamorphic (every header's name passes there), V8's generic keyed store, ≈ 300 instructions per
 * response for these two.
 */
export function setTypeAndLength(res: ServerResponse, type: string | undefined, length: string | number): void {
  const map = headerMap(res);
  if (map === undefined) {
    if (type !== undefined) res.setHeader('Content-Type', type);
    res.setHeader('Content-Length', length);
    return;
  }
  if (type !== undefined) map['content-type'] = ['Content-Type', type];
  map['content-length'] = ['Content-Length', length];
}

/** node's header map of `res` to read (null: no header set yet), or undefined when `res.getHeader` must be called. */
export function readableHeaderMap(res: ServerResponse): HeaderMap | null | undefined {
  if (kOutHeaders === undefined || res.getHeader !== nativeGetHeader) return undefined;
  return (res as WithMap)[kOutHeaders];
}

/** `res.getHeader(name)` for a lowercase `key`, without lowercasing it again. */
export function getCheckedHeader(res: ServerResponse, key: string): string | number | string[] | undefined {
  if (kOutHeaders === undefined || res.getHeader !== nativeGetHeader) return res.getHeader(key);
  const map = (res as WithMap)[kOutHeaders];
  if (map === undefined) return res.getHeader(key);
  return (map?.[key]?.[1] ?? undefined) as string | number | string[] | undefined;
}
