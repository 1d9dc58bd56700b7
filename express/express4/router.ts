/**
 * Express 4's `express.Router()`: Express 5's router pieces (router/index.ts) with Express 4's layers and routes,
 * its messages, `router.param(fn)` customizers, no required callback on handle(), and Express 4's rules for a pass
 * (below). Routers inherit the Router function itself, so its statics are the routers' methods: packages that
 * extend routers (express-ws's `express.Router.ws`) or wrap their methods (@opentelemetry/instrumentation-express
 * wraps `express.Router.route` and `.use`) do it there. Ported from Express 4's lib/router/index.js (Copyright (c)
 * 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher Wilson; MIT).
 */
import { handle as handleRequest } from '../router/handle.js';
import { installRouterMethods, newRouter, type Router, type RouterOptions } from '../router/index.js';
import type { Layer } from '../router/layer.js';
import type { RouterRules } from '../router/types.js';
import { asyncErrors, type AnyFn } from '../utils.js';
import { Layer4 } from './layer.js';
import { Route4 } from './route.js';

export { Route4 };

/** Express 4's rules for a pass through a router. */
const ROUTER_RULES_4: RouterRules = {
  // path-to-regexp 0.1 gives '.' a meaning before a param (':a.:b'), so only plainer segments are indexed
  literal: /^[A-Za-z0-9_~-]+$/,
  // a mount path also ends before a '.'
  endsMountPath: (c) => !c || c === '/' || c === '.',
  unslash: () => true,
  // Express 4's list: `_options()`, each method once, in the order met
  allow(methods, route) {
    for (const m of (route as Route4)._options()) if (methods.indexOf(m) === -1) methods.push(m);
  },
  // the list as it is, comma separated, through res.send
  optionsAnswer(done, res, methods) {
    return function optionsDone(err?: unknown) {
      if (err || methods.length === 0) return done(err);
      try {
        const body = methods.join(',');
        res.set('Allow', body);
        res.send(body);
      } catch (e) {
        done(e);
      }
    };
  },
  // synchronous errors only, unless the app enables 'async errors' (express-async-errors' behaviour)
  forwardsRejection: asyncErrors,
  // Express 4's layer.path: the part of the path the layer last matched, which some tools read
  matched(layer: Layer, path: string) {
    layer.path = path;
  },
};

const objectRegExp = /^\[object (\S+)\]$/;
function gettype(obj: unknown): string {
  const type = typeof obj;
  if (type !== 'object') return type;
  return Object.prototype.toString.call(obj).replace(objectRegExp, '$1');
}

/** Express 4's router constructor. */
export function createRouterClass4(): AnyFn & { prototype: any } {
  function Router(this: unknown, options?: RouterOptions): Router {
    const instance = newRouter(Router, options);
    (instance as any)._params = [];
    return instance;
  }
  const proto: any = Router;
  installRouterMethods(proto, ROUTER_RULES_4, {
    Layer: Layer4,
    Route: Route4,
    noHandler: 'Router.use() requires a middleware function',
    notAFunction: (fn) => 'Router.use() requires a middleware function but got a ' + gettype(fn),
    // Express 4's route layer runs `route.dispatch.bind(route)`, named 'bound dispatch': instrumentations (Sentry,
    // OpenTelemetry's instrumentation-express 0.47) tell a route's layer from a middleware by that name
    routeHandler: (route) => route.dispatch.bind(route),
  });
  proto.handle = function routerHandle(this: Router, req: any, res: any, callback: AnyFn) {
    handleRequest(this, req, res, callback);
  };
  proto.param = param4;
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

