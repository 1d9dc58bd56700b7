/*!
 * `res.send`, `res.json` and `res.jsonp` of keel/express's response prototype, for Express 5 and Express 4.
 *
 * Ported from express (lib/response.js of express 5.x and 4.x), MIT License,
 * Copyright(c) 2009-2013 TJ Holowaychuk, Copyright(c) 2014-2015 Douglas Christopher Wilson.
 *
 * The body is handed to `res.end` as it came (a string stays a string) unless an ETag has to be computed, where
 * Express converts it to a Buffer once and hashes and sends that same Buffer; Content-Length, ETag and
 * freshness are computed exactly as Express computes them.
 */

import { Buffer } from 'node:buffer';
import { hash } from 'node:crypto';
import depd from 'depd';
import statuses from 'statuses';
import type { ExpressMajor } from './request.js';
import { stringify, withUtf8, type MediaTypes } from './response-helpers.js';
import { strongETag, weakETag } from './utils.js';

const deprecate = depd('express');

/** Characters JSON allows in strings but JavaScript (before ES2019) does not: escaped in JSONP bodies. */
/**
 * The `etag` package's entity tag (length in hex, then the first 27 base64 characters of the SHA-1 of the bytes),
 * hashed in one call straight from the string or Buffer: the same value Express's default `etag fn` gives, without
 * a Buffer copy of a string body or a Hash object per response.
 */
function entityTag(body: string | Buffer, len: number, weak: boolean): string {
  const tag = len === 0
    ? '"0-2jmj7l5rSw0yVb/vlWAYkK/YBwk"'
    : '"' + len.toString(16) + '-' + hash('sha1', body, 'base64').substring(0, 27) + '"';
  return weak ? 'W/' + tag : tag;
}

/**
 * Express's `res.set('Content-Type', setCharset(type, 'utf-8'))`, without the second setHeader when the type says
 * utf-8 already (res.json's, or any type set before): the header would get the value it has.
 */
function setUtf8(res: any, type: string): void {
  const utf8 = withUtf8(type);
  if (utf8 !== type) res.set('Content-Type', utf8);
}

const LINE_SEPARATORS = /[\u2028\u2029]/g;
const JSONP_CALLBACK_FORBIDDEN = /[^[\]\w$.]/g;

export function installBodyMethods(res: any, major: ExpressMajor, media: MediaTypes): void {
  const v5 = major === 5;

  res.send = function send(this: any, body?: any) {
    let chunk = body;
    let encoding: BufferEncoding | undefined;
    const req = this.req;

    if (!v5) {
      if (arguments.length === 2) {
        if (typeof arguments[0] !== 'number' && typeof arguments[1] === 'number') {
          deprecate('res.send(body, status): Use res.status(status).send(body) instead');
          this.statusCode = arguments[1];
        } else {
          deprecate('res.send(status, body): Use res.status(status).send(body) instead');
          this.statusCode = arguments[0];
          chunk = arguments[1];
        }
      }
      // res.send(status): the status message as a text body
      if (typeof chunk === 'number' && arguments.length === 1) {
        if (!this.get('Content-Type')) this.type('txt');
        deprecate('res.send(status): Use res.sendStatus(status) instead');
        this.statusCode = chunk;
        chunk = (statuses.message as Record<number, string | undefined>)[chunk];
      }
    }

    // headers read by their lower-case names: node lower-cases the name on each call, and a lower-case literal
    // comes back as is instead of as a new string
    switch (typeof chunk) {
      case 'string':
        if (v5) {
          encoding = 'utf8';
          const type = this.getHeader('content-type');
          if (typeof type === 'string') setUtf8(this, type);
          else this.type('html');
        } else if (!this.getHeader('content-type')) {
          this.type('html');
        }
        break;
      case 'boolean':
      case 'number':
      case 'object':
        if (chunk === null) {
          chunk = '';
        } else if (v5 ? ArrayBuffer.isView(chunk) : Buffer.isBuffer(chunk)) {
          if (!this.get('Content-Type')) this.type('bin');
        } else {
          return this.json(chunk);
        }
        break;
    }

    // Express 4 writes every string (including the '' of a null body) in utf-8 and says so in Content-Type
    if (!v5 && typeof chunk === 'string') {
      encoding = 'utf8';
      const type = this.getHeader('content-type');
      if (typeof type === 'string') setUtf8(this, type);
    }

    const etagFn = this.app.get('etag fn');
    const generateETag = !this.getHeader('etag') && typeof etagFn === 'function';

    let len: number | undefined;
    // the engine's own weak/strong generators (the 'etag' setting's true/'weak'/'strong'): tag computed here from
    // the body as it is; a user's `etag fn` gets a Buffer, as Express gives it
    const builtinETag = generateETag && (etagFn === weakETag || etagFn === strongETag) && chunk !== undefined &&
      (typeof chunk === 'string' || Buffer.isBuffer(chunk)) && (encoding === undefined || encoding === 'utf8');
    if (builtinETag) {
      const bytes: number = typeof chunk === 'string' ? Buffer.byteLength(chunk, 'utf8') : chunk.length;
      len = bytes;
      if (!v5 || !this.getHeader('transfer-encoding')) this.set('Content-Length', bytes);
      this.set('ETag', entityTag(chunk, bytes, etagFn === weakETag));
    } else if (chunk !== undefined) {
      if (Buffer.isBuffer(chunk)) {
        len = chunk.length;
      } else if (!generateETag && chunk.length < 1000) {
        // small and no ETag: measure the string, send it as is
        len = Buffer.byteLength(chunk, encoding);
      } else {
        // one conversion, then the same bytes are hashed and sent
        chunk = Buffer.from(chunk, encoding);
        encoding = undefined;
        len = chunk.length;
      }
      // Content-Length and Transfer-Encoding are exclusive (RFC 9112 §6.2); Express 4 always sets the length
      if (!v5 || !this.getHeader('transfer-encoding')) this.set('Content-Length', len);
    }

    if (generateETag && !builtinETag && len !== undefined) {
      const etag = etagFn(chunk, encoding);
      if (etag) this.set('ETag', etag);
    }

    if (req.fresh) {
      if (v5) this.status(304);
      else this.statusCode = 304;
    }

    // 204 and 304 carry no content (RFC 9110 §15.3.5, §15.4.5)
    const status = this.statusCode;
    if (status === 204 || status === 304) {
      this.removeHeader('Content-Type');
      this.removeHeader('Content-Length');
      this.removeHeader('Transfer-Encoding');
      chunk = '';
    }
    // 205 Reset Content: no content, and say so (RFC 9110 §15.3.6)
    if (status === 205) {
      this.set('Content-Length', '0');
      this.removeHeader('Transfer-Encoding');
      chunk = '';
    }

    if (req.method === 'HEAD') this.end();
    else this.end(chunk, encoding);
    return this;
  };

  res.json = function json(this: any, obj?: any) {
    let val = obj;
    if (!v5 && arguments.length === 2) {
      if (typeof arguments[1] === 'number') {
        deprecate('res.json(obj, status): Use res.status(status).json(obj) instead');
        this.statusCode = arguments[1];
      } else {
        deprecate('res.json(status, obj): Use res.status(status).json(obj) instead');
        this.statusCode = arguments[0];
        val = arguments[1];
      }
    }
    const app = this.app;
    const body = stringify(val, app.get('json replacer'), app.get('json spaces'), app.get('json escape'));
    if (!this.getHeader('content-type')) this.set('Content-Type', 'application/json');
    return this.send(body);
  };

  res.jsonp = function jsonp(this: any, obj?: any) {
    let val = obj;
    if (!v5 && arguments.length === 2) {
      if (typeof arguments[1] === 'number') {
        deprecate('res.jsonp(obj, status): Use res.status(status).jsonp(obj) instead');
        this.statusCode = arguments[1];
      } else {
        deprecate('res.jsonp(status, obj): Use res.status(status).jsonp(obj) instead');
        this.statusCode = arguments[0];
        val = arguments[1];
      }
    }
    const app = this.app;
    let body: string | undefined = stringify(val, app.get('json replacer'), app.get('json spaces'), app.get('json escape'));
    let callback = this.req.query[app.get('jsonp callback name')];

    if (!this.get('Content-Type')) {
      this.set('X-Content-Type-Options', 'nosniff');
      this.set('Content-Type', 'application/json');
    }
    if (Array.isArray(callback)) callback = callback[0];

    if (typeof callback === 'string' && callback.length !== 0) {
      this.set('X-Content-Type-Options', 'nosniff');
      this.set('Content-Type', 'text/javascript');
      callback = callback.replace(JSONP_CALLBACK_FORBIDDEN, '');
      if (body === undefined) body = '';
      else if (typeof body === 'string') {
        body = body.replace(LINE_SEPARATORS, (c) => (c === '\u2028' ? '\\u2028' : '\\u2029'));
      }
      // the /**/ prefix mitigates "Rosetta Flash" JSONP abuse; the typeof check spares clients an error
      body = '/**/ typeof ' + callback + " === 'function' && " + callback + '(' + body + ');';
    }
    return this.send(body);
  };
}
