/**
 * One pass of a request through a router: Express's `router.handle`, walking only the candidate layers of the
 * request's first path segment (see layer-index.ts). Ported from the `router` package's index.js and Express 4's
 * lib/router/index.js (Copyright (c) 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher
 * Wilson; MIT).
 */
import parseUrl from 'parseurl';
import type { AnyFn } from '../utils.js';
import type { Layer, LayerMatch } from './layer.js';
import { firstSegment, LayerIndex, lowerBound } from './layer-index.js';
import { mergeParams, processParams } from './params.js';
import type { RouterState } from './types.js';
import { traceLayer, traceOf } from '../tracing.js';

function getPathname(req: any): string | null | undefined {
  try {
    return parseUrl(req)!.pathname;
  } catch {
    return undefined;
  }
}

/** The scheme and host of an absolute-form request target ('http://a.example'), which mounting leaves alone. */
function getProtohost(url: unknown): string | undefined {
  if (typeof url !== 'string' || url.length === 0 || url[0] === '/') return undefined;
  const searchIndex = url.indexOf('?');
  const pathLength = searchIndex !== -1 ? searchIndex : url.length;
  const fqdnIndex = url.slice(0, pathLength).indexOf('://');
  return fqdnIndex !== -1 ? url.substring(0, url.indexOf('/', 3 + fqdnIndex)) : undefined;
}

/** The router's index for `stack`, rebuilt when the stack was replaced or changed length. */
export function indexOf(router: RouterState, stack: Layer[]): LayerIndex {
  const current = router._index;
  if (current && current.stack === stack && current.length === stack.length) return current;
  const built = new LayerIndex(stack, router.rules.literal);
  if (router.stack === stack) router._index = built;
  return built;
}

export function handle(router: RouterState, req: any, res: any, callback: AnyFn): void {
  const rules = router.rules;
  const stack = router.stack;
  let index = indexOf(router, stack);
  let idx = 0;
  let seg: string | undefined;
  let segOf: string | undefined;
  let list: number[] = index.any;
  let pos = 0;
  const protohost = getProtohost(req.url) || '';
  let removed = '';
  let slashAdded = false;
  let sync = 0;
  const paramcalled: Record<string, any> = {};
  const parentParams = req.params;
  const parentUrl = req.baseUrl || '';
  const savedNext = req.next;
  let methods: string[] | undefined;
  let done: AnyFn = function restore(err?: unknown) {
    req.baseUrl = parentUrl;
    req.next = savedNext;
    req.params = parentParams;
    return callback(err);
  };
  // state of the matched layer while its param callbacks run
  let layer: Layer;
  let layerError: any;
  let layerPath = '';
  let path = '';
  // OpenTelemetry spans per layer, when the request runs under an active span (tracing.ts)
  const trace = traceOf(req);

  req.next = next;
  if (req.method === 'OPTIONS') {
    methods = [];
    done = rules.optionsAnswer(done, res, methods);
  }
  req.baseUrl = parentUrl;
  req.originalUrl = req.originalUrl || req.url;
  next();

  function next(err?: any): void {
    layerError = err === 'route' ? null : err;
    if (slashAdded) {
      if (rules.unslash(req.url, removed)) req.url = req.url.slice(1);
      slashAdded = false;
    }
    if (removed.length !== 0) {
      req.baseUrl = parentUrl;
      req.url = protohost + removed + req.url.slice(protohost.length);
      removed = '';
    }
    if (layerError === 'router') { setImmediate(done, null); return; }
    if (idx >= stack.length) { setImmediate(done, layerError); return; }
    if (++sync > 100) { setImmediate(next, err); return; }
    const pathname = getPathname(req);
    if (pathname == null) { done(layerError); return; }
    path = pathname;
    if (index.length !== stack.length) { index = indexOf(router, stack); seg = segOf = undefined; }
    // the same path as the previous layer's (middleware that called next()): same segment, no new string
    if (path !== segOf) {
      segOf = path;
      const s = firstSegment(path);
      if (s !== seg) {
        seg = s;
        list = index.candidates(s);
        pos = lowerBound(list, idx);
      }
    }

    let match: LayerMatch | false = false;
    let route;
    while (!match && pos < list.length) {
      const at = list[pos++]!;
      layer = stack[at]!;
      idx = at + 1;
      route = layer.route;
      try {
        match = layer.match(path);
      } catch (e) {
        layerError = layerError || e;
        match = false;
      }
      if (!match) continue;
      if (!route) continue;
      if (layerError) { match = false; continue; }
      const method = req.method;
      const hasMethod = route._handlesMethod(method);
      if (!hasMethod && method === 'OPTIONS' && methods) rules.allow(methods, route);
      if (!hasMethod && method !== 'HEAD') match = false;
    }
    if (!match) { idx = stack.length; done(layerError); return; }
    if (route) req.route = route;
    req.params = router.mergeParams ? mergeParams(match.params, parentParams) : match.params;
    layerPath = match.path;
    rules.matched(layer, layerPath);
    processParams(router.params, match.keys, paramcalled, req, res, afterParams, rules.forwardsRejection);
  }

  function afterParams(err?: any): void {
    if (err) next(layerError || err);
    else if (layer.route) {
      if (trace === undefined) layer.handleRequest(req, res, next);
      else traceLayer(trace, layer, req, res, next);
    } else trimPrefix();
    sync = 0;
  }

  function trimPrefix(): void {
    if (layerPath.length !== 0) {
      if (layerPath !== path.slice(0, layerPath.length)) { next(layerError); return; }
      const c = path[layerPath.length];
      if (!rules.endsMountPath(c)) { next(layerError); return; }
      removed = layerPath;
      req.url = protohost + req.url.slice(protohost.length + removed.length);
      if (!protohost && req.url[0] !== '/') {
        req.url = '/' + req.url;
        slashAdded = true;
      }
      req.baseUrl = parentUrl + (removed[removed.length - 1] === '/' ? removed.slice(0, -1) : removed);
    }
    if (layerError) layer.handleError(layerError, req, res, next);
    else if (trace === undefined) layer.handleRequest(req, res, next);
    else traceLayer(trace, layer, req, res, next);
  }
}
