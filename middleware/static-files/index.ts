/**
 * Static files from one or more StaticFilesConfig mounts, on the `send` package (the engine behind
 * Express's serve-static): ETag / Last-Modified / 304 (RFC 9110 §13), Range / 206 / 416 (RFC 9110 §14),
 * HEAD and content types come from there.
 *
 * keel resolves the file itself first (rather than letting serve-static do it) because the path must
 * be contained *after* symlinks are resolved: `send` only refuses `..` in the URL, so a symlink inside
 * the directory pointing outside of it would be followed. Every path is realpath'd and checked
 * against the realpath of the directory; the resolved path is what `send` opens.
 *
 * `staticFiles(root, options)`, two arguments, is serve-static's form instead (serve-static.ts).
 */
import type { ServerResponse } from 'node:http';
import { realpathSync, statSync, promises as fsp, type Stats } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type send from 'send';
import { lazyRequire } from '../../lib/http/lazy-require.js';

/** The `send` package, loaded by the first staticFiles() factory. */
const loadSend = lazyRequire<typeof send>('send');
/** Percent-encodes a URL without double-encoding (Express's and serve-static's Location encoder). */
const loadEncodeUrl = lazyRequire<(url: string) => string>('encodeurl');
import { StaticFilesConfig } from '../../lib/records/server.js';
import { fail } from '../../lib/records/define.js';
import { ERROR_CODES, codeForStatus } from '../../lib/http/errors.js';
import { problem, problemFor, sendProblem } from '../../lib/http/problem.js';
import { rejecter, takeOnReject, type OnRejectOption, type Rejecter } from '../../lib/http/reject.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';
import { serveStatic, SERVE_STATIC_OPTION_KEYS, type ServeStaticOptions } from './serve-static.js';

export * from './serve-static.js';

/** StaticFilesConfig input, snake_case or camelCase. */
import type { StaticFilesConfigInput as StaticFilesRecordInput } from '../../lib/records/server.js';
/** A StaticFilesConfig record, snake_case or camelCase, plus `onReject` (lib/http/reject.ts). */
export type StaticFilesConfigInput = StaticFilesRecordInput & OnRejectOption;

export { DEFAULT_ON_REJECT } from '../../lib/http/reject.js';

/** The page served for a directory request when `index_file` is true (the default). */
export const DEFAULT_INDEX_FILE_NAME = 'index.html';

interface Mount {
  /** route_prefix without a trailing slash ('' for '/'). */
  prefix: string;
  /** realpath of `directory`. */
  root: string;
  index: boolean;
  cacheControl: string | null;
  sendOptions: send.SendOptions;
  reject: Rejecter;
}

/** A serve-static option in a record: say where it goes (`cacheControl` is also the record's camelCase key, a string). */
function refuseServeStaticKeys(options: Record<string, unknown>, path: string): void {
  for (const key of Object.keys(options)) {
    const value = options[key];
    if (value === undefined || !SERVE_STATIC_OPTION_KEYS.includes(key)) continue;
    if (key === 'cacheControl' && (typeof value === 'string' || value === null)) continue;
    fail('StaticFilesConfig', path, key, value, 'one of the record\'s keys (directory, route_prefix, index_file, cache_control)',
      `${key} is serve-static's option: pass serve-static's options as staticFiles(root, { ${key}: … }) (or serveStatic(root, options)).`);
  }
}

function compile(options: StaticFilesConfigInput, path: string): Mount {
  refuseServeStaticKeys(options as unknown as Record<string, unknown>, path);
  const { onReject, rest: input } = takeOnReject(options, path);
  const cfg = StaticFilesConfig.parse(input, path);
  let root: string;
  try {
    root = realpathSync(cfg.directory);
  } catch {
    fail('StaticFilesConfig', path, 'directory', cfg.directory, 'an existing directory', 'Create it or fix the path (relative paths resolve from the process working directory).');
  }
  if (!statSync(root).isDirectory()) fail('StaticFilesConfig', path, 'directory', cfg.directory, 'a directory, not a file');
  if (cfg.cache_control !== null && /[\r\n]/.test(cfg.cache_control)) {
    fail('StaticFilesConfig', path, 'cache_control', cfg.cache_control, 'a header value without line breaks');
  }
  return {
    prefix: cfg.route_prefix.replace(/\/+$/, ''),
    root,
    index: cfg.index_file,
    cacheControl: cfg.cache_control,
    // Dotfiles are filtered below on both the requested and the resolved path; `send` opens only
    // paths keel has already resolved. Cache-Control is keel's (the spec: sent only when set).
    sendOptions: { root, index: false, dotfiles: 'allow', cacheControl: false, etag: true, lastModified: true, acceptRanges: true },
    reject: rejecter(onReject),
  };
}

const NOT_FOUND = Symbol('not found');
type Resolved = { file: string } | { redirect: string } | typeof NOT_FOUND;

const contained = (root: string, p: string) => p === root || p.startsWith(root + sep);
const hasDotSegment = (segments: string[]) => segments.some((s) => s.startsWith('.'));

const MISSING = new Set(['ENOENT', 'ENOTDIR', 'ENAMETOOLONG', 'ELOOP']);

/** `op`'s result, or undefined when the path does not exist (or cannot, as named). */
async function unlessMissing<T>(op: Promise<T>): Promise<T | undefined> {
  try {
    return await op;
  } catch (err) {
    if (MISSING.has((err as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw err;
  }
}

class Refused extends Error {
  constructor(readonly status: 400 | 403, detail: string, readonly mount: Mount) {
    super(detail);
  }
}

async function resolve(mount: Mount, rest: string, pathname: string, search: string): Promise<Resolved> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    throw new Refused(400, 'The path is not valid percent-encoding', mount);
  }
  if (decoded.includes('\0')) throw new Refused(400, 'The path contains a NUL byte', mount);
  const segments = decoded.split('/');
  // `%2e%2e` and `..%2f` arrive here decoded, so one check covers every spelling of a parent segment.
  if (segments.includes('..') || segments.some((s) => s.includes('\\'))) throw new Refused(403, 'The path leaves the static directory', mount);
  const parts = segments.filter((s) => s !== '' && s !== '.');
  if (hasDotSegment(parts)) return NOT_FOUND;

  const found = await locate(mount.root, parts);
  if (found === undefined) return NOT_FOUND;
  const { real, stat } = found;
  if (!contained(mount.root, real)) throw new Refused(403, 'The path leaves the static directory', mount);
  if (hasDotSegment(relative(mount.root, real).split(sep))) return NOT_FOUND;
  // `file.txt/` names a directory that does not exist (relative links would resolve wrongly).
  if (stat.isFile()) return pathname.endsWith('/') ? NOT_FOUND : { file: real };
  if (!stat.isDirectory() || !mount.index) return NOT_FOUND;
  // A directory URL without its trailing slash would break the page's relative links: redirect
  // (serve-static does the same). Leading slashes are collapsed so `//host` can never be produced.
  if (!pathname.endsWith('/')) return { redirect: `/${pathname.replace(/^\/+/, '')}/${search}` };
  const index = await locate(real, [DEFAULT_INDEX_FILE_NAME]);
  if (index === undefined) return NOT_FOUND;
  if (!contained(mount.root, index.real)) throw new Refused(403, 'The index page leaves the static directory', mount);
  return index.stat.isFile() ? { file: index.real } : NOT_FOUND;
}

/**
 * The real path of `parts` under the real directory `dir`, and what it is (following symlinks).
 *
 * One name directly under `dir` that is not a symlink is its own real path (`dir` has none in it), so
 * a single `lstat` answers both questions: the common case of a file at the top of the directory
 * costs one fs call instead of realpath + stat. Anything else takes the general route, where the
 * realpath resolves every symlink on the way.
 */
async function locate(dir: string, parts: readonly string[]): Promise<{ real: string; stat: Stats } | undefined> {
  const path = join(dir, ...parts);
  if (parts.length === 1) {
    const stat = await unlessMissing(fsp.lstat(path));
    if (stat === undefined) return undefined;
    if (!stat.isSymbolicLink()) return { real: path, stat };
  }
  const real = await unlessMissing(fsp.realpath(path));
  if (real === undefined) return undefined;
  // The target can vanish between the two calls; that is a miss, not a server error.
  const stat = await unlessMissing(fsp.stat(real));
  return stat === undefined ? undefined : { real, stat };
}

function sendFailure(req: KeelRequest, res: ServerResponse, next: NextFunction, mount: Mount, err: { status?: number; headers?: Record<string, string> }): void {
  const status = typeof err.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 500;
  // `send` has already set validators for the file; they do not describe a problem document.
  for (const h of ['ETag', 'Last-Modified', 'Accept-Ranges', 'Content-Range', 'Cache-Control']) res.removeHeader(h);
  const code = codeForStatus(status);
  const p = ERROR_CODES[code].status === status ? problemFor(code) : problem(status);
  // 416 carries `Content-Range: bytes */<length>` (RFC 9110 §15.5.17).
  mount.reject.refuse(req, res, next, p, status === 500 ? undefined : err.headers);
}

/**
 * serve-static's form (`express.static(root, options)`): serve-static 2.2's options, defaults and
 * behaviour on the same engine, with symlinks kept inside `root`. The same factory as {@link serveStatic},
 * which documents it.
 *
 * @example
 * import express from 'express';
 * import { staticFiles } from 'keel/middleware/static-files';
 * const app = express();
 * app.use('/assets', staticFiles('public', { maxAge: '1d', immutable: true }));
 */
export function staticFiles(root: string, options?: ServeStaticOptions | null): Middleware;
/**
 * keel's record form: one StaticFilesConfig or a list (what createApp's `static_files` uses).
 * Serve files under `route_prefix` from `directory`, for Express 4, 5 and keel. Requests that match no
 * file fall through to `next()`; only GET and HEAD are served.
 *
 * - `index_file` (default true): a directory request serves its `index.html` ({@link DEFAULT_INDEX_FILE_NAME});
 *   a directory URL without a trailing slash is redirected (301) to the slash form first.
 * - `cache_control` (default null: no header): the Cache-Control value sent with every file.
 * - Dotfiles (`.env`, `.git/…`) are never served. `..`, encoded or not, is a 403 problem, and so is any
 *   path (symlinks included) whose real location is outside `directory`. Bad percent-encoding and
 *   NUL bytes are 400 problems.
 * - `directory` must exist when the factory runs (ConfigError otherwise).
 * - `onReject` (default `'respond'`, per mount): `'next'` hands these 400/403/416 refusals to
 *   `next(err)` as HttpErrors (a 416 carries its `Content-Range` in `headers`).
 *
 * @example
 * import express from 'express';
 * import { staticFiles } from 'keel/middleware/static-files';
 * const app = express();
 * app.use(staticFiles({ directory: './public', routePrefix: '/assets', cacheControl: 'public, max-age=3600' }));
 */
export function staticFiles(options: StaticFilesConfigInput | readonly StaticFilesConfigInput[]): Middleware;
export function staticFiles(options: unknown, serveStaticOptions?: ServeStaticOptions | null): Middleware {
  // serve-static's form: a root (its "root path required" / "must be a string" errors for anything else).
  if (typeof options !== 'object' || options === null) return serveStatic(options, serveStaticOptions);
  return staticFilesFromRecords(options as StaticFilesConfigInput | readonly StaticFilesConfigInput[]);
}

function staticFilesFromRecords(options: StaticFilesConfigInput | readonly StaticFilesConfigInput[]): Middleware {
  const list = Array.isArray(options) ? options : [options as StaticFilesConfigInput];
  const mounts = list.map((o, i) => compile(o, Array.isArray(options) ? `static_files[${i}]` : 'StaticFilesConfig'));
  loadSend();
  loadEncodeUrl();

  async function serve(req: KeelRequest, res: ServerResponse, next: NextFunction): Promise<void> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    const search = q === -1 ? '' : url.slice(q);
    for (const mount of mounts) {
      if (pathname !== mount.prefix && !pathname.startsWith(`${mount.prefix}/`)) continue;
      const rest = pathname.slice(mount.prefix.length);
      const found = await resolve(mount, rest, (req as { originalUrl?: string }).originalUrl?.split('?')[0] ?? pathname, search);
      if (found === NOT_FOUND) continue;
      if ('redirect' in found) {
        res.statusCode = 301;
        // A req.url rewritten by an earlier middleware may hold raw non-ASCII characters, which a
        // header cannot carry (RFC 9110 §5.5): percent-encode them (RFC 3986 §2.1).
        res.setHeader('Location', loadEncodeUrl()(found.redirect));
        res.setHeader('Content-Length', '0');
        res.end();
        return;
      }
      const encoded = '/' + relative(mount.root, found.file).split(sep).map(encodeURIComponent).join('/');
      const stream = loadSend()(req, encoded, mount.sendOptions);
      if (mount.cacheControl !== null) {
        const value = mount.cacheControl;
        stream.on('headers', (r: ServerResponse) => r.setHeader('Cache-Control', value));
      }
      stream.on('error', (err: { status?: number; headers?: Record<string, string> }) => {
        // The file vanished between resolving and opening: let the next handler answer.
        if (err.status === 404) next();
        else sendFailure(req, res, next, mount, err);
      });
      stream.pipe(res);
      return;
    }
    next();
  }

  return function staticFilesMiddleware(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      next();
      return;
    }
    serve(req, res, next).catch((err: unknown) => {
      if (err instanceof Refused) err.mount.reject.refuse(req, res, next, err.status === 400 ? problemFor('KEEL_BAD_REQUEST', err.message) : problemFor('KEEL_FORBIDDEN', err.message));
      // An unexpected fs error: a bare 500, nothing internal leaks.
      else sendProblem(res, err);
    });
  };
}
