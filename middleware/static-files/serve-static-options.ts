/**
 * serve-static's options, checked when the factory runs: serve-static hands them to `send`, which
 * ignores unknown keys and misreads some values (`cacheControl: 'no-store'` is "on", `maxAge: '1 dya'` is 0,
 * `dotfiles: 'Deny'` throws on the first request); here each is a ConfigError naming the option.
 */
import type { ServerResponse } from 'node:http';
import type { Stats } from 'node:fs';
import { fail } from '../../lib/records/define.js';

/** serve-static's `setHeaders(res, path, stat)`: called just before a file's headers go out. */
export type ServeStaticSetHeaders = (res: ServerResponse, path: string, stat: Stats) => void;

/** serve-static's options (serve-static 2.2 names, meanings and defaults). */
export interface ServeStaticOptions {
  /** Answer `Range` requests (RFC 9110 §14) and send `Accept-Ranges: bytes`. Default true. */
  acceptRanges?: boolean;
  /** Send `Cache-Control` (`public, max-age=<maxAge>`). Default true. A string is a ConfigError: use `setHeaders`. */
  cacheControl?: boolean;
  /** Paths with a segment starting with `.`: `'ignore'` (404, default), `'deny'` (403), `'allow'`. */
  dotfiles?: 'allow' | 'deny' | 'ignore';
  /** Send a (weak) ETag and answer If-None-Match / If-Match (RFC 9110 §13). Default true. */
  etag?: boolean;
  /** Extensions tried, in order, for a path without one (`['html']`: `/about` serves `about.html`). Default none. */
  extensions?: string | readonly string[] | false;
  /** true (default): misses and client errors call `next()`; false: they call `next(err)`, and other methods get a 405. */
  fallthrough?: boolean;
  /** Add `immutable` to Cache-Control (RFC 8246). Default false. */
  immutable?: boolean;
  /** The page(s) served for a directory URL, in order; false: none. Default `'index.html'`. */
  index?: string | readonly string[] | false;
  /** Send Last-Modified. Default true. */
  lastModified?: boolean;
  /** Cache-Control max-age: milliseconds, or an `ms` string (`'1d'`, `'2 hours'`); capped at one year. Default 0. */
  maxAge?: number | string;
  /** `send`'s spelling of `maxAge`. */
  maxage?: number | string;
  /** A directory URL without its trailing slash gets a 301 to the slash form. Default true. */
  redirect?: boolean;
  /** Called with `(res, path, stat)` before a file is sent (never for a 404 or a redirect). */
  setHeaders?: ServeStaticSetHeaders | null | false;
}

/** The default `index` page of the serve-static form. */
export const DEFAULT_SERVE_STATIC_INDEX = 'index.html';
/** The default `dotfiles` policy of the serve-static form: dotfiles are not found. */
export const DEFAULT_SERVE_STATIC_DOTFILES = 'ignore';
/** The default `maxAge` of the serve-static form: `Cache-Control: public, max-age=0` (revalidate every use). */
export const DEFAULT_SERVE_STATIC_MAX_AGE = 0;

const BOOLEAN_KEYS = ['acceptRanges', 'cacheControl', 'etag', 'fallthrough', 'immutable', 'lastModified', 'redirect'] as const;
/** Every option the serve-static form accepts. */
export const SERVE_STATIC_OPTION_KEYS: readonly string[] = [...BOOLEAN_KEYS, 'dotfiles', 'extensions', 'index', 'maxAge', 'maxage', 'setHeaders'];

/** The grammar of the `ms` package, which `send` parses maxAge strings with (ms 2.1, MIT, © Vercel). */
const MS_STRING = /^(-?(?:\d+)?\.?\d+) *(milliseconds?|msecs?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w|years?|yrs?|y)?$/i;

/** What is handed to `send` (its option names), typed here so keel's declarations need no @types/send. */
export interface SendOptionsUsed {
  acceptRanges?: boolean;
  cacheControl?: boolean;
  dotfiles: 'allow' | 'deny' | 'ignore';
  etag?: boolean;
  extensions?: string[];
  immutable?: boolean;
  index?: string[];
  lastModified?: boolean;
  maxAge: number | string;
}

/** What the factory needs, checked. */
export interface CheckedServeStatic {
  fallthrough: boolean;
  redirect: boolean;
  setHeaders: ServeStaticSetHeaders | undefined;
  dotfiles: 'allow' | 'deny' | 'ignore';
  /** For `send`, without `root`. */
  send: SendOptionsUsed;
}

function nameList(key: string, value: unknown, where: string): string[] | false | undefined {
  if (value === undefined || value === false) return value;
  const list = typeof value === 'string' ? [value] : value;
  if (Array.isArray(list) && list.every((v) => typeof v === 'string' && v !== '')) return [...(list as string[])];
  return fail('serveStatic', where, key, value, 'a name, a list of names, or false');
}

/** serve-static's options checked and normalised, or a ConfigError naming the first bad one. */
export function checkServeStaticOptions(options: ServeStaticOptions, where: string): CheckedServeStatic {
  if (typeof options !== 'object') fail('serveStatic', where, '', options, 'an options object');
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!SERVE_STATIC_OPTION_KEYS.includes(key) && o[key] !== undefined) {
      fail('serveStatic', where, key, o[key], `one of serve-static's options (${SERVE_STATIC_OPTION_KEYS.join(', ')})`, 'A misspelt option would otherwise be ignored silently.');
    }
  }
  for (const key of BOOLEAN_KEYS) {
    const v = o[key];
    if (v === undefined || typeof v === 'boolean') continue;
    if (key === 'cacheControl' && typeof v === 'string') {
      fail('serveStatic', where, key, v, 'true or false (serve-static\'s cacheControl switches the header on or off)',
        'For your own Cache-Control value set it in setHeaders: (res) => res.setHeader(\'Cache-Control\', …), or use keel\'s record form staticFiles({ directory, route_prefix, cache_control }).');
    }
    fail('serveStatic', where, key, v, 'true or false');
  }
  const dotfiles = o.dotfiles ?? DEFAULT_SERVE_STATIC_DOTFILES;
  if (dotfiles !== 'allow' && dotfiles !== 'deny' && dotfiles !== 'ignore') fail('serveStatic', where, 'dotfiles', dotfiles, '"allow", "deny" or "ignore"');
  // serve-static: `opts.maxage || opts.maxAge || 0`.
  const maxAge = o.maxage || o.maxAge || DEFAULT_SERVE_STATIC_MAX_AGE;
  const maxAgeKey = o.maxage ? 'maxage' : 'maxAge';
  if (typeof maxAge === 'number' ? Number.isNaN(maxAge) || maxAge < 0 : typeof maxAge !== 'string' || !MS_STRING.test(maxAge) || maxAge.startsWith('-')) {
    fail('serveStatic', where, maxAgeKey, maxAge, 'milliseconds (>= 0) or a duration such as \'1d\' or \'2 hours\'');
  }
  const setHeaders = o.setHeaders;
  if (setHeaders && typeof setHeaders !== 'function') fail('serveStatic', where, 'setHeaders', setHeaders, 'a function (res, path, stat) => void');

  const sendOptions: SendOptionsUsed = { dotfiles, maxAge: maxAge as number | string };
  for (const key of ['acceptRanges', 'cacheControl', 'etag', 'immutable', 'lastModified'] as const) {
    if (o[key] !== undefined) sendOptions[key] = o[key] as boolean;
  }
  const extensions = nameList('extensions', o.extensions, where);
  if (extensions !== undefined) sendOptions.extensions = extensions === false ? [] : extensions;
  const index = nameList('index', o.index, where);
  if (index !== undefined) sendOptions.index = index === false ? [] : index;
  return {
    fallthrough: o.fallthrough !== false,
    redirect: o.redirect !== false,
    setHeaders: (setHeaders || undefined) as ServeStaticSetHeaders | undefined,
    dotfiles,
    send: sendOptions,
  };
}
