/**
 * A router layer: one path pattern and one handler, matched with path-to-regexp 8 (Express 5). Express 4's layer
 * (path-to-regexp 0.1, synchronous errors only) is its overlay's subclass, express4/layer.ts. Ported from the
 * `router` package's lib/layer.js (Copyright (c) 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas
 * Christopher Wilson; MIT).
 */
import { createRequire } from 'node:module';
import type { match as match8 } from 'path-to-regexp';
import { isPromise, type AnyFn } from '../utils.js';
import { ROUTER_CHANNELS, type EngineChannels } from './channels.js';
import { segmentMatcher } from './segment-match.js';

/**
 * What a layer match gives the router: the decoded params and the matched part of the path (path-to-regexp's own
 * match result, not a copy), and the param names when the layer knows them in its own order (Express 4's regexp
 * keys); without them the router takes the params' own keys, as Express 5.
 */
export interface LayerMatch {
  params: Record<string, any>;
  path: string;
  keys?: readonly string[];
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
}

const require = createRequire(import.meta.url);
// path-to-regexp 8 loaded by the first layer: keel/express4 never loads it (the require call stays literal, for
// bundlers)
let compile8: typeof match8 | undefined;

export type Matcher = (path: string) => { params: Record<string, any>; path: string } | false;

const TRAILING_SLASH_REGEXP = /\/+$/;
const MATCHING_GROUP_REGEXP = /\((?:\?<(.*?)>)?(?!\?)/g;
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

/** A path with nothing path-to-regexp 8 reads as syntax (params, wildcards, groups, escapes): a literal. */
const LITERAL_PATH = /^[^:*{}()[\]?+!\\]*$/;

function matcher5(path: any, opts: LayerOptions): Matcher {
  if (path instanceof RegExp) return regexpMatcher(path);
  const pattern = opts.strict ? path : loosen(path);
  // literal and `:name` segments are walked (segment-match.ts); path-to-regexp for the rest, loaded on first need
  const simple = typeof pattern === 'string' ? segmentMatcher(pattern, {
    sensitive: Boolean(opts.sensitive), end: opts.end === undefined || Boolean(opts.end), trailing: !opts.strict,
    decode: decodeParam,
  }) : undefined;
  const fn = simple ?? (compile8 ??= (require('path-to-regexp') as { match: typeof match8 }).match)(pattern, {
    sensitive: opts.sensitive, end: opts.end, trailing: !opts.strict, decode: decodeParam,
  }) as unknown as Matcher;
  if (!opts.end || typeof pattern !== 'string' || !LITERAL_PATH.test(pattern)) return fn;
  // a route's literal path ('/users'): its regexp matches the path itself, plus one trailing '/' unless strict, and
  // case folding keeps the length, so any other length is a miss without running the regexp (a router's routes
  // mostly miss: '/users' is tried for '/users/42')
  const min = pattern.length;
  const max = opts.strict ? min : min + 1;
  return function matchLiteral(p) {
    return p.length < min || p.length > max ? false : fn(p);
  };
}

/** Marks keel's layer classes (a static every subclass inherits): patched-express.ts tells them from Express's. */
export const KEEL_LAYER = Symbol.for('keel.express.Layer');

export class Layer {
  static readonly [KEEL_LAYER] = true;
  /**
   * Assigned, never defined on the instance (`declare`): a package that patches `Layer.prototype.handle` with an
   * accessor (express-async-errors wraps every handler so) sees each layer's handler go through it, as on Express.
   */
  declare handle: AnyFn;
  /** The diagnostics channels its runs are published on (router/channels.ts): Express 5's, Express 4's for Layer4. */
  declare readonly channels: EngineChannels;
  name: string;
  /** The path (or paths) as given, for listRoutes-like introspection. */
  rawPath: any;
  /** `use('/')` or `use(fn)`: every path matches, nothing to trim. */
  slash: boolean;
  route: LayerRoute | undefined = undefined;
  method: string | undefined = undefined;
  /** The path given to router.use()/route() (undefined for `use(fn)`), as tracing names layers by it. */
  pathArgument: unknown = undefined;
  /** Express 4's `layer.path`: the part of the path the layer last matched (its router sets it). */
  path: string | undefined = undefined;
  /** Whether the path matched case-sensitively (the router's setting when the layer was added). */
  sensitive: boolean;
  protected matchers: Matcher[] | undefined;
  private arityOf: AnyFn | undefined = undefined;
  private arityValue = 0;

  constructor(path: any, options: LayerOptions, fn: AnyFn) {
    this.handle = fn;
    this.name = fn.name || '<anonymous>';
    this.slash = path === '/' && options.end === false;
    this.sensitive = !!options.sensitive;
    this.rawPath = this.compile(path, options);
  }

  /** Compiles the path's matchers; returns the path as rawPath keeps it (nested arrays flattened). */
  protected compile(path: any, options: LayerOptions): any {
    const rawPath = Array.isArray(path) ? path.flat(Infinity) : path;
    this.matchers = Array.isArray(rawPath) ? rawPath.map((p: any) => matcher5(p, options)) : [matcher5(path, options)];
    return rawPath;
  }

  /** The match of a pathname, or false; throws a 400 when a param cannot be decoded. */
  match(path: string): LayerMatch | false {
    if (this.slash) return { params: {}, path: '' };
    const matchers = this.matchers!;
    for (let i = 0; i < matchers.length; i++) {
      const m = matchers[i]!(path);
      if (m) return m;
    }
    return false;
  }

  /**
   * The handler's arity, read again only when `handle` was replaced (instrumentations wrap it): a function's
   * `length` is a getter call, and every layer a request passes reads it.
   */
  protected arity(fn: AnyFn): number {
    if (fn !== this.arityOf) {
      this.arityOf = fn;
      this.arityValue = fn.length;
    }
    return this.arityValue;
  }

  /** Whether a rejected promise a handler returned goes to next(err): always, in Express 5. */
  forwardsRejection(_req: any): boolean {
    return true;
  }

  /** Runs the handler as a request handler (arity ≤ 3); a rejected promise goes to next(err). */
  handleRequest(req: any, res: any, next: AnyFn): void {
    const fn = this.handle;
    if (this.arity(fn) > 3) { next(); return; }
    try {
      const ret = fn(req, res, next);
      if (ret !== undefined && isPromise(ret) && this.forwardsRejection(req)) {
        ret.then(noop, (error: unknown) => next(error || new Error('Rejected promise')));
      }
    } catch (err) {
      next(err);
    }
  }

  /** Runs the handler as an error handler (arity 4 only). */
  handleError(error: unknown, req: any, res: any, next: AnyFn): void {
    const fn = this.handle;
    if (this.arity(fn) !== 4) { next(error); return; }
    try {
      const ret = fn(error, req, res, next);
      if (ret !== undefined && isPromise(ret) && this.forwardsRejection(req)) {
        ret.then(noop, (err: unknown) => next(err || new Error('Rejected promise')));
      }
    } catch (err) {
      next(err);
    }
  }
}
Object.defineProperty(Layer.prototype, 'channels', { configurable: true, writable: true, value: ROUTER_CHANNELS });
