/**
 * `router.param` callbacks and mergeParams, ported from the `router` package's index.js and Express 4's
 * lib/router/index.js (Copyright (c) 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher
 * Wilson; MIT).
 */
import { isPromise, type AnyFn } from '../utils.js';
import type { LayerMatch } from './layer.js';

/**
 * A param callback's outcome for one value of the param `key`, kept for the rest of the pass (Express keeps an
 * object keyed by name): a short linked list from the pass, searched by `===` (a pass walks one or two names).
 *
 * Every per-pass object here is a class instance, not an object or array literal: V8 tracks literals by allocation
 * site and, when the objects of a site once survive a scavenge, allocates all later ones straight in the old
 * generation ("pretenuring"); a walk made there keeps its pass, request and response alive past every scavenge until
 * the next full collection. Under 32 concurrent connections that promoted ~4.8 KB per request and made a quarter of
 * the process's time garbage collection (express-engine, --trace-gc-nvp). Class instances are never pretenured.
 */
export class ParamCalled {
  declare readonly key: string;
  declare error: any;
  declare match: any;
  declare value: any;
  declare next: ParamCalled | undefined;
  constructor(key: string, value: any, next: ParamCalled | undefined) {
    this.key = key;
    this.error = null;
    this.match = value;
    this.value = value;
    this.next = next;
  }
}

function calledOf(head: ParamCalled | undefined, key: string): ParamCalled | undefined {
  for (let c = head; c !== undefined; c = c.next) if (c.key === key) return c;
  return undefined;
}

function noop() {}
const hasOwn = Object.prototype.hasOwnProperty;

/** The pass a walk belongs to: its request and response, and where the walk ends. */
export interface ParamPass {
  readonly req: any;
  readonly res: any;
  /** The param callbacks' outcomes so far in this pass, newest first. */
  called: ParamCalled | undefined;
  afterParams(err?: any): void;
}

/**
 * The names of a matched layer's params to walk, in order, when one of them has a callback in `callbacks`, else
 * undefined (most matched layers: no walk at all). The layer gives its names (Express 4's regexp keys); else they
 * are Express 5's `Object.keys(match.params)`, where a walk only ever acts on names with callbacks: the one such
 * name alone, or all of them in the params' order when several have callbacks. Looked up from the callbacks' side:
 * the router's few names (a plain object) against the params (path-to-regexp's null-prototype dictionary, whose
 * key listing is slow).
 */
export function paramKeys(callbacks: Record<string, AnyFn[]>, match: LayerMatch): readonly string[] | undefined {
  const keys = match.keys;
  if (keys !== undefined) {
    for (let k = 0; k < keys.length; k++) if (callbacks[keys[k]!]) return keys;
    return undefined;
  }
  const params = match.params;
  let found: string | undefined;
  for (const name in callbacks) {
    if (params[name] === undefined || !callbacks[name] || !hasOwn.call(params, name)) continue;
    if (found !== undefined) return Object.keys(params);
    found = name;
  }
  return found === undefined ? undefined : single(found);
}

/** One-name key lists, shared: the walk only reads them, and a matched layer with a param callback (most apps'
 * `router.param('id')`) would otherwise allocate one per request. Bounded by the names routers have callbacks for. */
const SINGLE = new Map<string, readonly string[]>();
function single(name: string): readonly string[] {
  let keys = SINGLE.get(name);
  if (keys === undefined) SINGLE.set(name, (keys = Object.freeze([name])));
  return keys;
}

/**
 * Runs the param callbacks of `keys` in order, each at most once per value per pass (`called` is shared by the
 * layers of one router pass), then `pass.afterParams(err?)`.
 */
export function walkParams(
  callbacks: Record<string, AnyFn[]>, keys: readonly string[], pass: ParamPass, forwardsRejection: (req: any) => boolean,
): void {
  nextParam(new ParamWalk(callbacks, keys, pass, forwardsRejection));
}

/** One walk's state; Express's `param` and `paramCallback` closures are nextParam and nextCallback over it. */
class ParamWalk {
  declare readonly callbacks: Record<string, AnyFn[]>;
  declare readonly keys: readonly string[];
  declare readonly pass: ParamPass;
  declare readonly forwardsRejection: (req: any) => boolean;
  /** The `next` a param callback gets (one function allocated per walk). */
  declare readonly paramCallback: (err?: any) => void;
  declare i: number;
  declare paramIndex: number;
  declare key: string;
  declare paramVal: any;
  declare paramCallbacks: AnyFn[] | undefined;
  declare paramCalled: ParamCalled | undefined;

  constructor(callbacks: Record<string, AnyFn[]>, keys: readonly string[], pass: ParamPass, forwardsRejection: (req: any) => boolean) {
    this.callbacks = callbacks;
    this.keys = keys;
    this.pass = pass;
    this.forwardsRejection = forwardsRejection;
    this.i = 0;
    this.paramIndex = 0;
    this.key = '';
    this.paramVal = undefined;
    this.paramCallbacks = undefined;
    this.paramCalled = undefined;
    // an arrow function named `paramCallback` with one parameter, as Express's
    const paramCallback = (err?: any): void => nextCallback(this, err);
    this.paramCallback = paramCallback;
  }
}

/** The next param with callbacks, or the end of the walk. */
function nextParam(walk: ParamWalk, err?: any): void {
  const pass = walk.pass;
  if (err) { pass.afterParams(err); return; }
  if (walk.i >= walk.keys.length) { pass.afterParams(); return; }
  const params = pass.req.params;
  walk.paramIndex = 0;
  const key = (walk.key = walk.keys[walk.i++]!);
  const paramVal = (walk.paramVal = params[key]);
  walk.paramCallbacks = walk.callbacks[key];
  let paramCalled = (walk.paramCalled = calledOf(walk.pass.called, key));
  if (paramVal === undefined || !walk.paramCallbacks) { nextParam(walk); return; }
  // called before with the same value, or an error: reuse the outcome
  if (paramCalled && (paramCalled.match === paramVal || (paramCalled.error && paramCalled.error !== 'route'))) {
    params[key] = paramCalled.value;
    nextParam(walk, paramCalled.error);
    return;
  }
  // a newer outcome for the same name goes in front of the old one, which calledOf no longer finds
  walk.paramCalled = paramCalled = walk.pass.called = new ParamCalled(key, paramVal, walk.pass.called);
  nextCallback(walk);
}

/** The next callback of the current param (Express's paramCallback). */
function nextCallback(walk: ParamWalk, err?: any): void {
  const fn = walk.paramCallbacks![walk.paramIndex++];
  const req = walk.pass.req;
  walk.paramCalled!.value = req.params[walk.key];
  if (err) {
    walk.paramCalled!.error = err;
    nextParam(walk, err);
    return;
  }
  if (!fn) { nextParam(walk); return; }
  try {
    const ret = fn(req, walk.pass.res, walk.paramCallback, walk.paramVal, walk.key);
    if (ret !== undefined && isPromise(ret) && walk.forwardsRejection(req)) {
      ret.then(noop, (e: unknown) => walk.paramCallback(e || new Error('Rejected promise')));
    }
  } catch (e) {
    walk.paramCallback(e);
  }
}

const propertyIsEnumerable = Object.prototype.propertyIsEnumerable;

/**
 * `Object.assign(target, source)`: the same own enumerable keys in the same order, each written by assignment. Params
 * are null-prototype dictionaries (path-to-regexp's and the segment matcher's `Object.create(null)`), and V8's
 * Object.assign takes its slow path for a dictionary source (≈ 400 ns each; two per merged layer were ≈ 8k
 * instructions per request on the express-engine app with `mergeParams: true`); Object.keys of one is ≈ 4× cheaper.
 */
function assignOwn(target: Record<PropertyKey, any>, source: Record<PropertyKey, any>): Record<string, any> {
  const keys = Object.keys(source);
  for (let i = 0; i < keys.length; i++) target[keys[i]!] = source[keys[i]!];
  const symbols = Object.getOwnPropertySymbols(source);
  for (let i = 0; i < symbols.length; i++) if (propertyIsEnumerable.call(source, symbols[i]!)) target[symbols[i]!] = source[symbols[i]!];
  return target;
}

/** The params of a layer merged over its parent router's (mergeParams), numeric captures appended after the parent's. */
export function mergeParams(params: Record<string, any>, parent: unknown): Record<string, any> {
  if (typeof parent !== 'object' || !parent) return params;
  const obj = assignOwn({}, parent as Record<string, any>);
  if (!(0 in params) || !(0 in parent)) return assignOwn(obj, params);
  let i = 0;
  let o = 0;
  while (i in params) i++;
  while (o in parent) o++;
  for (i--; i >= 0; i--) {
    params[i + o] = params[i];
    if (i < o) delete params[i];
  }
  return assignOwn(obj, params);
}
