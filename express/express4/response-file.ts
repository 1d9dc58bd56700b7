/*!
 * Express 4's file transfer: `res.sendFile` and `res.download` with send 0.19 (its defaults differ from send 1's:
 * dotfiles, hidden, mime table) and content-disposition 0.5, Express 4's absolute-path rule, and the deprecated
 * `res.sendfile`. The streaming itself is Express 5's (pipeFile).
 *
 * Ported from express (lib/response.js of express 4.x), MIT License,
 * Copyright(c) 2009-2013 TJ Holowaychuk, Copyright(c) 2014-2015 Douglas Christopher Wilson.
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import depd from 'depd';
import { downloadArguments, downloadOptions, fileDone, pipeFile } from '../response-file.js';

const require = createRequire(import.meta.url);
const deprecate = depd('express');

type SendFn = (req: any, path: string, options: any) => any;
let send0: SendFn | undefined;
let disposition0: ((filename?: string) => string) | undefined;

// loaded on first use, so an app that sends no file loads neither (the require calls stay literal, for bundlers)
/** Express 4's `send` (0.19). */
function legacySend(): SendFn {
  return (send0 ??= require('send-v0') as SendFn);
}

/** The Content-Disposition value Express 4 sets (RFC 6266): content-disposition 0.5 always quotes and keeps
 * ISO-8859-1 names. */
export function contentDisposition0(filename?: string): string {
  return (disposition0 ??= require('content-disposition-v0') as (f?: string) => string)(filename);
}

/** Express 4's isAbsolute: also accepts Windows drive and UNC paths on any platform. */
function isAbsolute4(path: string): boolean {
  if (path[0] === '/') return true;
  if (path[1] === ':' && (path[2] === '\\' || path[2] === '/')) return true;
  if (path.substring(0, 2) === '\\\\') return true;
  return false;
}

export function installFileMethods4(res: any): void {
  res.sendFile = function sendFile(this: any, path: string, options?: any, callback?: any) {
    let done = callback;
    let opts = options || {};
    if (!path) throw new TypeError('path argument is required to res.sendFile');
    if (typeof path !== 'string') throw new TypeError('path must be a string to res.sendFile');
    if (typeof options === 'function') {
      done = options;
      opts = {};
    }
    if (!opts.root && !isAbsolute4(path)) throw new TypeError('path must be absolute or specify root to res.sendFile');
    const file = legacySend()(this.req, encodeURI(path), opts);
    pipeFile(this, file, opts, fileDone(this.req.next, done));
  };

  res.download = function download(this: any, path: string, filename?: any, options?: any, callback?: any) {
    const { name, opts, done } = downloadArguments(filename, options, callback);
    const full = downloadOptions(opts, contentDisposition0(name || path));
    return this.sendFile(!full.root ? resolve(path) : path, full, done);
  };

  res.sendfile = deprecate.function(function sendfile(this: any, path: string, options?: any, callback?: any) {
    let done = callback;
    let opts = options || {};
    if (typeof options === 'function') {
      done = options;
      opts = {};
    }
    const file = legacySend()(this.req, path, opts);
    pipeFile(this, file, opts, fileDone(this.req.next, done));
  }, 'res.sendfile: Use res.sendFile instead');
}
