/**
 * The headers res.json / res.send write themselves (Content-Type, Content-Length, ETag) and the ones they read
 * (content-type, etag, transfer-encoding), written into and read from node's header map directly
 * (lib/http/fixed-headers.ts) instead of through `res.set` → `res.setHeader`.
 *
 * Why: Express's res.json calls getHeader/setHeader six to eight times per answer; each call lower-cases the name,
 * each setHeader runs node's token and field-value regexes, and the lower-cased key is a new string hashed into a
 * dictionary-mode map (≈ 4k instructions per request on the express-engine bench). The values here are the engine's
 * own (a number's digits, an entity tag, the media table's type for 'application/json'), valid by construction.
 *
 * Only while nobody can tell: `res.set` must be the engine's own (an app or a test that replaced it sees every call,
 * as on Express) and `res.setHeader`/`res.getHeader` node's (an APM's wrapper keeps seeing every call, through
 * fixed-headers' own check), and the head not sent yet (then `res.set` throws as on Express). Otherwise each
 * function here does what Express does: `res.set(name, value)` or `res.getHeader(name)`.
 */
import { headerMap, readableHeaderMap as readableMap, type HeaderMap } from '../lib/http/fixed-headers.js';
import type { MediaTypes } from './response-helpers.js';

/** On the engine's own `res.set` functions: the media table `res.set('Content-Type', …)` resolves types with. */
const ENGINE_SET = Symbol('keel.express.engineSet');

/** Marks `set` as the engine's `res.set` for `media` (express/response.ts installs it). */
export function markEngineSet(set: object, media: MediaTypes): void {
  Object.defineProperty(set, ENGINE_SET, { value: media });
}

/** node's header map of `res` when writing into it is exactly what `res.set(name, value)` would do. */
function engineMap(res: any): HeaderMap | undefined {
  const set = res.set;
  return typeof set === 'function' && set[ENGINE_SET] !== undefined ? headerMap(res) : undefined;
}

// One function per header, each reading and writing its key by name: a key passed as an argument made every
// access a keyed one, megamorphic across the three names (≈ 100-190 instructions each).

/** `res.getHeader('content-type')`. */
export function contentTypeOf(res: any): unknown {
  const map = readableMap(res);
  if (map === undefined) return res.getHeader('content-type');
  return map === null ? undefined : map['content-type']?.[1];
}

/** `res.getHeader('etag')`. */
export function etagOf(res: any): unknown {
  const map = readableMap(res);
  if (map === undefined) return res.getHeader('etag');
  return map === null ? undefined : map.etag?.[1];
}

/** `res.getHeader('transfer-encoding')`. */
export function transferEncodingOf(res: any): unknown {
  const map = readableMap(res);
  if (map === undefined) return res.getHeader('transfer-encoding');
  return map === null ? undefined : map['transfer-encoding']?.[1];
}

/** `res.set('Content-Length', value)` for a length the engine measured. */
export function setContentLength(res: any, value: string): void {
  const map = engineMap(res);
  if (map === undefined) res.set('Content-Length', value);
  else map['content-length'] = ['Content-Length', value];
}

/** `res.set('ETag', value)` for an entity tag the engine computed. */
export function setETag(res: any, value: string): void {
  const map = engineMap(res);
  if (map === undefined) res.set('ETag', value);
  else map.etag = ['ETag', value];
}

/** res.json's `if (!res.get('Content-Type')) res.set('Content-Type', 'application/json')`. */
export function defaultJsonType(res: any): void {
  const map = engineMap(res);
  if (map === undefined) {
    if (!res.getHeader('content-type')) res.set('Content-Type', 'application/json');
    return;
  }
  const entry = map['content-type'];
  if (entry !== undefined && entry[1]) return;
  const media: MediaTypes = res.set[ENGINE_SET];
  map['content-type'] = ['Content-Type', media.headerValue('application/json') as string];
}

/**
 * app.handle's `res.setHeader('X-Powered-By', 'Express')` (Express calls setHeader itself, not res.set): written
 * into node's map while setHeader is node's own, so an APM that wrapped it still sees the call.
 */
export function setPoweredBy(res: any): void {
  const map = headerMap(res);
  if (map === undefined) res.setHeader('X-Powered-By', 'Express');
  else map['x-powered-by'] = ['X-Powered-By', 'Express'];
}
