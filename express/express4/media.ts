/*!
 * Express 4's media types, for its response prototype: extensions and default charsets from `mime` 1 (through
 * `send` 0.19), whose table differs from mime-types 3 (e.g. `js` is application/javascript there, text/javascript in
 * Express 5), so Express 4 apps get the same headers as on Express 4.
 *
 * Ported from express (lib/utils.js and lib/response.js of express 4.x), MIT License,
 * Copyright(c) 2009-2013 TJ Holowaychuk, Copyright(c) 2014-2015 Douglas Christopher Wilson.
 */
import { createRequire } from 'node:module';
import { acceptParams, cached, type MediaTypes } from '../response-helpers.js';

const require = createRequire(import.meta.url);

interface Mime1 {
  lookup(path: string, fallback?: string): string;
  charsets: { lookup(mime: string, fallback?: string): string | undefined };
}
let mime1: Mime1 | undefined;
/** serve-static 1's `mime` (its send 0.19's), which keel/express4 has loaded already for `express.static`: the
 * first response does not load a second send and mime table, as Express 4's one send serves both. */
export function legacyMime(): Mime1 {
  return (mime1 ??= require('serve-static-v1').mime as Mime1);
}

const CHARSET = /;\s*charset\s*=/;

/** Express 4's media types. A new table, with its own caches, per prototype. */
export function mediaTypes4(): MediaTypes {
  return {
    headerValue: cached((value) => {
      if (CHARSET.test(value)) return value;
      const charset = legacyMime().charsets.lookup(value.split(';')[0]!);
      return charset ? value + '; charset=' + charset.toLowerCase() : value;
    }),
    forType: cached((type) => (type.indexOf('/') === -1 ? legacyMime().lookup(type) : type)) as (t: string) => string,
    normalizeType: (type) =>
      type.indexOf('/') !== -1 ? acceptParams(type) : { value: legacyMime().lookup(type), params: {} },
  };
}
