/*!
 * Helpers of keel/express's response prototype: Express 5's media types, charset handling and JSON (Express 4's
 * media types are its overlay's, express4/media.ts).
 *
 * Ported from express (lib/utils.js and lib/response.js of express 5.x), MIT License,
 * Copyright(c) 2009-2013 TJ Holowaychuk, Copyright(c) 2014-2015 Douglas Christopher Wilson.
 */

import { createRequire } from 'node:module';
import type mimeTypesLib from 'mime-types';
import contentType from 'content-type';

const require = createRequire(import.meta.url);

let mimeTypes3: typeof mimeTypesLib | undefined;
/** mime-types 3 (Express 5's table), loaded on first use: keel/express4 never loads it, nor its mime-db. */
function mimeTypes(): typeof mimeTypesLib {
  return (mimeTypes3 ??= require('mime-types') as typeof mimeTypesLib);
}

/**
 * Results of pure string transforms (a Content-Type value in, a header value out) kept so the hot path does not
 * re-parse the same few media types on every response. Bounded: apps set a handful of types; anything past the
 * bound is computed each time rather than cached, so a stream of distinct values cannot grow memory.
 */
const CACHE_LIMIT = 256;
export function cached(fn: (value: string) => string | false): (value: string) => string | false {
  const cache = new Map<string, string | false>();
  return (value: string) => {
    let out = cache.get(value);
    if (out === undefined) {
      out = fn(value);
      if (cache.size < CACHE_LIMIT) cache.set(value, out);
    }
    return out;
  };
}

/** The media-type rules of a response prototype (Express 5's here, Express 4's in its overlay). */
export interface MediaTypes {
  /** What `res.set('Content-Type', value)` stores (a charset added when the type has a default one). */
  headerValue(value: string): string | false;
  /** What `res.type(type)` sets: an extension or name resolved to a media type, a media type kept. */
  forType(type: string): string;
  /** `res.format`'s key normalisation: `{ value, params }`. */
  normalizeType(type: string): { value: string; quality?: number; params: Record<string, string> };
}

/** Express 5's media types: mime-types 3 (loaded on first use). A new table, with its own caches, per prototype. */
export function mediaTypes(): MediaTypes {
  return {
    headerValue: cached((value) => mimeTypes().contentType(value)),
    forType: cached((type) =>
      type.indexOf('/') === -1 ? mimeTypes().contentType(type) || 'application/octet-stream' : type) as (t: string) => string,
    normalizeType: (type) =>
      type.indexOf('/') !== -1
        ? acceptParams(type)
        : { value: mimeTypes().lookup(type) || 'application/octet-stream', params: {} },
  };
}

/** Express's `setCharset(type, 'utf-8')`: the media type with its charset parameter replaced (cached per type). */
export const withUtf8 = cached((type: string) => {
  const parsed = contentType.parse(type);
  parsed.parameters = { ...parsed.parameters, charset: 'utf-8' };
  return contentType.format(parsed);
}) as (type: string) => string;

/** Parses `type/subtype;q=0.5;a=b` into value, quality and params, as Express's private `acceptParams`. */
export function acceptParams(str: string): { value: string; quality: number; params: Record<string, string> } {
  const length = str.length;
  const semicolon = str.indexOf(';');
  let index = semicolon === -1 ? length : semicolon;
  const ret = { value: str.slice(0, index).trim(), quality: 1, params: {} as Record<string, string> };
  while (index < length) {
    const splitIndex = str.indexOf('=', index);
    if (splitIndex === -1) break;
    const colonIndex = str.indexOf(';', index);
    const endIndex = colonIndex === -1 ? length : colonIndex;
    if (splitIndex > endIndex) {
      index = str.lastIndexOf(';', splitIndex - 1) + 1;
      continue;
    }
    const key = str.slice(index, splitIndex).trim();
    const value = str.slice(splitIndex + 1, endIndex).trim();
    if (key === 'q') ret.quality = parseFloat(value);
    else ret.params[key] = value;
    index = endIndex + 1;
  }
  return ret;
}

const HTML_SNIFF = /[<>&]/g;
function escapeSniff(c: string): string {
  return c === '<' ? '\\u003c' : c === '>' ? '\\u003e' : '\\u0026';
}

/** JSON.stringify with the app's replacer/spaces, and `<`, `>`, `&` escaped when 'json escape' is on. */
export function stringify(value: unknown, replacer: any, spaces: any, escape: unknown): string {
  // the one-argument call is the fast path V8 optimises
  let json: string = replacer || spaces ? JSON.stringify(value, replacer, spaces) : JSON.stringify(value);
  if (escape && typeof json === 'string') json = json.replace(HTML_SNIFF, escapeSniff);
  return json;
}
