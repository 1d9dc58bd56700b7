/*!
 * `res.send`, `res.json` and `res.jsonp` of keel/express's response prototype (Express 5). Express 4's forms
 * (`res.send(status, body)`…) are its overlay's (express4/response-send.ts), which shares writeBody() below.
 *
 * Ported from express (lib/response.js of express 5.x), MIT License,
 * Copyright(c) 2009-2013 TJ Holowaychuk, Copyright(c) 2014-2015 Douglas Christopher Wilson.
 *
 * The body is handed to `res.end` as it came (a string stays a string) unless an ETag has to be computed, where
 * Express converts it to a Buffer once and hashes and sends that same Buffer; Content-Length, ETag and
 * freshness are computed exactly as Express computes them.
 */

import { Buffer } from 'node:buffer';
import { hash } from 'node:crypto';
import { contentTypeOf, defaultJsonType, etagOf, setContentLength, setETag, transferEncodingOf } from './engine-headers.js';
import { hotSettings } from './hot-settings.js';
import { stringify, withUtf8, type MediaTypes } from './response-helpers.js';
import { strongETag, weakETag } from './utils.js';

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
export function setUtf8(res: any, type: string): void {
  const utf8 = withUtf8(type);
  if (utf8 !== type) res.set('Content-Type', utf8);
}

const LINE_SEPARATORS = /[\u2028\u2029]/g;
const JSONP_CALLBACK_FORBIDDEN = /[^[\]\w$.]/g;

export function installBodyMethods(res: any): void {
  res.send = function send(this: any, body?: any) {
    let chunk = body;
    let encoding: BufferEncoding | undefined;
    // headers read by their lower-case names: node lower-cases the name on each call, and a lower-case literal
    // comes back as is instead of as a new string
    switch (typeof chunk) {
      case 'string': {
        encoding = 'utf8';
        const type = contentTypeOf(this);
        if (typeof type === 'string') setUtf8(this, type);
        else this.type('html');
        break;
      }
      case 'boolean':
      case 'number':
      case 'object':
        if (chunk === null) {
          chunk = '';
        } else if (ArrayBuffer.isView(chunk)) {
          if (!this.getHeader('content-type')) this.type('bin');
        } else {
          return this.json(chunk);
        }
        break;
    }
    return writeBody(this, chunk, encoding, false);
  };

  res.json = function json(this: any, obj?: any) {
    const hot = hotSettings(this.app);
    const body = stringify(obj, hot.jsonReplacer, hot.jsonSpaces, hot.jsonEscape);
    defaultJsonType(this);
    return this.send(body);
  };

  res.jsonp = function jsonp(this: any, obj?: any) {
    return this.send(jsonpBody(this, obj));
  };
}

/**
 * The end of `res.send` once the body is a string, a Buffer or undefined: Content-Length and ETag computed exactly
 * as Express computes them, 304 when the request is fresh, no content for 204/205/304 and HEAD, then `res.end`.
 * Content-Length and Transfer-Encoding are exclusive (RFC 9112 §6.2): `lengthWhenChunked` is Express 4's rule,
 * which sets the length whatever Transfer-Encoding says.
 */
export function writeBody(res: any, body: any, bodyEncoding: BufferEncoding | undefined, lengthWhenChunked: boolean): any {
  let chunk = body;
  let encoding = bodyEncoding;
  const etagFn = hotSettings(res.app).etagFn;
  const generateETag = !etagOf(res) && typeof etagFn === 'function';

  let len: number | undefined;
  // the engine's own weak/strong generators (the 'etag' setting's true/'weak'/'strong'): tag computed here from
  // the body as it is; a user's `etag fn` gets a Buffer, as Express gives it
  const builtinETag = generateETag && (etagFn === weakETag || etagFn === strongETag) && chunk !== undefined &&
    (typeof chunk === 'string' || Buffer.isBuffer(chunk)) && (encoding === undefined || encoding === 'utf8');
  if (builtinETag) {
    const bytes: number = typeof chunk === 'string' ? Buffer.byteLength(chunk, 'utf8') : chunk.length;
    len = bytes;
    if (lengthWhenChunked || !transferEncodingOf(res)) setContentLength(res, String(bytes));
    setETag(res, entityTag(chunk, bytes, etagFn === weakETag));
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
    if (lengthWhenChunked || !transferEncodingOf(res)) setContentLength(res, String(len));
  }

  if (generateETag && !builtinETag && len !== undefined) {
    const etag = etagFn(chunk, encoding);
    if (etag) res.set('ETag', etag);
  }

  const req = res.req;
  if (req.fresh) res.status(304);

  // 204 and 304 carry no content (RFC 9110 §15.3.5, §15.4.5)
  const status = res.statusCode;
  if (status === 204 || status === 304) {
    res.removeHeader('Content-Type');
    res.removeHeader('Content-Length');
    res.removeHeader('Transfer-Encoding');
    chunk = '';
  }
  // 205 Reset Content: no content, and say so (RFC 9110 §15.3.6)
  if (status === 205) {
    res.set('Content-Length', '0');
    res.removeHeader('Transfer-Encoding');
    chunk = '';
  }

  if (req.method === 'HEAD') res.end();
  else res.end(chunk, encoding);
  return res;
}

/** The JSONP answer's body (and its Content-Type and nosniff headers): the JSON, wrapped in the callback named by
 * the query parameter of the 'jsonp callback name' setting when there is one. */
export function jsonpBody(res: any, obj: unknown): string | undefined {
  const app = res.app;
  let body: string | undefined = stringify(obj, app.get('json replacer'), app.get('json spaces'), app.get('json escape'));
  let callback = res.req.query[app.get('jsonp callback name')];

  if (!res.get('Content-Type')) {
    res.set('X-Content-Type-Options', 'nosniff');
    res.set('Content-Type', 'application/json');
  }
  if (Array.isArray(callback)) callback = callback[0];

  if (typeof callback === 'string' && callback.length !== 0) {
    res.set('X-Content-Type-Options', 'nosniff');
    res.set('Content-Type', 'text/javascript');
    callback = callback.replace(JSONP_CALLBACK_FORBIDDEN, '');
    if (body === undefined) body = '';
    else if (typeof body === 'string') {
      // characters JSON allows in strings but JavaScript (before ES2019) does not
      body = body.replace(LINE_SEPARATORS, (c) => (c === '\u2028' ? '\\u2028' : '\\u2029'));
    }
    // the /**/ prefix mitigates "Rosetta Flash" JSONP abuse; the typeof check spares clients an error
    body = '/**/ typeof ' + callback + " === 'function' && " + callback + '(' + body + ');';
  }
  return body;
}
