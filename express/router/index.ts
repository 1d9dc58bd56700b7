/**
 * `express.Router()`: Express 5's router (the `router` package) and Express 4's (lib/router), ported from them
 * (Copyright (c) 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher Wilson; MIT).
 * A router is a `(req, res, next)` function whose prototype holds use/route/param/handle and one function per method.
 */
import { methods, flattenArgs, type AnyFn } from '../utils.js';
import { handle as handleRequest } from './handle.js';
import { Layer } from './layer.js';
import { Route, Route4 } from './route.js';
import type { RouterState } from './types.js';

export { Route, Route4 };

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

const objectRegExp = /^\[object (\S+)\]$/;
function gettype(obj: unknown): string {
  const type = typeof obj;
  if (type !== 'object') return type;
  return Object.prototype.toString.call(obj).replace(objectRegExp, '$1');
}

/** The router prototype and constructor of one major. */
export function createRouterClass(major: 4 | 5): AnyFn & { prototype: any } {
  const v4 = major === 4;
  const RouteClass = v4 ? Route4 : Route;

  function Router(this: unknown, options?: RouterOptions): Router {
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
    if (v4) (instance as any)._params = [];
    instance.strict = opts.strict;
    instance.stack = [];
    return instance;
  }
  // Routers are functions inheriting Function.prototype (call/apply, which wrappers such as OpenTelemetry's use).
  // Express 5's inherit `Router.prototype`, itself a function. Express 4's inherit the Router function itself, so
  // its statics are the routers' methods: packages that extend routers (express-ws's `express.Router.ws`) or wrap
  // their methods (@opentelemetry/instrumentation-express wraps `express.Router.route` and `.use`) do it there.
  const proto: any = v4 ? Router : function routerPrototype() {};
  if (!v4) {
    Router.prototype = proto;
    // Express 5's `express.Router.Route` (the router package's static), so `req.route instanceof express.Router.Route`
    (Router as any).Route = RouteClass;
  }
  Object.defineProperty(proto, 'v4', { value: v4 });

  proto.handle = function routerHandle(this: Router, req: any, res: any, callback: AnyFn) {
    if (!callback && !v4) throw new TypeError('argument callback is required');
    handleRequest(this, req, res, callback);
  };

  proto.param = v4 ? param4 : function param(this: Router, name: unknown, fn: unknown) {
    if (!name) throw new TypeError('argument name is required');
    if (typeof name !== 'string') throw new TypeError('argument name must be a string');
    if (!fn) throw new TypeError('argument fn is required');
    if (typeof fn !== 'function') throw new TypeError('argument fn must be a function');
    (this.params[name] ??= []).push(fn as AnyFn);
    return this;
  };

  proto.use = function use(this: Router, handler: unknown) {
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
    if (callbacks.length === 0) {
      throw new TypeError(v4 ? 'Router.use() requires a middleware function' : 'argument handler is required');
    }
    for (const fn of callbacks) {
      if (typeof fn !== 'function') {
        throw new TypeError(v4
          ? 'Router.use() requires a middleware function but got a ' + gettype(fn)
          : 'argument handler must be a function');
      }
      const layer = new Layer(path, { sensitive: this.caseSensitive, strict: false, end: false }, fn as AnyFn, v4);
      layer.route = undefined;
      if (offset === 1) layer.pathArgument = path;
      this.stack.push(layer);
    }
    return this;
  };

  proto.route = function route(this: Router, path: any) {
    const r = new RouteClass(path);
    // a method, named 'handle' as Express 5's (tools such as instrumentation-express read layer.name === 'handle'):
    // a property key is never renamed by the bundler (scripts/build.mjs), a nested `function handle` would be
    const { handle } = { handle(req: any, res: any, next: AnyFn) { r.dispatch(req, res, next); } };
    const layer = new Layer(path, { sensitive: this.caseSensitive, strict: this.strict, end: true }, handle, v4);
    layer.route = r;
    layer.pathArgument = path;
    this.stack.push(layer);
    return r;
  };

  if (!v4) {
    /** Each registered route path with its methods, and each mounted router (router 2.3's introspection). */
    proto.listRoutes = function listRoutes(this: Router) {
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
    };
  }

  for (const method of [...methods, 'all']) {
    proto[method] = function verb(this: Router, path: any, ...args: unknown[]) {
      const r = this.route(path);
      r[method](...args);
      return this;
    };
  }
  return Router as any;
}

/** Express 4's router.param: `router.param(fn)` customizers, a leading ':' tolerated. */
function param4(this: Router & { _params: AnyFn[] }, name: any, fn: any) {
  if (typeof name === 'function') {
    this._params.push(name);
    return;
  }
  if (name[0] === ':') name = name.slice(1);
  for (const custom of this._params) {
    const ret = custom(name, fn);
    if (ret) fn = ret;
  }
  if (typeof fn !== 'function') throw new Error('invalid param() call for ' + name + ', got ' + fn);
  (this.params[name] = this.params[name] || []).push(fn);
  return this;
}
