/**
 * `express.Router()`: Express 5's router (the `router` package), ported from it (Copyright (c) 2009-2013 TJ
 * Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher Wilson; MIT). A router is a `(req, res, next)`
 * function whose prototype holds use/route/param/handle and one function per method. Express 4's router is its
 * overlay's, express4/router.ts, built from the same pieces.
 */
import { methods, flattenArgs, type AnyFn } from '../utils.js';
import { register } from './channels.js';
import { handle as handleRequest } from './handle.js';
import { Layer, type LayerOptions } from './layer.js';
import { Route } from './route.js';
import { ROUTER_RULES } from './rules.js';
import type { RouterRules, RouterState } from './types.js';

export { Route };

/** Options of `express.Router()`. */
export interface RouterOptions {
  /** '/Foo' and '/foo' are different paths (default false). */
  caseSensitive?: boolean;
  /** Keep the parent router's req.params under this router (default false). */
  mergeParams?: boolean;
  /** '/foo' and '/foo/' are different paths (default false). */
  strict?: boolean;
}

/** A router: a middleware function with Express's router API. */
export interface Router extends RouterState {
  (req: any, res: any, next: AnyFn): void;
  handle(req: any, res: any, next: AnyFn): void;
  use(...args: any[]): this;
  route(path: any): Route;
  param(name: any, fn?: AnyFn): this;
  [method: string]: any;
}

/** The kinds of layer and route a router builds, and the messages its use() throws. */
export interface RouterKinds {
  Layer: new (path: any, options: LayerOptions, fn: AnyFn) => Layer;
  Route: new (path: any) => Route;
  /** use() with no function, and with something else than a function. */
  noHandler: string;
  notAFunction(fn: unknown): string;
  /** The handler of a route's layer (default: a function named `handle`, as Express 5's). */
  routeHandler?(route: Route): AnyFn;
}

/**
 * A router instance inheriting `proto`: a function inheriting Function.prototype (call/apply, which wrappers such
 * as OpenTelemetry's use), with Express's router fields.
 */
export function newRouter(proto: object, options?: RouterOptions): Router {
  const opts = options || {};
  // `instance`, not `router`: bundled (scripts/build.mjs), a function expression whose name shadows an outer
  // binding (here a `router` const) is renamed (router2), and tools read `layer.name === 'router'`
  const instance = function router(req: any, res: any, next: AnyFn) {
    (instance as Router).handle(req, res, next);
  } as Router;
  Object.setPrototypeOf(instance, proto);
  instance.caseSensitive = opts.caseSensitive;
  instance.mergeParams = opts.mergeParams;
  instance.params = {};
  instance.strict = opts.strict;
  instance.stack = [];
  return instance;
}

/** Express 5's router constructor: routers inherit `Router.prototype`, itself a function. */
export function createRouterClass(): AnyFn & { prototype: any } {
  const proto: any = function routerPrototype() {};
  function Router(this: unknown, options?: RouterOptions): Router {
    return newRouter(proto, options);
  }
  Router.prototype = proto;
  // Express 5's `express.Router.Route` (the router package's static), so `req.route instanceof express.Router.Route`
  (Router as any).Route = Route;
  installRouterMethods(proto, ROUTER_RULES, {
    Layer, Route,
    noHandler: 'argument handler is required',
    notAFunction: () => 'argument handler must be a function',
  });
  proto.handle = function routerHandle(this: Router, req: any, res: any, callback: AnyFn) {
    if (!callback) throw new TypeError('argument callback is required');
    handleRequest(this, req, res, callback);
  };
  proto.param = function param(this: Router, name: unknown, fn: unknown) {
    if (!name) throw new TypeError('argument name is required');
    if (typeof name !== 'string') throw new TypeError('argument name must be a string');
    if (!fn) throw new TypeError('argument fn is required');
    if (typeof fn !== 'function') throw new TypeError('argument fn must be a function');
    (this.params[name] ??= []).push(fn as AnyFn);
    return this;
  };
  proto.listRoutes = listRoutes;
  return Router as any;
}

/** use(), route() and one method per verb (and all) on a router prototype, building `kinds`' layers and routes. */
export function installRouterMethods(proto: any, rules: RouterRules, kinds: RouterKinds): void {
  Object.defineProperty(proto, 'rules', { value: rules });
  const channels = kinds.Layer.prototype.channels;
  // published on the engine's register channel (router/channels.ts) when someone subscribes
  proto.use = function use(this: Router, _handler: unknown) {
    return register(channels, addUse, this, arguments);
  };
  proto.route = function route(this: Router, path: any) {
    return register(channels, addRoute, this, arguments);
  };
  function addUse(this: Router, handler: unknown) {
    let offset = 0;
    let path: any = '/';
    if (typeof handler !== 'function') {
      let arg = handler;
      while (Array.isArray(arg) && arg.length !== 0) arg = arg[0];
      if (typeof arg !== 'function') {
        offset = 1;
        path = handler;
      }
    }
    const callbacks = flattenArgs(arguments, offset);
    if (callbacks.length === 0) throw new TypeError(kinds.noHandler);
    for (const fn of callbacks) {
      if (typeof fn !== 'function') throw new TypeError(kinds.notAFunction(fn));
      const layer = new kinds.Layer(path, { sensitive: this.caseSensitive, strict: false, end: false }, fn as AnyFn);
      layer.route = undefined;
      if (offset === 1) layer.pathArgument = path;
      this.stack.push(layer);
    }
    return this;
  }

  function addRoute(this: Router, path: any) {
    const r = new kinds.Route(path);
    // a method, named 'handle' as Express 5's (tools such as instrumentation-express read layer.name === 'handle'):
    // a property key is never renamed by the bundler (scripts/build.mjs), a nested `function handle` would be
    const handle = kinds.routeHandler?.(r)
      ?? { handle(req: any, res: any, next: AnyFn) { r.dispatch(req, res, next); } }.handle;
    const layer = new kinds.Layer(path, { sensitive: this.caseSensitive, strict: this.strict, end: true }, handle);
    layer.route = r;
    layer.pathArgument = path;
    this.stack.push(layer);
    return r;
  }

  for (const method of [...methods, 'all']) {
    proto[method] = function verb(this: Router, path: any, ...args: unknown[]) {
      const r = this.route(path);
      r[method](...args);
      return this;
    };
  }
}

/** Each registered route path with its methods, and each mounted router (router 2.3's introspection). */
function listRoutes(this: Router) {
  const routes: Array<{ path: any; methods: string[] | undefined; router: any }> = [];
  for (const layer of this.stack) {
    const r = layer.route as Route | undefined;
    const router = !r && Array.isArray((layer.handle as any).stack) ? layer.handle : undefined;
    if (!r && !router) continue;
    const list = r ? r._methods(true) : undefined;
    if (Array.isArray(layer.rawPath)) {
      for (const path of layer.rawPath) routes.push({ path, methods: list && list.slice(), router });
    } else routes.push({ path: layer.rawPath, methods: list, router });
  }
  return routes;
}
