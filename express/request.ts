/*!
 * keel/express request prototype: Express 5's `request` object. Express 4's differences (its negotiation
 * libraries, `req.host`, freshness, an assignable `req.query`, `req.param()`) are its overlay,
 * express4/request.ts, which builds on this prototype.
 *
 * Ported from express (lib/request.js of express 5.x), MIT License,
 * Copyright(c) 2009-2013 TJ Holowaychuk, Copyright(c) 2013 Roman Shtylman,
 * Copyright(c) 2014-2015 Douglas Christopher Wilson.
 *
 * What it relies on is exactly what Express's own file relies on: `this.app.get(setting)` for 'trust proxy fn',
 * 'query parser fn' and 'subdomain offset', and `this.res` for freshness.
 */

import http from 'node:http';
import { createRequire } from 'node:module';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import querystring from 'node:querystring';
import type accepts from 'accepts';
import type typeis from 'type-is';
import type parseRange from 'range-parser';
import parseurl from 'parseurl';
import proxyaddr from 'proxy-addr';
import { isFresh } from './request-fresh.js';
import { parseExtendedQueryString, type AnyFn } from './utils.js';

/** What the request prototype needs from the application it is attached to (Express's `app.get(setting)`). */
export interface ExpressAppSettings {
  get(setting: string): any;
}

/** A request as the prototype's methods see it. */
export type ExpressRequestLike = IncomingMessage & {
  app: ExpressAppSettings;
  res: any;
  params?: any;
  body?: any;
  query?: any;
  get(name: string): string | string[] | undefined;
  [key: symbol]: any;
};

const require = createRequire(import.meta.url);

/** The negotiation and range libraries a request prototype calls, each loaded on its first call. */
export interface RequestLibraries {
  accepts(): typeof accepts;
  typeis(): typeof typeis;
  parseRange(): typeof parseRange;
}

/**
 * Express 5's: accepts 2, type-is 2 and range-parser 1.3. Each is loaded on the first call that needs it, not with
 * the engine: accepts and type-is bring a mime-db each (~10-30 ms of CPU to load), which an app whose requests never
 * negotiate never pays, and keel/express4 never loads them (`npm run bench:load`). The `require('…')` calls stay
 * literal so that a bundler bundling an app follows them.
 */
function libraries(): RequestLibraries {
  let a: typeof accepts | undefined;
  let t: typeof typeis | undefined;
  let r: typeof parseRange | undefined;
  return {
    accepts: () => (a ??= require('accepts') as typeof accepts),
    typeis: () => (t ??= require('type-is') as typeof typeis),
    parseRange: () => (r ??= require('range-parser') as typeof parseRange),
  };
}

/** Per-request cache of the parsed query: the url and parser it was parsed with, and the result. */
export const QUERY = Symbol('keel.express.query');

type QueryCache = { url: string | undefined; search?: unknown; parser: unknown; value: unknown };

/**
 * Builds a fresh Express 5 `request` prototype (its chain includes `http.IncomingMessage.prototype`), negotiating
 * with `lib` (Express 5's libraries by default).
 *
 * @example
 * const request = createRequestPrototype();
 * app.request = Object.create(request, { app: { value: app, writable: true, configurable: true, enumerable: true } });
 */
export function createRequestPrototype(lib: RequestLibraries = libraries()): any {
  const req: any = Object.create(http.IncomingMessage.prototype);
  installHeaders(req, lib);
  installProxyGetters(req);
  installHost(req);
  defineGetter(req, 'fresh', function fresh(this: ExpressRequestLike) {
    // GET, HEAD and QUERY for weak freshness validation only
    const method = this.method;
    return (method === 'GET' || method === 'HEAD' || method === 'QUERY') && isFreshResponse(this, true);
  });
  defineGetter(req, 'stale', function stale(this: any) {
    return !this.fresh;
  });
  // Express 5 parses `req.query` from the url on every read, so each read is a new object and a middleware's
  // writes to it do not persist (hpp, express-validator's sanitizers rely on it). The parse of keel's own parsers
  // is kept per request for as long as the url is the same, and each read gets a copy of it (parsedQuery).
  Object.defineProperty(req, 'query', {
    configurable: true,
    enumerable: true,
    get: function query(this: ExpressRequestLike) {
      return parsedQuery(this);
    },
  });
  return req;
}

/** req.get/header, content negotiation (accepts*), req.range, req.is, req.xhr and req.path. */
function installHeaders(req: any, lib: RequestLibraries): void {
  req.get = req.header = function header(this: ExpressRequestLike, name: string): string | string[] | undefined {
    if (!name) throw new TypeError('name argument is required to req.get');
    if (typeof name !== 'string') throw new TypeError('name must be a string to req.get');
    const lc = name.toLowerCase();
    // RFC 9110 §10.1.3 spells it "Referer"; Express answers for both spellings.
    if (lc === 'referer' || lc === 'referrer') return this.headers.referrer || this.headers.referer;
    return this.headers[lc];
  };

  req.accepts = function acceptsTypes(this: ExpressRequestLike, ...types: any[]) {
    return (lib.accepts()(this).types as any)(...types);
  };
  req.acceptsEncodings = function acceptsEncodings(this: ExpressRequestLike, ...encodings: any[]) {
    return (lib.accepts()(this).encodings as any)(...encodings);
  };
  req.acceptsCharsets = function acceptsCharsets(this: ExpressRequestLike, ...charsets: any[]) {
    return (lib.accepts()(this).charsets as any)(...charsets);
  };
  req.acceptsLanguages = function acceptsLanguages(this: ExpressRequestLike, ...languages: any[]) {
    return (lib.accepts()(this).languages as any)(...languages);
  };

  req.range = function range(this: ExpressRequestLike, size: number, options?: parseRange.Options) {
    const value = this.get('Range');
    if (!value) return;
    return lib.parseRange()(size, value as string, options);
  };

  req.is = function is(this: ExpressRequestLike, ...args: any[]) {
    // an array, or the arguments flattened (none at all: the request's media type, as Express answers)
    return lib.typeis()(this, Array.isArray(args[0]) ? args[0] : args);
  };

  defineGetter(req, 'xhr', function xhr(this: ExpressRequestLike) {
    const val = (this.get('X-Requested-With') as string) || '';
    return val.toLowerCase() === 'xmlhttprequest';
  });

  defineGetter(req, 'path', function path(this: ExpressRequestLike) {
    return parseurl(this)?.pathname;
  });
}

/** req.protocol, req.secure, req.ip and req.ips: the socket's, or the forwarded ones the 'trust proxy' setting trusts. */
function installProxyGetters(req: any): void {
  defineGetter(req, 'protocol', function protocol(this: ExpressRequestLike) {
    const proto = (this.socket as any).encrypted ? 'https' : 'http';
    const trust = this.app.get('trust proxy fn');
    if (!trust(this.socket.remoteAddress, 0)) return proto;
    // X-Forwarded-Proto is normally a single value; take the first of a list, as Express does.
    const header = (this.get('X-Forwarded-Proto') as string) || proto;
    const index = header.indexOf(',');
    return index !== -1 ? header.substring(0, index).trim() : header.trim();
  });

  defineGetter(req, 'secure', function secure(this: any) {
    return this.protocol === 'https';
  });

  defineGetter(req, 'ip', function ip(this: ExpressRequestLike) {
    return proxyaddr(this, this.app.get('trust proxy fn'));
  });

  defineGetter(req, 'ips', function ips(this: ExpressRequestLike) {
    const addrs = proxyaddr.all(this, this.app.get('trust proxy fn'));
    // farthest -> closest, without the socket address
    addrs.reverse().pop();
    return addrs;
  });
}

/** req.host (the forwarded-or-Host value), req.hostname and req.subdomains. */
function installHost(req: any): void {
  defineGetter(req, 'host', forwardedHost);
  defineGetter(req, 'hostname', function hostname(this: any) {
    return hostnameOf(this.host);
  });
  defineGetter(req, 'subdomains', function subdomains(this: any) {
    const hostname: string | undefined = this.hostname;
    if (!hostname) return [];
    const offset = this.app.get('subdomain offset');
    const parts = !isIP(hostname) ? hostname.split('.').reverse() : [hostname];
    return parts.slice(offset);
  });
}

/** The X-Forwarded-Host value when the proxy is trusted, else Host (undefined when empty). */
export function forwardedHost(this: ExpressRequestLike): string | undefined {
  const trust = this.app.get('trust proxy fn');
  let val = this.get('X-Forwarded-Host') as string | undefined;
  if (!val || !trust(this.socket.remoteAddress, 0)) {
    val = this.get('Host') as string | undefined;
  } else if (val.indexOf(',') !== -1) {
    // X-Forwarded-Host is normally a single value; take the first of a list.
    val = val.substring(0, val.indexOf(',')).trimEnd();
  }
  return val || undefined;
}

/** A host value without its port. */
export function hostnameOf(host: string | undefined): string | undefined {
  if (!host) return;
  // IPv6 literal (RFC 3986 §3.2.2): the port colon comes after the closing bracket
  const offset = host[0] === '[' ? host.indexOf(']') + 1 : 0;
  const index = host.indexOf(':', offset);
  return index !== -1 ? host.substring(0, index) : host;
}

/**
 * Whether the response under way is fresh for this (GET or HEAD) request: 2xx or 304 (RFC 9110 §13.1.3) and the
 * request's validators match. `noneMatchWins` is Express 5's rule (If-None-Match decides alone); false gives
 * Express 4's (both must match).
 */
export function isFreshResponse(req: ExpressRequestLike, noneMatchWins: boolean): boolean {
  const res = req.res;
  const status = res.statusCode;
  if ((status >= 200 && status < 300) || status === 304) {
    const headers = req.headers;
    // an unconditional request (the usual case) is never fresh: decided before reading the response's validators
    if (!headers['if-none-match'] && !headers['if-modified-since']) return false;
    return isFresh(headers, res.get('ETag'), res.get('Last-Modified'), noneMatchWins);
  }
  return false;
}

/**
 * The request's query as Express 5 gives it on each read: a new object parsed with the app's 'query parser fn'.
 * With keel's own parsers ('simple', 'extended') the parse is cached per url and parser and each read gets a deep
 * copy of it (plain objects, arrays and strings: cheaper than parsing again); an app's own parser function runs on
 * every read, as on Express, since what it returns cannot be copied knowingly.
 */
export function parsedQuery(req: ExpressRequestLike): unknown {
  const parser = req.app.get('query parser fn');
  // parsing disabled: an empty object without a prototype, as Express gives
  if (!parser) return Object.create(null);
  if (parser !== querystring.parse && parser !== parseExtendedQueryString) return parser(parseurl(req)?.query);
  return copyQuery(cachedQuery(req, parser));
}

/** The parse of the request's query with `parser`, kept per request for as long as the url is the same. */
function cachedQuery(req: ExpressRequestLike, parser: AnyFn): unknown {
  const url = req.url;
  const cache: QueryCache | undefined = req[QUERY];
  if (cache !== undefined && cache.url === url && cache.parser === parser) return cache.value;
  const search = parseurl(req)?.query;
  // a mount point rewrites req.url but not its query string: the parse still holds
  if (cache !== undefined && cache.search === search && cache.parser === parser && cache.url !== undefined) {
    cache.url = url;
    return cache.value;
  }
  const value = parser(search);
  req[QUERY] = { url, search, parser, value };
  return value;
}

/** A deep copy of a parsed query: objects (with their prototype, null for querystring's), arrays, strings. */
function copyQuery(value: unknown): any {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const list = new Array(value.length);
    for (let i = 0; i < value.length; i++) list[i] = copyQuery(value[i]);
    return list;
  }
  const copy: Record<string, unknown> = Object.create(Object.getPrototypeOf(value));
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const item = copyQuery((value as Record<string, unknown>)[key]);
    // an own '__proto__' key stays a key (an assignment would set the copy's prototype)
    if (key === '__proto__') Object.defineProperty(copy, key, { configurable: true, enumerable: true, writable: true, value: item });
    else copy[key] = item;
  }
  return copy;
}

export function defineGetter(obj: object, name: string, getter: (this: any) => unknown): void {
  Object.defineProperty(obj, name, { configurable: true, enumerable: true, get: getter });
}
