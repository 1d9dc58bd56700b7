/**
 * `router.param` callbacks and mergeParams, ported from the `router` package's index.js and Express 4's
 * lib/router/index.js (Copyright (c) 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher
 * Wilson; MIT).
 */
import { isPromise, type AnyFn } from '../utils.js';
import type { LayerMatch } from './layer.js';

/** A param callback's outcome for one value of the param `key`, kept for the rest of the pass. */
export interface ParamCalled { readonly key: string; error: any; match: any; value: any }

/**
 * The outcomes of one pass, by param (Express keeps an object keyed by name). A list searched by `===`: a pass
 * walks one or two names, and a fresh object's keyed store and load (a map transition each, megamorphic across
 * routers) cost more than comparing a few names.
 */
export type CalledList = ParamCalled[];

function calledOf(called: CalledList, key: string): ParamCalled | undefined {
  for (let i = 0; i < called.length; i++) if (called[i]!.key === key) return called[i];
  return undefined;
}

function setCalled(called: CalledList, record: ParamCalled): void {
  for (let i = 0; i < called.length; i++) {
    if (called[i]!.key === record.key) { called[i] = record; return; }
  }
  called.push(record);
}
function noop() {}
const hasOwn = Object.prototype.hasOwnProperty;

/** The pass a walk belongs to: its request and response, and where the walk ends. */
export interface ParamPass {
  readonly req: any;
  readonly res: any;
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
  callbacks: Record<string, AnyFn[]>, keys: readonly string[], called: CalledList,
  pass: ParamPass, forwardsRejection: (req: any) => boolean,
): void {
  // an object literal, not `new`: allocated inline in the router's optimised code, where a class instance went
  // through V8's generic construct stub (≈ 150 instructions per walk more)
  const walk: ParamWalk = {
    callbacks, keys, called, pass, forwardsRejection, paramCallback: noop,
    i: 0, paramIndex: 0, key: '', paramVal: undefined, paramCallbacks: undefined, paramCalled: undefined,
  };
  walk.paramCallback = (err?: any): void => nextCallback(walk, err);
  nextParam(walk);
}

/** One walk's state; Express's `param` and `paramCallback` closures are nextParam and nextCallback over it. */
interface ParamWalk {
  readonly callbacks: Record<string, AnyFn[]>;
  readonly keys: readonly string[];
  readonly called: CalledList;
  readonly pass: ParamPass;
  readonly forwardsRejection: (req: any) => boolean;
  /** The `next` a param callback gets (one function allocated per walk). */
  paramCallback: (err?: any) => void;
  i: number;
  paramIndex: number;
  key: string;
  paramVal: any;
  paramCallbacks: AnyFn[] | undefined;
  paramCalled: ParamCalled | undefined;
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
  let paramCalled = (walk.paramCalled = calledOf(walk.called, key));
  if (paramVal === undefined || !walk.paramCallbacks) { nextParam(walk); return; }
  // called before with the same value, or an error: reuse the outcome
  if (paramCalled && (paramCalled.match === paramVal || (paramCalled.error && paramCalled.error !== 'route'))) {
    params[key] = paramCalled.value;
    nextParam(walk, paramCalled.error);
    return;
  }
  walk.paramCalled = paramCalled = { key, error: null, match: paramVal, value: paramVal };
  setCalled(walk.called, paramCalled);
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

/** The params of a layer merged over its parent router's (mergeParams), numeric captures appended after the parent's. */
export function mergeParams(params: Record<string, any>, parent: unknown): Record<string, any> {
  if (typeof parent !== 'object' || !parent) return params;
  const obj = Object.assign({}, parent) as Record<string, any>;
  if (!(0 in params) || !(0 in parent)) return Object.assign(obj, params);
  let i = 0;
  let o = 0;
  while (i in params) i++;
  while (o in parent) o++;
  for (i--; i >= 0; i--) {
    params[i + o] = params[i];
    if (i < o) delete params[i];
  }
  return Object.assign(obj, params);
}
