/*!
 * keel/express response prototype: Express's `response` object for Express 5 and Express 4.
 *
 * Ported from express (lib/response.js of express 5.x and 4.x), MIT License,
 * Copyright(c) 2009-2013 TJ Holowaychuk, Copyright(c) 2014-2015 Douglas Christopher Wilson. One implementation;
 * the differences between the majors are branches on `major` (Express 4's `res.send(status, body)` forms, status
 * validation, redirect bodies, mime table…), file transfer in response-file.ts.
 *
 * It relies on exactly what Express's own file relies on: `this.app.get(setting)` for 'etag fn', 'json replacer',
 * 'json spaces', 'json escape' and 'jsonp callback name', `this.app.enabled('etag')`, `this.req` (its `fresh`,
 * `method`, `query`, `accepts`, `next`, `secret`), `this.req.app.render` and `this.locals`.
 */

import http from 'node:http';
import { Buffer } from 'node:buffer';
import { basename, extname } from 'node:path';
import createError from 'http-errors';
import depd from 'depd';
import encodeUrl from 'encodeurl';
import escapeHtml from 'escape-html';
import statuses from 'statuses';
import { sign } from 'cookie-signature';
import cookie from 'cookie';
import vary from 'vary';
import type { ExpressMajor } from './request.js';
import { mediaTypes } from './response-helpers.js';
import { installFileMethods, contentDispositionFor } from './response-file.js';
import { installBodyMethods } from './response-send.js';

const deprecate = depd('express');

/** Express 4's utils-merge: every enumerable property of `src`, inherited ones included (for…in). */
function merge(dest: any, src: any): any {
  if (dest && src) for (const key in src) dest[key] = src[key];
  return dest;
}

/**
 * Builds a fresh Express `response` prototype for `major` (its chain includes `http.ServerResponse.prototype`).
 *
 * @example
 * const response = createResponsePrototype(5);
 * app.response = Object.create(response, { app: { value: app, writable: true, configurable: true, enumerable: true } });
 */
export function createResponsePrototype(major: ExpressMajor): any {
  const res: any = Object.create(http.ServerResponse.prototype);
  const media = mediaTypes(major);
  const v5 = major === 5;

  res.status = v5
    ? function status(this: any, code: number) {
        if (!Number.isInteger(code)) {
          throw new TypeError(`Invalid status code: ${JSON.stringify(code)}. Status code must be an integer.`);
        }
        // node accepts 100–999 (RFC 9110 §15 defines three-digit codes)
        if (code < 100 || code > 999) {
          throw new RangeError(`Invalid status code: ${JSON.stringify(code)}. Status code must be greater than 99 and less than 1000.`);
        }
        this.statusCode = code;
        return this;
      }
    : function status(this: any, code: any) {
        if ((typeof code === 'string' || Math.floor(code) !== code) && code > 99 && code < 1000) {
          deprecate('res.status(' + JSON.stringify(code) + '): use res.status(' + Math.floor(code) + ') instead');
        }
        this.statusCode = code;
        return this;
      };

  res.links = function links(this: any, links: Record<string, string | string[]>) {
    let link = this.get('Link') || '';
    if (link) link += ', ';
    return this.set('Link', link + Object.keys(links).map((rel) => {
      const target = links[rel];
      // Express 5 allows several links per relation (RFC 8288 §3.3)
      if (v5 && Array.isArray(target)) return target.map((one) => `<${one}>; rel="${rel}"`).join(', ');
      return '<' + target + '>; rel="' + rel + '"';
    }).join(', '));
  };

  installBodyMethods(res, major, media);

  res.sendStatus = function sendStatus(this: any, statusCode: number) {
    const body = (statuses.message as Record<number, string | undefined>)[statusCode] || String(statusCode);
    if (v5) this.status(statusCode);
    else this.statusCode = statusCode;
    this.type('txt');
    return this.send(body);
  };

  res.contentType = res.type = function contentType(this: any, type: string) {
    return this.set('Content-Type', media.forType(type));
  };

  res.format = function format(this: any, obj: Record<string, any>) {
    const req = this.req;
    const next = req.next;
    const keys = Object.keys(obj).filter((v) => v !== 'default');
    const key = keys.length > 0 ? req.accepts(keys) : false;
    this.vary('Accept');
    if (key) {
      this.set('Content-Type', media.normalizeType(key).value);
      obj[key](req, this, next);
    } else if (obj.default) {
      obj.default(req, this, next);
    } else {
      next(createError(406, { types: keys.map((k) => media.normalizeType(k).value) }));
    }
    return this;
  };

  res.attachment = function attachment(this: any, filename?: string) {
    if (v5) {
      const name = filename !== undefined ? basename(filename) : undefined;
      if (name) this.type(extname(name));
      this.set('Content-Disposition', contentDispositionFor(major, name));
    } else {
      if (filename) this.type(extname(filename));
      this.set('Content-Disposition', contentDispositionFor(major, filename));
    }
    return this;
  };

  res.append = function append(this: any, field: string, val: string | string[]) {
    const prev = this.get(field);
    let value: any = val;
    if (prev) {
      value = Array.isArray(prev) ? prev.concat(val) : Array.isArray(val) ? [prev].concat(val) : [prev, val];
    }
    return this.set(field, value);
  };

  res.set = res.header = function header(this: any, field: any, val?: any) {
    if (arguments.length === 2) {
      let value = Array.isArray(val) ? val.map(String) : String(val);
      // the usual spelling compared first: toLowerCase() allocates a new string on every call
      if (field.length === 12 && (field === 'Content-Type' || field.toLowerCase() === 'content-type')) {
        if (Array.isArray(value)) throw new TypeError('Content-Type cannot be set to an Array');
        value = media.headerValue(value) as string;
      }
      this.setHeader(field, value);
    } else {
      for (const key in field) this.set(key, field[key]);
    }
    return this;
  };

  res.get = function get(this: any, field: string) {
    return this.getHeader(field);
  };

  res.clearCookie = function clearCookie(this: any, name: string, options?: any) {
    if (v5) {
      // Express 5 always expires the cookie, whatever expires/maxAge the caller passed
      const opts = { path: '/', ...options, expires: new Date(1) };
      delete opts.maxAge;
      return this.cookie(name, '', opts);
    }
    if (options) {
      if (options.maxAge) deprecate('res.clearCookie: Passing "options.maxAge" is deprecated. In v5.0.0 of Express, this option will be ignored, as res.clearCookie will automatically set cookies to expire immediately. Please update your code to omit this option.');
      if (options.expires) deprecate('res.clearCookie: Passing "options.expires" is deprecated. In v5.0.0 of Express, this option will be ignored, as res.clearCookie will automatically set cookies to expire immediately. Please update your code to omit this option.');
    }
    return this.cookie(name, '', merge({ expires: new Date(1), path: '/' }, options));
  };

  res.cookie = function setCookie(this: any, name: string, value: unknown, options?: any) {
    const opts = v5 ? { ...options } : merge({}, options);
    const secret = this.req.secret;
    const signed = opts.signed;
    if (signed && !secret) throw new Error('cookieParser("secret") required for signed cookies');
    let val = typeof value === 'object' ? 'j:' + JSON.stringify(value) : String(value);
    if (signed) val = 's:' + sign(val, secret);
    if (opts.maxAge != null) {
      const maxAge = opts.maxAge - 0;
      if (!isNaN(maxAge)) {
        opts.expires = new Date(Date.now() + maxAge);
        // Max-Age is in seconds (RFC 6265 §5.2.2), Express's option in milliseconds
        opts.maxAge = Math.floor(maxAge / 1000);
      }
    }
    if (opts.path == null) opts.path = '/';
    this.append('Set-Cookie', cookie.serialize(name, String(val), opts));
    return this;
  };

  res.location = function location(this: any, url: any) {
    if (!v5 && url === 'back') {
      deprecate('res.location("back"): use res.location(req.get("Referrer") || "/") and refer to https://dub.sh/security-redirect for best practices');
      return this.set('Location', encodeUrl(this.req.get('Referrer') || '/'));
    }
    return this.set('Location', encodeUrl(v5 ? url : String(url)));
  };

  res.redirect = function redirect(this: any, url: any) {
    let address = url;
    let body = '';
    let status: any = 302;
    if (arguments.length === 2) {
      if (v5 || typeof arguments[0] === 'number') {
        status = arguments[0];
        address = arguments[1];
      } else {
        deprecate('res.redirect(url, status): Use res.redirect(status, url) instead');
        status = arguments[1];
      }
    }
    if (v5) {
      if (!address) deprecate('Provide a url argument');
      if (typeof address !== 'string') deprecate('Url must be a string');
      if (typeof status !== 'number') deprecate('Status must be a number');
    }
    address = this.location(address).get('Location');
    const message = (statuses.message as Record<number, string | undefined>)[status];
    this.format({
      text() {
        body = message + '. Redirecting to ' + address;
      },
      html() {
        const u = escapeHtml(address);
        body = v5
          ? '<!DOCTYPE html><head><title>' + message + '</title></head><body><p>' + message + '. Redirecting to ' + u + '</p></body>'
          : '<p>' + message + '. Redirecting to ' + u + '</p>';
      },
      default() {
        body = '';
      },
    });
    if (v5) this.status(status);
    else this.statusCode = status;
    this.set('Content-Length', Buffer.byteLength(body));
    if (this.req.method === 'HEAD') this.end();
    else this.end(body);
  };

  res.vary = function varyField(this: any, field: string | string[]) {
    if (!v5 && (!field || (Array.isArray(field) && !field.length))) {
      deprecate('res.vary(): Provide a field name');
      return this;
    }
    vary(this, field);
    return this;
  };

  res.render = function render(this: any, view: string, options?: any, callback?: any) {
    const app = this.req.app;
    let done = callback;
    let opts = options || {};
    const req = this.req;
    const self = this;
    if (typeof options === 'function') {
      done = options;
      opts = {};
    }
    opts._locals = self.locals;
    done = done || function rendered(err: unknown, str: string) {
      if (err) return req.next(err);
      self.send(str);
    };
    app.render(view, opts, done);
  };

  installFileMethods(res, major);
  return res;
}

