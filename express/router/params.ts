/**
 * `router.param` callbacks and mergeParams, ported from the `router` package's index.js and Express 4's
 * lib/router/index.js (Copyright (c) 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher
 * Wilson; MIT).
 */
import { isPromise, type AnyFn } from '../utils.js';

interface ParamCalled { error: any; match: any; value: any }
function noop() {}

/**
 * Runs the param callbacks of `keys` in order, each at most once per value per request (`called` is shared by the
 * layers of one router pass), then `done(err?)`.
 */
export function processParams(
  params: Record<string, AnyFn[]>, keys: readonly string[], called: Record<string, ParamCalled>,
  req: any, res: any, done: AnyFn, forwardsRejection: (req: any) => boolean,
): void {
  // most matched layers have no param, or none with a callback: answered without building the walk's closures
  let any = false;
  for (let k = 0; k < keys.length; k++) {
    if (params[keys[k]!]) { any = true; break; }
  }
  if (!any) { done(); return; }
  walkParams(params, keys, called, req, res, done, forwardsRejection);
}

function walkParams(
  params: Record<string, AnyFn[]>, keys: readonly string[], called: Record<string, ParamCalled>,
  req: any, res: any, done: AnyFn, forwardsRejection: (req: any) => boolean,
): void {
  let i = 0;
  let paramIndex = 0;
  let key: string;
  let paramVal: any;
  let paramCallbacks: AnyFn[] | undefined;
  let paramCalled: ParamCalled | undefined;

  function param(err?: any): void {
    if (err) { done(err); return; }
    if (i >= keys.length) { done(); return; }
    paramIndex = 0;
    key = keys[i++]!;
    paramVal = req.params[key];
    paramCallbacks = params[key];
    paramCalled = called[key];
    if (paramVal === undefined || !paramCallbacks) { param(); return; }
    // called before with the same value, or an error: reuse the outcome
    if (paramCalled && (paramCalled.match === paramVal || (paramCalled.error && paramCalled.error !== 'route'))) {
      req.params[key] = paramCalled.value;
      param(paramCalled.error);
      return;
    }
    called[key] = paramCalled = { error: null, match: paramVal, value: paramVal };
    paramCallback();
  }

  function paramCallback(err?: any): void {
    const fn = paramCallbacks![paramIndex++];
    paramCalled!.value = req.params[key];
    if (err) {
      paramCalled!.error = err;
      param(err);
      return;
    }
    if (!fn) { param(); return; }
    try {
      const ret = fn(req, res, paramCallback, paramVal, key);
      if (ret !== undefined && isPromise(ret) && forwardsRejection(req)) {
        ret.then(noop, (e: unknown) => paramCallback(e || new Error('Rejected promise')));
      }
    } catch (e) {
      paramCallback(e);
    }
  }

  param();
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
