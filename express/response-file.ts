/*!
 * File transfer of keel/express's response prototype (`res.sendFile`, `res.download`, Express 4's `res.sendfile`)
 * and Content-Disposition per Express major.
 *
 * Ported from express (lib/response.js of express 5.x and 4.x), MIT License,
 * Copyright(c) 2009-2013 TJ Holowaychuk, Copyright(c) 2014-2015 Douglas Christopher Wilson.
 *
 * Each major streams with the `send` major it ships (send 1 for Express 5, send 0.19 for Express 4), because
 * their defaults differ (dotfiles, hidden, mime table) and apps depend on them.
 */

import { createRequire } from 'node:module';
import { basename, isAbsolute, resolve } from 'node:path';
import onFinished from 'on-finished';
import depd from 'depd';
import type { create as createDisposition } from 'content-disposition';
import type { ExpressMajor } from './request.js';

const require = createRequire(import.meta.url);
const deprecate = depd('express');

type SendFn = (req: any, path: string, options: any) => any;
type DispositionFn = (filename?: string) => string;
let send1: SendFn | undefined;
let send0: SendFn | undefined;
let disposition2: typeof createDisposition | undefined;
let disposition0: DispositionFn | undefined;

// Each loaded on first use: an app that never sends a file or an attachment never loads them, and each entry loads
// only its own major's (the require calls stay literal, for bundlers).
/** Express 5's `send` (1.x). */
function currentSend(): SendFn {
  return (send1 ??= require('send') as SendFn);
}
/** Express 4's `send` (0.19). */
function legacySend(): SendFn {
  return (send0 ??= require('send-v0') as SendFn);
}

/** The Content-Disposition value Express `major` sets for an attachment named `filename` (RFC 6266). */
export function contentDispositionFor(major: ExpressMajor, filename?: string): string {
  // content-disposition 0.5 (Express 4) always quotes and keeps ISO-8859-1 names; 2.x quotes only when needed
  if (major === 4) return (disposition0 ??= require('content-disposition-v0') as DispositionFn)(filename);
  return (disposition2 ??= (require('content-disposition') as { create: typeof createDisposition }).create)(filename);
}

/** Express 4's isAbsolute: also accepts Windows drive and UNC paths on any platform. */
function isAbsolute4(path: string): boolean {
  if (path[0] === '/') return true;
  if (path[1] === ':' && (path[2] === '\\' || path[2] === '/')) return true;
  if (path.substring(0, 2) === '\\\\') return true;
  return false;
}

export function installFileMethods(res: any, major: ExpressMajor): void {
  const v5 = major === 5;

  res.sendFile = function sendFile(this: any, path: string, options?: any, callback?: any) {
    let done = callback;
    const req = this.req;
    const next = req.next;
    let opts = options || {};
    if (!path) throw new TypeError('path argument is required to res.sendFile');
    if (typeof path !== 'string') throw new TypeError('path must be a string to res.sendFile');
    if (typeof options === 'function') {
      done = options;
      opts = {};
    }
    if (!opts.root && !(v5 ? isAbsolute(path) : isAbsolute4(path))) {
      throw new TypeError('path must be absolute or specify root to res.sendFile');
    }
    const pathname = encodeURI(path);
    let file;
    if (v5) {
      // the app's etag setting decides whether send sets an ETag
      opts.etag = this.app.enabled('etag');
      file = currentSend()(req, pathname, opts);
    } else {
      file = legacySend()(req, pathname, opts);
    }
    pipeFile(this, file, opts, (err: any) => {
      if (done) return done(err);
      if (err && err.code === 'EISDIR') return next();
      // next() all but write errors
      if (err && err.code !== 'ECONNABORTED' && err.syscall !== 'write') next(err);
    });
  };

  res.download = function download(this: any, path: string, filename?: any, options?: any, callback?: any) {
    let done = callback;
    let name = filename;
    let opts = options || null;
    if (typeof filename === 'function') {
      done = filename;
      name = null;
      opts = null;
    } else if (typeof options === 'function') {
      done = options;
      opts = null;
    }
    // optional filename, options in its place
    if (typeof filename === 'object' && (typeof options === 'function' || options === undefined)) {
      name = null;
      opts = filename;
    }
    const headers: Record<string, unknown> = {
      'Content-Disposition': v5
        ? contentDispositionFor(major, basename(name || path))
        : contentDispositionFor(major, name || path),
    };
    if (opts && opts.headers) {
      for (const key of Object.keys(opts.headers)) {
        if (key.toLowerCase() !== 'content-disposition') headers[key] = opts.headers[key];
      }
    }
    opts = Object.create(opts);
    opts.headers = headers;
    const fullPath = !opts.root ? resolve(path) : path;
    return this.sendFile(fullPath, opts, done);
  };

  if (!v5) {
    res.sendfile = deprecate.function(function sendfile(this: any, path: string, options?: any, callback?: any) {
      let done = callback;
      const req = this.req;
      const next = req.next;
      let opts = options || {};
      if (typeof options === 'function') {
        done = options;
        opts = {};
      }
      const file = legacySend()(req, path, opts);
      pipeFile(this, file, opts, (err: any) => {
        if (done) return done(err);
        if (err && err.code === 'EISDIR') return next();
        if (err && err.code !== 'ECONNABORTED' && err.syscall !== 'write') next(err);
      });
    }, 'res.sendfile: Use res.sendFile instead');
  }
}

/** Pipes a `send` stream to `res`, calling `callback` once: on end, error, directory, or client abort. */
function pipeFile(res: any, file: any, options: any, callback: (err?: any) => void): void {
  let done = false;
  let streaming: boolean | undefined;

  function onaborted() {
    if (done) return;
    done = true;
    const err: any = new Error('Request aborted');
    err.code = 'ECONNABORTED';
    callback(err);
  }
  function ondirectory() {
    if (done) return;
    done = true;
    const err: any = new Error('EISDIR, read');
    err.code = 'EISDIR';
    callback(err);
  }
  function onerror(err: any) {
    if (done) return;
    done = true;
    callback(err);
  }
  function onend() {
    if (done) return;
    done = true;
    callback();
  }
  function onfile() {
    streaming = false;
  }
  function onfinish(err: any) {
    if (err && err.code === 'ECONNRESET') return onaborted();
    if (err) return onerror(err);
    if (done) return;
    setImmediate(() => {
      if (streaming !== false && !done) {
        onaborted();
        return;
      }
      if (done) return;
      done = true;
      callback();
    });
  }
  function onstream() {
    streaming = true;
  }

  file.on('directory', ondirectory);
  file.on('end', onend);
  file.on('error', onerror);
  file.on('file', onfile);
  file.on('stream', onstream);
  onFinished(res, onfinish);

  if (options.headers) {
    // headers set only on a successful transfer
    file.on('headers', function headers(r: any) {
      const obj = options.headers;
      for (const k of Object.keys(obj)) r.setHeader(k, obj[k]);
    });
  }
  file.pipe(res);
}
