/**
 * One pass of a request through a router: Express's `router.handle`, walking only the candidate layers of the
 * request's first path segment (see layer-index.ts). Ported from the `router` package's index.js and Express 4's
 * lib/router/index.js (Copyright (c) 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher
 * Wilson; MIT).
 *
 * Express keeps a pass's state in router.handle's closure, with four inner functions allocated per pass; here it is
 * one RouterPass object whose methods are those steps, and the only function allocated per pass is the `next` given
 * to the layers (a router runs on every request, usually twice: the app's and a mounted one).
 */
import type { AnyFn } from '../utils.js';
import type { Layer, LayerMatch } from './layer.js';
import { firstSegment, LayerIndex, lowerBound } from './layer-index.js';
import { mergeParams, paramKeys, walkParams, type ParamCalled } from './params.js';
import type { RouterRules, RouterState } from './types.js';
import { traceLayer, traceOf, type ExpressTrace } from '../tracing.js';
import { runLayer } from './channels.js';
import { getProtohost, handOnPathname, pathnameOf } from './url.js';

/** The router's index for `stack`, rebuilt when the stack was replaced or changed length. */
export function indexOf(router: RouterState, stack: Layer[]): LayerIndex {
  const current = router._index;
  if (current && current.stack === stack && current.length === stack.length) return current;
  const built = new LayerIndex(stack, router.rules.literal);
  if (router.stack === stack) router._index = built;
  return built;
}

/** Runs `req` through `router`'s layers; `callback(err?)` when none answered. */
export function handle(router: RouterState, req: any, res: any, callback: AnyFn): void {
  const pass = new RouterPass(router, req, res, callback);
  req.next = pass.next;
  if (req.method === 'OPTIONS') pass.collectMethods();
  req.baseUrl = pass.parentUrl;
  req.originalUrl = req.originalUrl || req.url;
  pass.next();
}

/** setImmediate's callback at the end of a pass (no closure per pass for it). */
function finishLater(pass: RouterPass, err: unknown): void {
  pass.finish(err);
}

/** What findLayer gives for a layer matching every path (`layer.slash`): step gives it its fresh empty params. */
const SLASH_MATCH: LayerMatch = Object.freeze({ params: Object.freeze({}), path: '' });

/** No req.url parsed yet in this pass (req.url itself may be undefined). */
const NO_URL = Symbol('no url');

/** The state of one pass, and its steps: next() → a matching layer → its param callbacks → the layer. */
class RouterPass {
  declare readonly router: RouterState;
  declare readonly rules: RouterRules;
  declare readonly stack: Layer[];
  declare readonly req: any;
  declare readonly res: any;
  declare readonly callback: AnyFn;
  declare readonly protohost: string;
  declare readonly parentParams: any;
  declare readonly parentUrl: string;
  declare readonly savedNext: any;
  /** OpenTelemetry spans per layer, when the request runs under an active span (tracing.ts). */
  declare readonly trace: ExpressTrace | undefined;
  /** The `next` every layer of this pass gets (and req.next while the pass runs). */
  declare readonly next: (err?: any) => void;
  declare index: LayerIndex;
  /** The stack position after the last layer tried. */
  declare idx: number;
  /** The first path segment, the path it was taken from, its candidate layers and the position in them. */
  declare seg: string | undefined;
  declare segOf: string | undefined;
  declare list: number[];
  declare pos: number;
  /** req.url when `path` was parsed from it: a layer that called next() without changing it needs no new parse. */
  declare urlOf: unknown;
  declare path: string;
  /** What a mounted layer took off req.url, and whether a '/' was added in front of what remained. */
  declare removed: string;
  declare slashAdded: boolean;
  /** Layers run synchronously in a row: past 100, the next one runs on a new tick (no stack overflow). */
  declare sync: number;
  /** The outcomes of the param callbacks run in this pass, newest first (params.ts). */
  declare called: ParamCalled | undefined;
  /** OPTIONS: the methods of the routes that matched, and the automatic answer when none handled it. */
  declare methods: string[] | undefined;
  declare optionsDone: AnyFn | undefined;
  /** The matched layer while its param callbacks run, the error carried past it, and the path it matched. */
  declare layer: Layer | undefined;
  declare layerError: any;
  declare layerPath: string;

  constructor(router: RouterState, req: any, res: any, callback: AnyFn) {
    this.router = router;
    this.rules = router.rules;
    this.stack = router.stack;
    this.req = req;
    this.res = res;
    this.callback = callback;
    this.protohost = getProtohost(req.url) || '';
    this.parentParams = req.params;
    this.parentUrl = req.baseUrl || '';
    this.savedNext = req.next;
    this.trace = traceOf(req);
    this.index = indexOf(router, this.stack);
    this.list = this.index.any;
    this.idx = 0;
    this.seg = undefined;
    this.segOf = undefined;
    this.pos = 0;
    this.urlOf = NO_URL;
    this.path = '';
    this.removed = '';
    this.slashAdded = false;
    this.sync = 0;
    this.called = undefined;
    this.methods = undefined;
    this.optionsDone = undefined;
    this.layer = undefined;
    this.layerError = undefined;
    this.layerPath = '';
    // an arrow function named `next` with one parameter, as Express's
    const next = (err?: any): void => this.step(err);
    this.next = next;
  }

  /** OPTIONS: collect the matched routes' methods for the automatic answer. */
  collectMethods(): void {
    const methods: string[] = (this.methods = []);
    this.optionsDone = this.rules.optionsAnswer((err?: unknown) => this.restore(err), this.res, methods);
  }

  /** The end of the pass: req's router fields restored, then the callback (or the automatic OPTIONS answer). */
  finish(err: unknown): unknown {
    return this.optionsDone !== undefined ? this.optionsDone(err) : this.restore(err);
  }

  restore(err: unknown): unknown {
    const req = this.req;
    req.baseUrl = this.parentUrl;
    req.next = this.savedNext;
    req.params = this.parentParams;
    return this.callback(err);
  }

  /** Express's next(err): undo the last mount's URL change, find the next matching layer, run its params. */
  step(err?: any): void {
    const req = this.req;
    const layerError = (this.layerError = err === 'route' ? null : err);
    if (this.slashAdded) {
      if (this.rules.unslash(req.url, this.removed)) req.url = req.url.slice(1);
      this.slashAdded = false;
    }
    if (this.removed.length !== 0) {
      req.baseUrl = this.parentUrl;
      req.url = this.protohost + this.removed + req.url.slice(this.protohost.length);
      this.removed = '';
    }
    if (layerError === 'router') { setImmediate(finishLater, this, null); return; }
    if (this.idx >= this.stack.length) { setImmediate(finishLater, this, layerError); return; }
    if (++this.sync > 100) { setImmediate(this.next, err); return; }
    if (!this.locate(req)) { this.finish(layerError); return; }

    const match = this.findLayer(req);
    if (!match) { this.idx = this.stack.length; this.finish(this.layerError); return; }
    const layer = this.layer!;
    const router = this.router;
    if (match === SLASH_MATCH) {
      // a `use(fn)` layer: what Layer.match gives it (a new empty params object, nothing matched), without the
      // match object, and no param walk (no params)
      req.params = router.mergeParams ? mergeParams({}, this.parentParams) : {};
      this.layerPath = '';
      this.rules.matched(layer, '');
      this.afterParams();
      return;
    }
    if (layer.route) req.route = layer.route;
    // the param names are taken before mergeParams renumbers the layer's numeric captures
    const keys = paramKeys(router.params, match);
    req.params = router.mergeParams ? mergeParams(match.params, this.parentParams) : match.params;
    this.layerPath = match.path;
    this.rules.matched(layer, match.path);
    if (keys === undefined) this.afterParams();
    else walkParams(router.params, keys, this, this.rules.forwardsRejection);
  }

  /** The pathname to match (false when req.url cannot be parsed), and the candidate layers of its first segment. */
  private locate(req: any): boolean {
    const url = req.url;
    if (url !== this.urlOf) {
      const pathname = pathnameOf(req);
      if (pathname == null) return false;
      this.path = pathname;
      this.urlOf = url;
    }
    const stack = this.stack;
    if (this.index.length !== stack.length) {
      this.index = indexOf(this.router, stack);
      this.seg = this.segOf = undefined;
    }
    const path = this.path;
    // the same path as the previous layer's (middleware that called next()): same segment, no new string
    if (path !== this.segOf) {
      this.segOf = path;
      const s = firstSegment(path);
      if (s !== this.seg) {
        this.seg = s;
        this.list = this.index.candidates(s);
        this.pos = lowerBound(this.list, this.idx);
      }
    }
    return true;
  }

  /** The next candidate layer matching the path (and, for a route, the method), or false; sets `layer`, `idx`. */
  private findLayer(req: any): LayerMatch | false {
    const stack = this.stack;
    const list = this.list;
    const path = this.path;
    let match: LayerMatch | false = false;
    while (!match && this.pos < list.length) {
      const at = list[this.pos++]!;
      const layer = (this.layer = stack[at]!);
      this.idx = at + 1;
      // `use(fn)` and `use('/', fn)`: matches every path (Layer.match's first line), as a marker
      if (layer.slash) return SLASH_MATCH;
      try {
        match = layer.match(path);
      } catch (e) {
        this.layerError = this.layerError || e;
        match = false;
      }
      if (!match) continue;
      const route = layer.route;
      if (!route) continue;
      if (this.layerError) { match = false; continue; }
      const method = req.method;
      const hasMethod = route._handlesMethod(method);
      if (!hasMethod && method === 'OPTIONS' && this.methods) this.rules.allow(this.methods, route);
      if (!hasMethod && method !== 'HEAD') match = false;
    }
    return match;
  }

  /** After the matched layer's param callbacks: a route runs, a middleware or mounted router trims its path first. */
  afterParams(err?: any): void {
    const layer = this.layer!;
    if (err) this.step(this.layerError || err);
    else if (layer.route) this.run(layer);
    else this.trimPrefix(layer);
    this.sync = 0;
  }

  private run(layer: Layer): void {
    if (this.trace === undefined) runLayer(layer, this.req, this.res, this.next);
    else traceLayer(this.trace, layer, this.req, this.res, this.next);
  }

  /** A middleware layer: its matched path taken off req.url (onto req.baseUrl), then it runs. */
  private trimPrefix(layer: Layer): void {
    const req = this.req;
    const layerPath = this.layerPath;
    if (layerPath.length !== 0) {
      const path = this.path;
      if (layerPath !== path.slice(0, layerPath.length)) { this.step(this.layerError); return; }
      if (!this.rules.endsMountPath(path[layerPath.length])) { this.step(this.layerError); return; }
      const protohost = this.protohost;
      const removed = (this.removed = layerPath);
      const url = req.url;
      req.url = protohost + url.slice(protohost.length + removed.length);
      if (!protohost && req.url[0] !== '/') {
        req.url = '/' + req.url;
        this.slashAdded = true;
      }
      // the mounted router's pathname, known from this one's (one URL scan per request)
      if (!protohost && url === this.urlOf) handOnPathname(url, path, req.url, removed.length, this.slashAdded);
      req.baseUrl = this.parentUrl + (removed[removed.length - 1] === '/' ? removed.slice(0, -1) : removed);
    }
    if (this.layerError) layer.handleError(this.layerError, req, this.res, this.next);
    else this.run(layer);
  }
}
