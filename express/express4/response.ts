/*!
 * Express 4's `response` prototype: Express 5's (response.ts) with Express 4's media types and the methods whose
 * rules differ replaced: status (no validation), links (no arrays), sendStatus, attachment (content-disposition
 * 0.5, no basename), cookie (inherited options copied too) and clearCookie (expires/maxAge honoured), location
 * ('back'), redirect (`(url, status)` form, its own HTML body), vary (empty field refused), the body methods
 * (express4/response-send.ts) and file transfer (express4/response-file.ts).
 *
 * Ported from express (lib/response.js of express 4.x), MIT License,
 * Copyright(c) 2009-2013 TJ Holowaychuk, Copyright(c) 2014-2015 Douglas Christopher Wilson.
 */
import { extname } from 'node:path';
import depd from 'depd';
import encodeUrl from 'encodeurl';
import statuses from 'statuses';
import { appendCookie, createResponsePrototype, endRedirect, redirectBody } from '../response.js';
import { mediaTypes4 } from './media.js';
import { contentDisposition0, installFileMethods4 } from './response-file.js';
import { installBodyMethods4 } from './response-send.js';

const deprecate = depd('express');

/** Express 4's utils-merge: every enumerable property of `src`, inherited ones included (for…in). */
function merge(dest: any, src: any): any {
  if (dest && src) for (const key in src) dest[key] = src[key];
  return dest;
}

/**
 * Builds a fresh Express 4 `response` prototype.
 *
 * @example
 * const response = createResponsePrototype4();
 */
export function createResponsePrototype4(): any {
  const res = createResponsePrototype(mediaTypes4());
  installStatus4(res);
  installHeaders4(res);
  installRedirects4(res);
  installBodyMethods4(res);
  installFileMethods4(res);
  return res;
}

function installStatus4(res: any): void {
  res.status = function status(this: any, code: any) {
    if ((typeof code === 'string' || Math.floor(code) !== code) && code > 99 && code < 1000) {
      deprecate('res.status(' + JSON.stringify(code) + '): use res.status(' + Math.floor(code) + ') instead');
    }
    this.statusCode = code;
    return this;
  };

  res.sendStatus = function sendStatus(this: any, statusCode: number) {
    const body = (statuses.message as Record<number, string | undefined>)[statusCode] || String(statusCode);
    this.statusCode = statusCode;
    this.type('txt');
    return this.send(body);
  };

  res.links = function links(this: any, links: Record<string, string>) {
    let link = this.get('Link') || '';
    if (link) link += ', ';
    return this.set('Link', link + Object.keys(links).map((rel) => '<' + links[rel] + '>; rel="' + rel + '"').join(', '));
  };
}

function installHeaders4(res: any): void {
  res.attachment = function attachment(this: any, filename?: string) {
    if (filename) this.type(extname(filename));
    this.set('Content-Disposition', contentDisposition0(filename));
    return this;
  };

  const vary = res.vary;
  res.vary = function varyField(this: any, field: string | string[]) {
    if (!field || (Array.isArray(field) && !field.length)) {
      deprecate('res.vary(): Provide a field name');
      return this;
    }
    return vary.call(this, field);
  };

  res.clearCookie = function clearCookie(this: any, name: string, options?: any) {
    if (options) {
      if (options.maxAge) deprecate('res.clearCookie: Passing "options.maxAge" is deprecated. In v5.0.0 of Express, this option will be ignored, as res.clearCookie will automatically set cookies to expire immediately. Please update your code to omit this option.');
      if (options.expires) deprecate('res.clearCookie: Passing "options.expires" is deprecated. In v5.0.0 of Express, this option will be ignored, as res.clearCookie will automatically set cookies to expire immediately. Please update your code to omit this option.');
    }
    return this.cookie(name, '', merge({ expires: new Date(1), path: '/' }, options));
  };

  res.cookie = function setCookie(this: any, name: string, value: unknown, options?: any) {
    return appendCookie(this, name, value, merge({}, options));
  };
}

function installRedirects4(res: any): void {
  res.location = function location(this: any, url: any) {
    if (url === 'back') {
      deprecate('res.location("back"): use res.location(req.get("Referrer") || "/") and refer to https://dub.sh/security-redirect for best practices');
      return this.set('Location', encodeUrl(this.req.get('Referrer') || '/'));
    }
    return this.set('Location', encodeUrl(String(url)));
  };

  res.redirect = function redirect(this: any, url: any) {
    let address = url;
    let status: any = 302;
    if (arguments.length === 2) {
      if (typeof arguments[0] === 'number') {
        status = arguments[0];
        address = arguments[1];
      } else {
        deprecate('res.redirect(url, status): Use res.redirect(status, url) instead');
        status = arguments[1];
      }
    }
    address = this.location(address).get('Location');
    const message = (statuses.message as Record<number, string | undefined>)[status];
    const body = redirectBody(this, message, address, (u) => '<p>' + message + '. Redirecting to ' + u + '</p>');
    this.statusCode = status;
    endRedirect(this, body);
  };
}
