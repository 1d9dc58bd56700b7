/**
 * Express 4's application prototype: Express 5's (application.ts) with what differs replaced: plain-object
 * settings read up the mount chain only, the 'extended' query parser by default (qs with arrays up to 1000
 * indexes; `false` gives an empty object), the router created by `app.lazyrouter()` as `app._router` (`app.router`
 * throws Express 3's migration message), `app.del`, `req.query` set once per request by app.handle with the parser
 * the app had when its router was made, and app.listen without the once-callback on a listen error. Ported from
 * Express's lib/application.js, lib/middleware/init.js and query.js of 4.x (Copyright (c) 2009-2013 TJ Holowaychuk,
 * 2013 Roman Shtylman, 2014-2015 Douglas Christopher Wilson; MIT).
 */
import parseUrl from 'parseurl';
import { finalDone, linkRequest, serve } from '../app-handle.js';
import { createApplicationPrototype, storeSetting } from '../application.js';
import { checkPatchedExpress } from '../patched-express.js';
import { compileQueryParser, qs, type AnyFn } from '../utils.js';

const hasOwn = Object.prototype.hasOwnProperty;

/** Express 4's 'extended' parser: qs with prototypes allowed and arrays up to 1000 indexes. */
export function parseExtendedQueryString4(str: string): Record<string, unknown> {
  // qs answers an empty query (none at all, for most requests) with {}: without normalising its options first
  if (str === '' || str == null) return {};
  return qs().parse(str, { allowPrototypes: true, arrayLimit: 1000 });
}

function newObject(): Record<string, unknown> {
  return {};
}

/** Express 4's `query parser` compiler: false gives an empty object rather than no parser. */
export function compileQueryParser4(val: unknown): AnyFn | undefined {
  if (val === false) return newObject;
  if (val === 'extended') return parseExtendedQueryString4;
  return compileQueryParser(val);
}

/**
 * The application prototype of Express 4, whose apps route with `createRouter`'s routers.
 *
 * @example
 * const application = createApplicationPrototype4(express.Router);
 */
export function createApplicationPrototype4(createRouter: AnyFn): Record<string, any> {
  const app = createApplicationPrototype(createRouter, lazyRouter);
  const defaultConfiguration = app.defaultConfiguration;
  app.init = function init(this: any) {
    this.cache = {};
    this.engines = {};
    this.settings = {};
    this.defaultConfiguration();
    // express-async-errors and the like patch Express 4's files, which keel/express4 does not use: say so
    checkPatchedExpress();
  };
  app.defaultConfiguration = function defaultConfiguration4(this: any) {
    defaultConfiguration.call(this);
    this.set('query parser', 'extended');
    Object.defineProperty(this, 'router', {
      configurable: true,
      get() {
        throw new Error("'app.router' is deprecated!\nPlease see the 3.x to 4.x migration guide for details on how to update your app.");
      },
    });
  };
  /**
   * Express 4 creates its router on the first route or middleware, with its query middleware first, made with the
   * 'query parser fn' of that moment: setting 'query parser' later changes nothing, on Express 4 as here.
   */
  app.lazyrouter = function lazyrouter(this: any) {
    if (!this._router) {
      this._router = createRouter({
        caseSensitive: this.enabled('case sensitive routing'),
        strict: this.enabled('strict routing'),
      });
      this[kQueryParse] = queryParser4(this.get('query parser fn'));
    }
  };
  app.set = function set(this: any, setting: string, val?: unknown) {
    if (arguments.length === 1) return ownSetting(this.settings, setting);
    return storeSetting(this, setting, val, compileQueryParser4);
  };
  app.del = app.delete;
  app.handle = handle4;
  app.listen = function listen(this: any, ...args: any[]) {
    return serve(this).listen(...args);
  };
  return app;
}

/** The query parser an Express 4 app made its router with (lazyrouter). */
const kQueryParse = Symbol('keel.express4.queryParse');

/** Express 4's router of an app: `app._router`, created by `app.lazyrouter()` (which apps may override). */
function lazyRouter(app: any): any {
  app.lazyrouter();
  return app._router;
}

/** Express 4 reads own settings up the mount chain only (never Object.prototype's). */
function ownSetting(start: any, setting: string): unknown {
  let settings = start;
  while (settings && settings !== Object.prototype) {
    if (hasOwn.call(settings, setting)) return settings[setting];
    settings = Object.getPrototypeOf(settings);
  }
  return undefined;
}

/** What Express 4's final handler logs of an error: its stack, or the error as a string. */
function stackOf(err: any): string {
  return err.stack || err.toString();
}

/** app.handle of Express 4: an app without routes or middleware answers with the final handler alone. */
function handle4(this: any, req: any, res: any, callback?: AnyFn) {
  const router = this._router;
  const done = callback || finalDone(this, req, res, stackOf);
  if (!router) { done(); return; }
  linkRequest(this, req, res);
  // Express 4's query middleware, the first layer of every app's router: req.query parsed once per request, a plain
  // property; a mounted app (or Express 4 around this one) that set it first wins. Not read again when a
  // middleware rewrites req.url. Apps that override lazyrouter get the parser of the moment.
  if (!req.query) {
    const parse = this[kQueryParse] ?? queryParser4(this.get('query parser fn'));
    // without a '?' the query is null, as parseurl would say: not parsed for it
    req.query = parse(req.url.indexOf('?') === -1 ? null : parseUrl(req)!.query);
  }
  router.handle(req, res, done);
}

/**
 * The parse of Express 4's query middleware made with `options`: the function itself, or qs with those options (and
 * prototypes allowed unless they say): an app with no 'query parser fn' at all (settings deleted) gets qs.
 */
function queryParser4(options?: unknown): (search: string | null | undefined) => unknown {
  if (typeof options === 'function') return options as AnyFn;
  const opts: any = Object.assign({}, options);
  if (opts.allowPrototypes === undefined) opts.allowPrototypes = true;
  const parse = qs().parse;
  return function queryParse(search) {
    return parse(search as string, opts);
  };
}

/** `express.query(options)` of Express 4: req.query parsed with qs (or with `options` when it is a function). */
export function query4(options?: unknown): AnyFn {
  const queryparse = queryParser4(options);
  return function query(req: any, _res: any, next: AnyFn) {
    if (!req.query) req.query = queryparse(parseUrl(req)!.query);
    next();
  };
}
