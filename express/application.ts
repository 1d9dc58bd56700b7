/**
 * The application prototype (`express.application`) of Express 5: settings, routing delegation, mounting, views.
 * Ported from Express's lib/application.js 5.x (Copyright (c) 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman,
 * 2014-2015 Douglas Christopher Wilson; MIT). Request handling and listen are in app-handle.ts; Express 4's
 * differences are its overlay, express4/application.ts.
 */
import { resolve } from 'node:path';
import { appHandle, appListen } from './app-handle.js';
import { settingsChanged } from './hot-settings.js';
import { View } from './view.js';
import { compileETag, compileQueryParser, compileTrust, flattenArgs, methods, type AnyFn } from './utils.js';

/** Marks settings whose 'trust proxy' is the default, so a mounted app inherits its parent's. */
const trustProxyDefaultSymbol = '@@symbol:trust_proxy_default';

/** How app.use, app.route, app.param and the verbs find an app's router. */
export type RouterOf = (app: any) => any;

/** Express 5's: `app.router`, created on first read. */
function appRouter(app: any): any {
  return app.router;
}

/**
 * The application prototype of Express 5 (`express.application`), whose apps route with `createRouter`'s routers,
 * found by `routerOf` (Express 4's overlay passes its own).
 *
 * @example
 * const application = createApplicationPrototype(express.Router);
 */
export function createApplicationPrototype(createRouter: AnyFn, routerOf: RouterOf = appRouter): Record<string, any> {
  const app: Record<string, any> = {};
  app.init = function init(this: any) {
    this.cache = Object.create(null);
    this.engines = Object.create(null);
    this.settings = Object.create(null);
    this.defaultConfiguration();
    let router: any = null;
    Object.defineProperty(this, 'router', {
      configurable: true,
      enumerable: true,
      get: function getrouter(this: any) {
        if (router === null) {
          router = createRouter({
            caseSensitive: this.enabled('case sensitive routing'),
            strict: this.enabled('strict routing'),
          });
        }
        return router;
      },
    });
  };
  app.defaultConfiguration = defaultConfiguration;
  app.handle = appHandle();
  installRouting(app, routerOf);
  installSettings(app);
  app.render = render;
  app.listen = appListen();
  return app;
}

/** The settings every app starts with, and how a mounted app inherits its parent's. */
function defaultConfiguration(this: any) {
  const env = process.env.NODE_ENV || 'development';
  this.enable('x-powered-by');
  this.set('etag', 'weak');
  this.set('env', env);
  this.set('query parser', 'simple');
  this.set('subdomain offset', 2);
  this.set('trust proxy', false);
  Object.defineProperty(this.settings, trustProxyDefaultSymbol, { configurable: true, value: true });

  this.on('mount', function onmount(this: any, parent: any) {
    // a sub-app with the default 'trust proxy' inherits its parent's
    if (this.settings[trustProxyDefaultSymbol] === true && typeof parent.settings['trust proxy fn'] === 'function') {
      delete this.settings['trust proxy'];
      delete this.settings['trust proxy fn'];
    }
    Object.setPrototypeOf(this.request, parent.request);
    Object.setPrototypeOf(this.response, parent.response);
    Object.setPrototypeOf(this.engines, parent.engines);
    Object.setPrototypeOf(this.settings, parent.settings);
  });

  this.locals = Object.create(null);
  this.mountpath = '/';
  this.locals.settings = this.settings;
  this.set('view', View);
  this.set('views', resolve('views'));
  this.set('jsonp callback name', 'callback');
  if (env === 'production') this.enable('view cache');
}

/** app.use (middleware and mounted apps), app.route, app.param, app.engine, app.all and one method per verb. */
function installRouting(app: Record<string, any>, routerOf: RouterOf): void {
  app.use = function use(this: any, fn: unknown) {
    let offset = 0;
    let path: any = '/';
    if (typeof fn !== 'function') {
      let arg = fn;
      while (Array.isArray(arg) && arg.length !== 0) arg = arg[0];
      if (typeof arg !== 'function') {
        offset = 1;
        path = fn;
      }
    }
    const fns = flattenArgs(arguments, offset);
    if (fns.length === 0) throw new TypeError('app.use() requires a middleware function');
    const router = routerOf(this);
    for (const f of fns as any[]) {
      if (!f || !f.handle || !f.set) router.use(path, f);
      else mountApp(this, router, path, f);
    }
    return this;
  };

  app.route = function route(this: any, path: any) {
    return routerOf(this).route(path);
  };

  app.engine = function engine(this: any, ext: string, fn: AnyFn) {
    if (typeof fn !== 'function') throw new Error('callback function required');
    const extension = ext[0] !== '.' ? '.' + ext : ext;
    this.engines[extension] = fn;
    return this;
  };

  app.param = function param(this: any, name: any, fn: AnyFn) {
    const router = routerOf(this);
    if (Array.isArray(name)) {
      for (const n of name) this.param(n, fn);
      return this;
    }
    router.param(name, fn);
    return this;
  };

  for (const method of methods) {
    app[method] = function verb(this: any, path: any) {
      const route = routerOf(this).route(path);
      route[method](...Array.prototype.slice.call(arguments, 1));
      return this;
    };
  }
  // app.get(setting) is read on every request (res.json reads four settings): no rest-parameter array per call
  app.get = function get(this: any, path: any) {
    if (arguments.length === 1) return this.set(path);
    const route = routerOf(this).route(path);
    route.get(...Array.prototype.slice.call(arguments, 1));
    return this;
  };

  app.all = function all(this: any, path: any, ...handlers: unknown[]) {
    const route = routerOf(this).route(path);
    for (const method of methods) route[method](...handlers);
    return this;
  };
}

/** Mounts the sub-app `sub` at `path`: its requests run with its prototypes, the parent's restored after. */
function mountApp(parent: any, router: any, path: any, sub: any): void {
  sub.mountpath = path;
  sub.parent = parent;
  router.use(path, function mounted_app(req: any, res: any, next: AnyFn) {
    const orig = req.app;
    sub.handle(req, res, function mountedDone(err?: unknown) {
      Object.setPrototypeOf(req, orig.request);
      Object.setPrototypeOf(res, orig.response);
      next(err);
    });
  });
  sub.emit('mount', parent);
  // the sub-app now reads its parent's settings (its settings' prototype changed)
  settingsChanged();
}

/** app.set (and app.get(setting)), app.enabled, app.disabled, app.enable, app.disable and app.path. */
function installSettings(app: Record<string, any>): void {
  app.set = function set(this: any, setting: string, val?: unknown) {
    if (arguments.length === 1) return this.settings[setting];
    return storeSetting(this, setting, val, compileQueryParser);
  };
  app.path = function path(this: any): string {
    return this.parent ? this.parent.path() + this.mountpath : '';
  };
  app.enabled = function enabled(this: any, setting: string) { return Boolean(this.set(setting)); };
  app.disabled = function disabled(this: any, setting: string) { return !this.set(setting); };
  app.enable = function enable(this: any, setting: string) { return this.set(setting, true); };
  app.disable = function disable(this: any, setting: string) { return this.set(setting, false); };
}

/** Stores a setting, and the function compiled from it for 'etag', 'query parser' (with `compileQuery`) and 'trust proxy'. */
export function storeSetting(app: any, setting: string, val: unknown, compileQuery: (val: unknown) => unknown): any {
  app.settings[setting] = val;
  settingsChanged();
  switch (setting) {
    case 'etag':
      app.set('etag fn', compileETag(val));
      break;
    case 'query parser':
      app.set('query parser fn', compileQuery(val));
      break;
    case 'trust proxy':
      app.set('trust proxy fn', compileTrust(val));
      Object.defineProperty(app.settings, trustProxyDefaultSymbol, { configurable: true, value: false });
      break;
  }
  return app;
}

/** app.render: looks the view up (cached with 'view cache') and renders it with the app's and the call's locals. */
function render(this: any, name: string, options?: any, callback?: AnyFn) {
  const cache = this.cache;
  let done = callback!;
  let opts = options || {};
  if (typeof options === 'function') {
    done = options;
    opts = {};
  }
  const renderOptions = { ...this.locals, ...opts._locals, ...opts };
  if (renderOptions.cache == null) renderOptions.cache = this.enabled('view cache');
  let view = renderOptions.cache ? cache[name] : undefined;
  if (!view) {
    const ViewClass = this.get('view');
    view = new ViewClass(name, { defaultEngine: this.get('view engine'), root: this.get('views'), engines: this.engines });
    if (!view.path) {
      const dirs = Array.isArray(view.root) && view.root.length > 1
        ? 'directories "' + view.root.slice(0, -1).join('", "') + '" or "' + view.root[view.root.length - 1] + '"'
        : 'directory "' + view.root + '"';
      const err: any = new Error('Failed to lookup view "' + name + '" in views ' + dirs);
      err.view = view;
      return done(err);
    }
    if (renderOptions.cache) cache[name] = view;
  }
  try {
    view.render(renderOptions, done);
  } catch (err) {
    done(err);
  }
}
