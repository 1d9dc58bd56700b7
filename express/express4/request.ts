/*!
 * Express 4's `request` prototype: Express 5's (request.ts) negotiating with Express 4's libraries, with the
 * getters whose rules differ replaced (`req.host` is a deprecated alias of `req.hostname`, freshness without QUERY
 * and with both validators required, no `req.query` getter: the app sets it, application.ts) and Express 4's
 * deprecated API added (`req.param()`, the singular `accepts*` aliases).
 *
 * Ported from express (lib/request.js of express 4.x), MIT License,
 * Copyright(c) 2009-2013 TJ Holowaychuk, Copyright(c) 2013 Roman Shtylman,
 * Copyright(c) 2014-2015 Douglas Christopher Wilson.
 */
import { createRequire } from 'node:module';
import depd from 'depd';
import type accepts from 'accepts';
import type typeis from 'type-is';
import type parseRange from 'range-parser';
import {
  createRequestPrototype, defineGetter, forwardedHost, hostnameOf, isFreshResponse,
  type ExpressRequestLike, type RequestLibraries,
} from '../request.js';

const require = createRequire(import.meta.url);
const deprecate = depd('express');

/**
 * Express 4 ships older majors whose answers differ: range-parser 1.2 reads a malformed range as unsatisfiable (-1)
 * where 1.3 says invalid (-2); accepts 1.3 and type-is 1.6 resolve extensions with mime-types 2 (`js` is
 * application/javascript there, text/javascript in mime-types 3). Each loaded on first use (literal requires, for
 * bundlers).
 */
function libraries4(): RequestLibraries {
  let a: typeof accepts | undefined;
  let t: typeof typeis | undefined;
  let r: typeof parseRange | undefined;
  return {
    accepts: () => (a ??= require('accepts-v1') as typeof accepts),
    typeis: () => (t ??= require('type-is-v1') as typeof typeis),
    parseRange: () => (r ??= require('range-parser-v1-2') as typeof parseRange),
  };
}

/**
 * Builds a fresh Express 4 `request` prototype.
 *
 * @example
 * const request = createRequestPrototype4();
 */
export function createRequestPrototype4(): any {
  const req = createRequestPrototype(libraries4());
  defineGetter(req, 'hostname', function hostname(this: ExpressRequestLike) {
    return hostnameOf(forwardedHost.call(this));
  });
  defineGetter(req, 'host', deprecate.function(function host(this: any) {
    return this.hostname;
  }, 'req.host: Use req.hostname instead'));
  defineGetter(req, 'fresh', function fresh(this: ExpressRequestLike) {
    // GET and HEAD for weak freshness validation only
    const method = this.method;
    return (method === 'GET' || method === 'HEAD') && isFreshResponse(this, false);
  });
  // Express 4's `req.query` is a plain property its app's query step assigns once per request (application.ts
  // handle4), which middleware may assign too: no getter in the chain, or that assignment would hit it
  delete req.query;
  installDeprecated(req);
  return req;
}

/** Express 4's deprecated request API: `req.param()` and the singular `accepts*` aliases. */
function installDeprecated(req: any): void {
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
