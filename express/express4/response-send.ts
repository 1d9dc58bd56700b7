/*!
 * Express 4's `res.send`, `res.json` and `res.jsonp`: the deprecated `(status, body)` / `(body, status)` forms,
 * `res.send(status)`, and Express 4's body rules (a Buffer, not any ArrayBuffer view, is binary; every string,
 * including the '' of a null body, goes out in utf-8 and says so; Content-Length whatever Transfer-Encoding says).
 * The rest is Express 5's (writeBody, jsonpBody).
 *
 * Ported from express (lib/response.js of express 4.x), MIT License,
 * Copyright(c) 2009-2013 TJ Holowaychuk, Copyright(c) 2014-2015 Douglas Christopher Wilson.
 */
import { Buffer } from 'node:buffer';
import depd from 'depd';
import statuses from 'statuses';
import { defaultJsonType } from '../engine-headers.js';
import { hotSettings } from '../hot-settings.js';
import { stringify } from '../response-helpers.js';
import { jsonpBody, setUtf8, writeBody } from '../response-send.js';

const deprecate = depd('express');

/** Whether `res.json(obj, status)` was called as `(obj, status)` rather than `(status, obj)` (both deprecated). */
function statusLast(args: IArguments): boolean {
  return typeof args[1] === 'number';
}

// deprecate() is called in each method itself: depd names the caller of the function that calls it
export function installBodyMethods4(res: any): void {
  res.send = function send(this: any, body?: any) {
    let chunk = body;
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
    switch (typeof chunk) {
      case 'string':
        if (!this.getHeader('content-type')) this.type('html');
        break;
      case 'boolean':
      case 'number':
      case 'object':
        if (chunk === null) {
          chunk = '';
        } else if (Buffer.isBuffer(chunk)) {
          if (!this.getHeader('content-type')) this.type('bin');
        } else {
          return this.json(chunk);
        }
        break;
    }
    let encoding: BufferEncoding | undefined;
    if (typeof chunk === 'string') {
      encoding = 'utf8';
      const type = this.getHeader('content-type');
      if (typeof type === 'string') setUtf8(this, type);
    }
    return writeBody(this, chunk, encoding, true);
  };

  res.json = function json(this: any, obj?: any) {
    let val = obj;
    if (arguments.length === 2) {
      if (statusLast(arguments)) {
        deprecate('res.json(obj, status): Use res.status(status).json(obj) instead');
        this.statusCode = arguments[1];
      } else {
        deprecate('res.json(status, obj): Use res.status(status).json(obj) instead');
        this.statusCode = arguments[0];
        val = arguments[1];
      }
    }
    const hot = hotSettings(this.app);
    const body = stringify(val, hot.jsonReplacer, hot.jsonSpaces, hot.jsonEscape);
    defaultJsonType(this);
    return this.send(body);
  };

  res.jsonp = function jsonp(this: any, obj?: any) {
    let val = obj;
    if (arguments.length === 2) {
      if (statusLast(arguments)) {
        deprecate('res.jsonp(obj, status): Use res.status(status).jsonp(obj) instead');
        this.statusCode = arguments[1];
      } else {
        deprecate('res.jsonp(status, obj): Use res.status(status).jsonp(obj) instead');
        this.statusCode = arguments[0];
        val = arguments[1];
      }
    }
    return this.send(jsonpBody(this, val));
  };
}
