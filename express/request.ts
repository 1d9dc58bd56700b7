/*!
 * keel/express request prototype: Express's `request` object for Express 5 and Express 4.
 *
 * Ported from express (lib/request.js of express 5.x and 4.x), MIT License,
 * Copyright(c) 2009-2013 TJ Holowaychuk, Copyright(c) 2013 Roman Shtylman,
 * Copyright(c) 2014-2015 Douglas Christopher Wilson. One implementation; the differences between the majors are
 * branches on `major`, decided once when the prototype is built, never per request.
 *
 * What it relies on is exactly what Express's own file relies on: `this.app.get(setting)` for 'trust proxy fn',
 * 'query parser fn' and 'subdomain offset', `this.res` for freshness, and `this.params/body/query` for Express 4's
 * `req.param()`.
 */

import http from 'node:http';
import { createRequire } from 'node:module';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type accepts from 'accepts';
import type typeis from 'type-is';
import type parseRange from 'range-parser';
import parseurl from 'parseurl';
import proxyaddr from 'proxy-addr';
import depd from 'depd';
import { isFresh } from './request-fresh.js';

/** Which Express API a prototype implements. */
export type ExpressMajor = 4 | 5;

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

const deprecate = depd('express');
const require = createRequire(import.meta.url);

/** The negotiation and range libraries a request prototype calls, each loaded on its first call. */
interface RequestLibraries {
  accepts(): typeof accepts;
  typeis(): typeof typeis;
  parseRange(): typeof parseRange;
}

/**
 * Express 4 ships older majors of three of these libraries whose answers differ, so Express 4 mode uses those:
 * range-parser 1.2 reads a malformed range as unsatisfiable (-1) where 1.3 says invalid (-2); accepts 1.3 and
 * type-is 1.6 resolve extensions with mime-types 2 (`js` is application/javascript there, text/javascript in
 * mime-types 3). Each is loaded on the first call that needs it, not with the engine: accepts and type-is bring a
 * mime-db each (~10-30 ms of CPU to load), which an app whose requests never negotiate never pays, and an
 * Express 5 app never loads Express 4's copies nor the reverse (`npm run bench:load`). The `require('…')` calls stay
 * literal so that a bundler bundling an app follows them.
 */
function libraries(major: ExpressMajor): RequestLibraries {
  let a: typeof accepts | undefined;
  let t: typeof typeis | undefined;
  let r: typeof parseRange | undefined;
  if (major === 5) {
    return {
      accepts: () => (a ??= require('accepts') as typeof accepts),
      typeis: () => (t ??= require('type-is') as typeof typeis),
      parseRange: () => (r ??= require('range-parser') as typeof parseRange),
    };
  }
  return {
    accepts: () => (a ??= require('accepts-v1') as typeof accepts),
    typeis: () => (t ??= require('type-is-v1') as typeof typeis),
    parseRange: () => (r ??= require('range-parser-v1-2') as typeof parseRange),
  };
}

/** Per-request cache of the parsed query: the url and parser it was parsed with, and the result. */
const QUERY = Symbol('keel.express.query');

type QueryCache = { url: string | undefined; search?: unknown; parser: unknown; value: unknown };

/**
 * Builds a fresh Express `request` prototype for `major` (its chain includes `http.IncomingMessage.prototype`).
 *
 * @example
 * const request = createRequestPrototype(5);
 * app.request = Object.create(request, { app: { value: app, writable: true, configurable: true, enumerable: true } });
 */
export function createRequestPrototype(major: ExpressMajor): any {
  const req: any = Object.create(http.IncomingMessage.prototype);
  const lib = libraries(major);

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

  defineGetter(req, 'subdomains', function subdomains(this: any) {
    const hostname: string | undefined = this.hostname;
    if (!hostname) return [];
    const offset = this.app.get('subdomain offset');
    const parts = !isIP(hostname) ? hostname.split('.').reverse() : [hostname];
    return parts.slice(offset);
  });

  defineGetter(req, 'path', function path(this: ExpressRequestLike) {
    return parseurl(this)?.pathname;
  });

  // The forwarded-or-Host value; Express 5 exposes it as `req.host`, Express 4 only uses it for `req.hostname`.
  function forwardedHost(this: ExpressRequestLike): string | undefined {
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

  function hostname(this: ExpressRequestLike): string | undefined {
    const host = major === 5 ? (this as any).host : forwardedHost.call(this);
    if (!host) return;
    // IPv6 literal (RFC 3986 §3.2.2): the port colon comes after the closing bracket
    const offset = host[0] === '[' ? host.indexOf(']') + 1 : 0;
    const index = host.indexOf(':', offset);
    return index !== -1 ? host.substring(0, index) : host;
  }
  defineGetter(req, 'hostname', hostname);

  if (major === 5) {
    defineGetter(req, 'host', forwardedHost);
  } else {
    defineGetter(req, 'host', deprecate.function(function host(this: any) {
      return this.hostname;
    }, 'req.host: Use req.hostname instead'));
  }

  const noneMatchWins = major === 5;
  defineGetter(req, 'fresh', function fresh(this: ExpressRequestLike) {
    const method = this.method;
    const res = this.res;
    const status = res.statusCode;
    // GET, HEAD (and, in Express 5, QUERY) for weak freshness validation only
    if (method !== 'GET' && method !== 'HEAD' && !(major === 5 && method === 'QUERY')) return false;
    // 2xx or 304 (RFC 9110 §13.1.3)
    if ((status >= 200 && status < 300) || status === 304) {
      const headers = this.headers;
      // an unconditional request (the usual case) is never fresh: decided before reading the response's validators
      if (!headers['if-none-match'] && !headers['if-modified-since']) return false;
      return isFresh(headers, res.get('ETag'), res.get('Last-Modified'), noneMatchWins);
    }
    return false;
  });

  defineGetter(req, 'stale', function stale(this: any) {
    return !this.fresh;
  });

  defineGetter(req, 'xhr', function xhr(this: ExpressRequestLike) {
    const val = (this.get('X-Requested-With') as string) || '';
    return val.toLowerCase() === 'xmlhttprequest';
  });

  if (major === 5) {
    // Express 5 parses `req.query` from the url on access. The result is kept per request for as long as the url
    // and the parser are the same, so a handler reading `req.query.x` ten times parses once.
    Object.defineProperty(req, 'query', {
      configurable: true,
      enumerable: true,
      get: function query(this: ExpressRequestLike) {
        return parsedQuery(this);
      },
    });
  } else {
    // Express 4 assigns `req.query` once, in its query middleware (`if (!req.query) req.query = parse(...)`). Here
    // it is parsed on first read and assignable, so that middleware (or an app) can still set it.
    Object.defineProperty(req, 'query', {
      configurable: true,
      enumerable: true,
      get: function query(this: ExpressRequestLike) {
        const cache: QueryCache | undefined = this[QUERY];
        if (cache !== undefined && cache.parser === ASSIGNED) return cache.value;
        return parsedQuery(this);
      },
      set: function setQuery(this: ExpressRequestLike, value: unknown) {
        this[QUERY] = { url: undefined, parser: ASSIGNED, value };
      },
    });
    installExpress4Extras(req);
  }

  return req;
}

const ASSIGNED = Symbol('assigned');

function parsedQuery(req: ExpressRequestLike): unknown {
  const parser = req.app.get('query parser fn');
  // parsing disabled: an empty object without a prototype, as Express gives
  if (!parser) return Object.create(null);
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

/** Express 4's deprecated request API: `req.param()` and the singular `accepts*` aliases. */
function installExpress4Extras(req: any): void {
  req.acceptsEncoding = deprecate.function(req.acceptsEncodings, 'req.acceptsEncoding: Use acceptsEncodings instead');
  req.acceptsCharset = deprecate.function(req.acceptsCharsets, 'req.acceptsCharset: Use acceptsCharsets instead');
  req.acceptsLanguage = deprecate.function(req.acceptsLanguages, 'req.acceptsLanguage: Use acceptsLanguages instead');

  req.param = function param(this: ExpressRequestLike, name: string, defaultValue?: unknown) {
    const params = this.params || {};
    const body = this.body || {};
    const query = this.query || {};
    deprecate('req.param(' + (arguments.length === 1 ? 'name' : 'name, default') + '): Use req.params, req.body, or req.query instead');
    if (params[name] != null && Object.prototype.hasOwnProperty.call(params, name)) return params[name];
    if (body[name] != null) return body[name];
    if (query[name] != null) return query[name];
    return defaultValue;
  };
}

function defineGetter(obj: object, name: string, getter: (this: any) => unknown): void {
  Object.defineProperty(obj, name, { configurable: true, enumerable: true, get: getter });
}
