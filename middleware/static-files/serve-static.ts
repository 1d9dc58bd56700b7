/**
 * serve-static's form of keel's static files: `staticFiles(root, options)` / `serveStatic(root, options)`,
 * what `express.static(root, options)` is. It follows serve-static 2.2's own logic (index.js, MIT:
 * © 2010 Sencha Inc., © 2011 TJ Holowaychuk, © 2014-2016 Douglas Christopher Wilson) on the same `send`
 * engine, so serve-static's options, defaults (`Cache-Control: public, max-age=0`), fallthrough, redirect
 * page and errors (`next(err)` with send's HttpErrors) are the package's.
 *
 * Two differences, both for security (docs/migrating-from-express.md, "serve-static / express.static"):
 * - `send` refuses `..` in the URL but follows symlinks: a link inside `root` pointing outside it would be
 *   served. Here the file's real path must be inside `root`'s real path (else: not found), and `send` opens
 *   the real path it was checked at, so a link swapped after the check is not followed.
 * - The `dotfiles` policy also applies to the real path (`public/env.txt -> .env` is a dotfile), where
 *   `send` looks at the URL only.
 * And keel's usual start-up checks: an unknown or mistyped option is a ConfigError (a misspelt `dotfiles`
 * would silently serve `.env`), and the 405 of `fallthrough: false` is a problem+json.
 */
import type { ServerResponse } from 'node:http';
import type { Stats } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { format as formatUrl, type Url } from 'node:url';
import type send from 'send';
import { lazyRequire } from '../../lib/http/lazy-require.js';
import { fail } from '../../lib/records/define.js';
import { problemFor, sendProblem } from '../../lib/http/problem.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';
import { containedRealPath, ESCAPED } from './contain.js';
import { checkServeStaticOptions, type ServeStaticOptions } from './serve-static-options.js';

export {
  DEFAULT_SERVE_STATIC_DOTFILES,
  DEFAULT_SERVE_STATIC_INDEX,
  DEFAULT_SERVE_STATIC_MAX_AGE,
  SERVE_STATIC_OPTION_KEYS,
  type ServeStaticOptions,
  type ServeStaticSetHeaders,
} from './serve-static-options.js';

type ParseUrl = ((req: KeelRequest) => Url | undefined) & { original(req: KeelRequest): Url | undefined };
const loadSend = lazyRequire<typeof send>('send');
/** Express's own URL parser (cached on the request), which serve-static uses for `req.url` / `req.originalUrl`. */
const loadParseUrl = lazyRequire<ParseUrl>('parseurl');
/** Percent-encodes a URL without double-encoding (what Express's `res.redirect` and serve-static use). */
const loadEncodeUrl = lazyRequire<(url: string) => string>('encodeurl');

const WHERE = 'serveStatic(root, options)';

/** The methods a static file answers (RFC 9110 §9.3.1-2); the `Allow` of serve-static's 405. */
const ALLOW = 'GET, HEAD';

/** `root` as serve-static checks it: required, a string. */
function checkRoot(root: unknown): string {
  if (!root) fail('serveStatic', WHERE, 'root', root, 'a directory (root path required)', 'Pass the directory to serve: staticFiles(\'public\').');
  if (typeof root !== 'string') fail('serveStatic', WHERE, 'root', root, 'a string (root path must be a string)');
  return root;
}

/**
 * Serve files under `root` with serve-static's options (`express.static` / `serve-static` semantics).
 * `root` need not exist when the factory runs (every request is a miss until it does), and may be a file.
 *
 * Defaults as serve-static: `fallthrough: true` (misses and client errors call `next()`), `redirect: true`
 * (a directory URL without its slash gets a 301 with a small HTML page), `index: 'index.html'`
 * ({@link DEFAULT_SERVE_STATIC_INDEX}), `dotfiles: 'ignore'` ({@link DEFAULT_SERVE_STATIC_DOTFILES}),
 * `maxAge: 0` ({@link DEFAULT_SERVE_STATIC_MAX_AGE}: `Cache-Control: public, max-age=0`), ETag,
 * Last-Modified and Range on.
 *
 * @example
 * import express from 'express';
 * import { serveStatic } from 'keel/middleware/static-files';
 * const app = express();
 * app.use('/assets', serveStatic('public', { maxAge: '1d', immutable: true, extensions: ['html'] }));
 */
export function serveStatic(root?: unknown, options?: ServeStaticOptions | null): Middleware {
  const dir = checkRoot(root);
  const { fallthrough, redirect, setHeaders, dotfiles, send: checked } = checkServeStaticOptions(options ?? {}, WHERE);
  // Resolved once, against the working directory at start-up, as serve-static does.
  const rootPath = resolvePath(dir);
  const sendOptions: send.SendOptions = { ...checked, root: rootPath };
  loadSend();
  loadParseUrl();
  loadEncodeUrl();

  return function serveStaticMiddleware(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      if (fallthrough) {
        next();
        return;
      }
      sendProblem(res, problemFor('KEEL_METHOD_NOT_ALLOWED', 'Static files answer GET and HEAD only'), { Allow: ALLOW });
      return;
    }

    let forwardError = !fallthrough;
    const parseUrl = loadParseUrl();
    const originalUrl = parseUrl.original(req);
    let path = parseUrl(req)?.pathname ?? '/';

    // The mount point itself (`app.use('/static', …)` reached as `/static`): an empty path makes `send`
    // see the directory without its slash, so the redirect to `/static/` happens.
    if (path === '/' && !originalUrl?.pathname?.endsWith('/')) path = '';

    const stream = loadSend()(req, path, sendOptions);
    stream.on('directory', redirect ? redirectToSlash(req) : notFound);
    if (setHeaders) stream.on('headers', setHeaders);
    containSymlinks(stream, rootPath, dotfiles, () => {
      // Once a file is determined, its errors (412, 416, read errors) are always forwarded.
      forwardError = true;
    });

    stream.on('error', function forward(err: { statusCode?: number }) {
      if (forwardError || !((err.statusCode ?? 500) < 500)) next(err);
      else next();
    });
    stream.pipe(res);
  };
}

/**
 * Wrap the stream's `send(path, stat)` (send's public "transfer this file" step, reached once the file is
 * found) with the real-path checks, and its `stream(path)` so that the checked real path is what is opened.
 */
function containSymlinks(stream: send.SendStream, root: string, dotfiles: 'allow' | 'deny' | 'ignore', onFile: () => void): void {
  const s = stream as send.SendStream & { send(path: string, stat: Stats): void; stream(path: string, options: object): void };
  const transfer = s.send;
  const open = s.stream;
  let real: string | undefined;
  s.send = function sendContained(path: string, stat: Stats): void {
    containedRealPath(root, path, dotfiles !== 'allow').then(
      (found) => {
        if (typeof found !== 'string') s.error(found === ESCAPED.dotfile && dotfiles === 'deny' ? 403 : 404);
        else {
          real = found;
          onFile();
          transfer.call(s, path, stat);
        }
      },
      (err: Error) => s.error(500, err),
    );
  };
  s.stream = function streamContained(path: string, options: object): void {
    open.call(s, real ?? path, options);
  };
}

function notFound(this: send.SendStream): void {
  this.error(404);
}

/** Collapse leading slashes into one, so the Location can never be protocol-relative (`//evil.example`). */
function collapseLeadingSlashes(str: string): string {
  let i = 0;
  while (i < str.length && str.charCodeAt(i) === 0x2f) i++;
  return i > 1 ? '/' + str.slice(i) : str;
}

const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text for HTML: the five characters escape-html (serve-static's escaper) replaces. */
function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]!);
}

/** A minimal HTML page, as serve-static writes it. */
function htmlDocument(title: string, body: string): string {
  return `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${title}</title>\n</head>\n<body>\n<pre>${body}</pre>\n</body>\n</html>\n`;
}

/**
 * A directory without its trailing slash: 301 to the slash form of the *original* URL (the mount path
 * included), query kept, with a small page for clients that do not follow redirects. The page is inert
 * (`Content-Security-Policy: default-src 'none'`, nosniff) since it echoes the URL.
 */
function redirectToSlash(req: KeelRequest) {
  return function redirect(this: send.SendStream, res: ServerResponse): void {
    if (this.hasTrailingSlash()) {
      this.error(404);
      return;
    }
    const original = loadParseUrl().original(req) as Url;
    // A copy: parseurl caches the parsed URL on the request.
    const target = { ...original, path: null, pathname: collapseLeadingSlashes(`${original.pathname ?? ''}/`) };
    const loc = loadEncodeUrl()(formatUrl(target));
    const doc = htmlDocument('Redirecting', `Redirecting to ${escapeHtml(loc)}`);
    res.statusCode = 301;
    res.setHeader('Content-Type', 'text/html; charset=UTF-8');
    res.setHeader('Content-Length', Buffer.byteLength(doc));
    res.setHeader('Content-Security-Policy', "default-src 'none'");
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Location', loc);
    res.end(doc);
  };
}
