/*!
 * keel/express response prototype: Express 5's `response` object. Express 4's differences (`res.send(status, body)`
 * forms, status validation, redirect bodies, its mime table…) are its overlay, express4/response.ts, which replaces
 * the methods that differ on a prototype built here with Express 4's media types.
 *
 * Ported from express (lib/response.js of express 5.x), MIT License,
 * Copyright(c) 2009-2013 TJ Holowaychuk, Copyright(c) 2014-2015 Douglas Christopher Wilson.
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
import { mediaTypes, type MediaTypes } from './response-helpers.js';
import { installFileMethods, contentDisposition } from './response-file.js';
import { markEngineSet } from './engine-headers.js';
import { installBodyMethods } from './response-send.js';

const deprecate = depd('express');

/**
 * Builds a fresh Express 5 `response` prototype (its chain includes `http.ServerResponse.prototype`), whose
 * `res.type`, `res.set('Content-Type')` and `res.format` resolve types with `media` (Express 5's by default).
 *
 * @example
 * const response = createResponsePrototype();
 * app.response = Object.create(response, { app: { value: app, writable: true, configurable: true, enumerable: true } });
 */
export function createResponsePrototype(media: MediaTypes = mediaTypes()): any {
  const res: any = Object.create(http.ServerResponse.prototype);
  installStatus(res);
  installHeaders(res, media);
  installNegotiation(res, media);
  installCookies(res);
  installRedirects(res);
  installBodyMethods(res);
  installFileMethods(res);
  res.render = render;
  return res;
}

/** res.status, res.sendStatus and res.links. */
function installStatus(res: any): void {
  res.status = function status(this: any, code: number) {
    if (!Number.isInteger(code)) {
      throw new TypeError(`Invalid status code: ${JSON.stringify(code)}. Status code must be an integer.`);
    }
    // node accepts 100–999 (RFC 9110 §15 defines three-digit codes)
    if (code < 100 || code > 999) {
      throw new RangeError(`Invalid status code: ${JSON.stringify(code)}. Status code must be greater than 99 and less than 1000.`);
    }
    this.statusCode = code;
    return this;
  };

  res.sendStatus = function sendStatus(this: any, statusCode: number) {
    const body = (statuses.message as Record<number, string | undefined>)[statusCode] || String(statusCode);
    this.status(statusCode);
    this.type('txt');
    return this.send(body);
  };

  res.links = function links(this: any, links: Record<string, string | string[]>) {
    let link = this.get('Link') || '';
    if (link) link += ', ';
    return this.set('Link', link + Object.keys(links).map((rel) => {
      const target = links[rel];
      // several links per relation (RFC 8288 §3.3)
      if (Array.isArray(target)) return target.map((one) => `<${one}>; rel="${rel}"`).join(', ');
      return '<' + target + '>; rel="' + rel + '"';
    }).join(', '));
  };
}

/** res.set/header, res.get, res.append, res.type/contentType, res.attachment and res.vary. */
function installHeaders(res: any, media: MediaTypes): void {
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
  // res.json/res.send write their own headers straight into node's map while res.set is this one (engine-headers.ts)
  markEngineSet(res.set, media);

  res.get = function get(this: any, field: string) {
    return this.getHeader(field);
  };

  res.append = function append(this: any, field: string, val: string | string[]) {
    const prev = this.get(field);
    let value: any = val;
    if (prev) {
      value = Array.isArray(prev) ? prev.concat(val) : Array.isArray(val) ? [prev].concat(val) : [prev, val];
    }
    return this.set(field, value);
  };

  res.contentType = res.type = function contentType(this: any, type: string) {
    return this.set('Content-Type', media.forType(type));
  };

  res.attachment = function attachment(this: any, filename?: string) {
    const name = filename !== undefined ? basename(filename) : undefined;
    if (name) this.type(extname(name));
    this.set('Content-Disposition', contentDisposition(name));
    return this;
  };

  res.vary = function varyField(this: any, field: string | string[]) {
    vary(this, field);
    return this;
  };
}

/** res.format: the handler of the type the request accepts best, else `default`, else a 406 to next(). */
function installNegotiation(res: any, media: MediaTypes): void {
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
}

/** res.cookie and res.clearCookie. */
function installCookies(res: any): void {
  res.clearCookie = function clearCookie(this: any, name: string, options?: any) {
    // Express 5 always expires the cookie, whatever expires/maxAge the caller passed
    const opts = { path: '/', ...options, expires: new Date(1) };
    delete opts.maxAge;
    return this.cookie(name, '', opts);
  };

  res.cookie = function setCookie(this: any, name: string, value: unknown, options?: any) {
    return appendCookie(this, name, value, { ...options });
  };
}

/** Appends the Set-Cookie of `name` (RFC 6265 §4.1) with `opts`, a copy of the caller's options this may change. */
export function appendCookie(res: any, name: string, value: unknown, opts: any): any {
  const secret = res.req.secret;
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
  res.append('Set-Cookie', cookie.serialize(name, String(val), opts));
  return res;
}

/** res.location and res.redirect. */
function installRedirects(res: any): void {
  res.location = function location(this: any, url: any) {
    return this.set('Location', encodeUrl(url));
  };

  res.redirect = function redirect(this: any, url: any) {
    let address = url;
    let status: any = 302;
    if (arguments.length === 2) {
      status = arguments[0];
      address = arguments[1];
    }
    if (!address) deprecate('Provide a url argument');
    if (typeof address !== 'string') deprecate('Url must be a string');
    if (typeof status !== 'number') deprecate('Status must be a number');
    address = this.location(address).get('Location');
    const message = (statuses.message as Record<number, string | undefined>)[status];
    const body = redirectBody(this, message, address, (u) =>
      '<!DOCTYPE html><head><title>' + message + '</title></head><body><p>' + message + '. Redirecting to ' + u + '</p></body>');
    this.status(status);
    endRedirect(this, body);
  };
}

/** The body of a redirect in the type the request accepts (res.format): text, `html(escaped address)`, or none. */
export function redirectBody(res: any, message: string | undefined, address: string, html: (escaped: string) => string): string {
  let body = '';
  res.format({
    text() {
      body = message + '. Redirecting to ' + address;
    },
    html() {
      body = html(escapeHtml(address));
    },
    default() {
      body = '';
    },
  });
  return body;
}

/** Sends a redirect's body with its length (none for HEAD). */
export function endRedirect(res: any, body: string): void {
  res.set('Content-Length', Buffer.byteLength(body));
  if (res.req.method === 'HEAD') res.end();
  else res.end(body);
}

/** res.render: the app renders the view with res.locals; the result is sent unless a callback takes it. */
function render(this: any, view: string, options?: any, callback?: any) {
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
}
