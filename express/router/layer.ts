/**
 * A router layer: one path pattern and one handler, matched with path-to-regexp 8 (Express 5) or 0.1 (Express 4).
 * Ported from the `router` package's lib/layer.js and Express 4's lib/router/layer.js
 * (Copyright (c) 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher Wilson; MIT).
 */
import { createRequire } from 'node:module';
import type { match as match8 } from 'path-to-regexp';
import type pathToRegexp0 from 'path-to-regexp-v0';
import { asyncErrors, isPromise, type AnyFn } from '../utils.js';

/** What a layer match gives the router: the decoded params, the matched part of the path and the param names. */
export interface LayerMatch {
  params: Record<string, any>;
  path: string;
  keys: readonly string[];
  /** The registered path that matched (one element of an array path). */
  pattern: any;
}

/** Options of one layer (the router's case sensitivity and strictness, and whether the whole path must match). */
export interface LayerOptions {
  sensitive?: boolean;
  strict?: boolean;
  end?: boolean;
}

/** What the router reads from a route layer's route (route.ts implements it). */
export interface LayerRoute {
  dispatch(req: any, res: any, done: AnyFn): void;
  _handlesMethod(method: unknown): boolean;
  _methods(includeAll?: boolean): string[];
  _options(): string[];
}

const require = createRequire(import.meta.url);
// Each major's path-to-regexp loaded by the first layer that needs it: keel/express never loads 0.1, keel/express4
// never 8 (the require calls stay literal, for bundlers).
let compile8: typeof match8 | undefined;
let compile0: typeof pathToRegexp0 | undefined;

type Matcher = (path: string) => { params: Record<string, any>; path: string } | false;

const TRAILING_SLASH_REGEXP = /\/+$/;
const MATCHING_GROUP_REGEXP = /\((?:\?<(.*?)>)?(?!\?)/g;
const hasOwn = Object.prototype.hasOwnProperty;
const EMPTY: readonly string[] = Object.freeze([]);
function noop() {}

/** A param decoded as the router does: a malformed escape is a 400 naming the param. */
export function decodeParam(val: unknown): any {
  if (typeof val !== 'string' || val.length === 0 || val.indexOf('%') === -1) return val;
  try {
    return decodeURIComponent(val);
  } catch (err) {
    if (err instanceof URIError) {
      err.message = "Failed to decode param '" + val + "'";
      (err as any).status = (err as any).statusCode = 400;
    }
    throw err;
  }
}

function loosen(path: any): any {
  if (path instanceof RegExp || path === '/') return path;
  return Array.isArray(path) ? path.map(loosen) : String(path).replace(TRAILING_SLASH_REGEXP, '');
}

function regexpMatcher(re: RegExp): Matcher {
  const keys: Array<string | number> = [];
  let name = 0;
  let m: RegExpExecArray | null;
  MATCHING_GROUP_REGEXP.lastIndex = 0;
  while ((m = MATCHING_GROUP_REGEXP.exec(re.source))) keys.push(m[1] || name++);
  return function matchRegExp(p) {
    const found = re.exec(p);
    if (!found) return false;
    const params: Record<string, any> = {};
    for (let i = 1; i < found.length; i++) {
      const val = decodeParam(found[i]);
      if (val !== undefined) params[keys[i - 1] as string] = val;
    }
    return { params, path: found[0] };
  };
}

function matcher5(path: any, opts: LayerOptions): Matcher {
  if (path instanceof RegExp) return regexpMatcher(path);
  const fn = (compile8 ??= (require('path-to-regexp') as { match: typeof match8 }).match)(opts.strict ? path : loosen(path), {
    sensitive: opts.sensitive, end: opts.end, trailing: !opts.strict, decode: decodeParam,
  });
  return fn as unknown as Matcher;
}

export class Layer {
  handle: AnyFn;
  name: string;
  /** The path (or paths) as given, for listRoutes-like introspection. */
  rawPath: any;
  /** `use('/')` or `use(fn)`: every path matches, nothing to trim. */
  slash: boolean;
  route: LayerRoute | undefined = undefined;
  method: string | undefined = undefined;
  /** The path given to router.use()/route() (undefined for `use(fn)`), as tracing names layers by it. */
  pathArgument: unknown = undefined;
  /** Express 4 only: the part of the path the layer last matched (Express 4's `layer.path`), set by the router. */
  path: string | undefined = undefined;
  /** Express 4 only: path-to-regexp 0.1's regexp and keys, which some tools read. */
  regexp: RegExp | undefined;
  keys: Array<{ name: string | number }> | undefined;
  /** Whether the path matched case-sensitively (the router's setting when the layer was added). */
  sensitive: boolean;
  /** Express 4 layer: sync errors only (a returned promise is not awaited). */
  readonly v4: boolean;
  private star = false;
  private matchers: Matcher[] | undefined;
  private keyNames: readonly string[] = EMPTY;

  constructor(path: any, options: LayerOptions, fn: AnyFn, v4 = false) {
    this.handle = fn;
    this.name = fn.name || '<anonymous>';
    this.rawPath = Array.isArray(path) && !v4 ? path.flat(Infinity) : path;
    this.slash = path === '/' && options.end === false;
    this.sensitive = !!options.sensitive;
    this.v4 = v4;
    if (v4) {
      const keys: Array<{ name: string | number }> = [];
      this.regexp = (compile0 ??= require('path-to-regexp-v0') as typeof pathToRegexp0)(path, keys as any, options);
      this.keys = keys;
      this.keyNames = keys.map((k) => String(k.name));
      this.star = path === '*';
    } else {
      this.matchers = Array.isArray(this.rawPath)
        ? this.rawPath.map((p: any) => matcher5(p, options))
        : [matcher5(path, options)];
    }
  }

  /** The match of a pathname, or false; throws a 400 when a param cannot be decoded. */
  match(path: string): LayerMatch | false {
    if (this.slash) return { params: {}, path: '', keys: EMPTY, pattern: this.rawPath };
    if (this.regexp) return this.match4(path);
    const matchers = this.matchers!;
    for (let i = 0; i < matchers.length; i++) {
      const m = matchers[i]!(path);
      if (m) {
        const pattern = Array.isArray(this.rawPath) ? this.rawPath[i] : this.rawPath;
        return { params: m.params, path: m.path, keys: Object.keys(m.params), pattern };
      }
    }
    return false;
  }

  // Express 4's decode_param decodes every non-empty param; decodeParam skips those without '%', which
  // decodeURIComponent would return unchanged, so the answers are the same.
  private match4(path: string): LayerMatch | false {
    if (this.star) return { params: { 0: decodeParam(path) }, path, keys: this.keyNames, pattern: this.rawPath };
    const m = this.regexp!.exec(path);
    if (!m) return false;
    const params: Record<string, any> = {};
    const keys = this.keys!;
    for (let i = 1; i < m.length; i++) {
      const prop = keys[i - 1]!.name;
      const val = decodeParam(m[i]);
      if (val !== undefined || !hasOwn.call(params, prop)) params[prop] = val;
    }
    return { params, path: m[0], keys: this.keyNames, pattern: this.rawPath };
  }

  /**
   * Runs the handler as a request handler (arity ≤ 3); Express 5 sends a rejected promise to next(err), and so does
   * Express 4 when the app enables 'async errors'.
   */
  handleRequest(req: any, res: any, next: AnyFn): void {
    const fn = this.handle;
    if (fn.length > 3) { next(); return; }
    try {
      const ret = fn(req, res, next);
      if (ret !== undefined && isPromise(ret) && (!this.v4 || asyncErrors(req))) {
        ret.then(noop, (error: unknown) => next(error || new Error('Rejected promise')));
      }
    } catch (err) {
      next(err);
    }
  }

  /** Runs the handler as an error handler (arity 4 only). */
  handleError(error: unknown, req: any, res: any, next: AnyFn): void {
    const fn = this.handle;
    if (fn.length !== 4) { next(error); return; }
    try {
      const ret = fn(error, req, res, next);
      if (ret !== undefined && isPromise(ret) && (!this.v4 || asyncErrors(req))) {
        ret.then(noop, (err: unknown) => next(err || new Error('Rejected promise')));
      }
    } catch (err) {
      next(err);
    }
  }
}
