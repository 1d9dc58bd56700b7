/*!
 * File transfer of keel/express's response prototype (`res.sendFile`, `res.download`) and Content-Disposition, as
 * Express 5 does them with send 1 and content-disposition 2. Express 4's (send 0.19, whose defaults differ: dotfiles,
 * hidden, mime table) are its overlay's, express4/response-file.ts, which shares pipeFile() and downloadOptions().
 *
 * Ported from express (lib/response.js of express 5.x), MIT License,
 * Copyright(c) 2009-2013 TJ Holowaychuk, Copyright(c) 2014-2015 Douglas Christopher Wilson.
 */

import { createRequire } from 'node:module';
import { basename, isAbsolute, resolve } from 'node:path';
import onFinished from 'on-finished';
import type { create as createDisposition } from 'content-disposition';

const require = createRequire(import.meta.url);

type SendFn = (req: any, path: string, options: any) => any;
let send1: SendFn | undefined;
let disposition2: typeof createDisposition | undefined;

// Each loaded on first use: an app that never sends a file or an attachment never loads them, and keel/express4 never
// loads Express 5's (the require calls stay literal, for bundlers).
/** Express 5's `send` (1.x). */
function currentSend(): SendFn {
  return (send1 ??= require('send') as SendFn);
}

/** The Content-Disposition value Express 5 sets for an attachment named `filename` (RFC 6266): content-disposition 2
 * quotes only when needed. */
export function contentDisposition(filename?: string): string {
  return (disposition2 ??= (require('content-disposition') as { create: typeof createDisposition }).create)(filename);
}

export function installFileMethods(res: any): void {
  res.sendFile = function sendFile(this: any, path: string, options?: any, callback?: any) {
    let done = callback;
    let opts = options || {};
    if (!path) throw new TypeError('path argument is required to res.sendFile');
    if (typeof path !== 'string') throw new TypeError('path must be a string to res.sendFile');
    if (typeof options === 'function') {
      done = options;
      opts = {};
    }
    if (!opts.root && !isAbsolute(path)) throw new TypeError('path must be absolute or specify root to res.sendFile');
    // the app's etag setting decides whether send sets an ETag
    opts.etag = this.app.enabled('etag');
    const file = currentSend()(this.req, encodeURI(path), opts);
    pipeFile(this, file, opts, fileDone(this.req.next, done));
  };

  res.download = function download(this: any, path: string, filename?: any, options?: any, callback?: any) {
    const { name, opts, done } = downloadArguments(filename, options, callback);
    const full = downloadOptions(opts, contentDisposition(basename(name || path)));
    return this.sendFile(!full.root ? resolve(path) : path, full, done);
  };
}

/** What a file transfer calls when done: the callback given, else next() for a directory and next(err) for errors
 * other than write errors and client aborts. */
export function fileDone(next: any, done: any): (err?: any) => void {
  return (err?: any) => {
    if (done) return done(err);
    if (err && err.code === 'EISDIR') return next();
    if (err && err.code !== 'ECONNABORTED' && err.syscall !== 'write') next(err);
  };
}

/** res.download's optional arguments: `(path, filename?, options?, callback?)` with any of the three left out. */
export function downloadArguments(filename: any, options: any, callback: any): { name: any; opts: any; done: any } {
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
  return { name, opts, done };
}

/** The sendFile options of a download: the caller's, with Content-Disposition set and any of theirs dropped. */
export function downloadOptions(options: any, disposition: string): any {
  const headers: Record<string, unknown> = { 'Content-Disposition': disposition };
  if (options && options.headers) {
    for (const key of Object.keys(options.headers)) {
      if (key.toLowerCase() !== 'content-disposition') headers[key] = options.headers[key];
    }
  }
  const opts = Object.create(options);
  opts.headers = headers;
  return opts;
}

/** Pipes a `send` stream to `res`, calling `callback` once: on end, error, directory, or client abort. */
export function pipeFile(res: any, file: any, options: any, callback: (err?: any) => void): void {
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
