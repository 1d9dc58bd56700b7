/**
 * How an app answers a request (app.handle) and listens (app.listen), for Express 5 and Express 4. Ported from
 * Express's lib/application.js and Express 4's lib/middleware/init.js and query.js (Copyright (c) 2009-2013 TJ
 * Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher Wilson; MIT).
 */
import type httpTypes from 'node:http';
import { createRequire } from 'node:module';
import finalhandler from 'finalhandler';
import parseUrl from 'parseurl';
import { applyKeelSettings } from './keel-server.js';
import { qs, type AnyFn } from './utils.js';

// node:http through require(), as Express loads it: APM agents that hook require() (OpenTelemetry's
// instrumentation-http registered with `node --require`, dd-trace, newrelic) patch http.Server when it is required;
// an ES import alone is invisible to them, and the app's HTTP SERVER spans would be missing.
const http = createRequire(import.meta.url)('node:http') as typeof httpTypes;

/** The final handler's error log: nothing under NODE_ENV=test, as Express. */
function errorLogger(app: any, v4: boolean): (err: any) => void {
  return function logerror(err: any) {
    if (app.get('env') !== 'test') console.error(v4 ? err.stack || err.toString() : err);
  };
}

/**
 * The final handler of a request no handler answered: finalhandler's, created only when the router gets there (most
 * requests are answered before), so a request does not pay for its closures, options and error logger up front.
 */
function finalDone(app: any, req: any, res: any, v4: boolean): AnyFn {
  return function finalDone(err?: unknown) {
    return finalhandler(req, res, { env: app.get('env'), onerror: errorLogger(app, v4) })(err);
  };
}

/** app.handle: the final handler, X-Powered-By, req/res linked and given the app's prototypes, then the router. */
export function appHandle(v4: boolean): AnyFn {
  return function handle(this: any, req: any, res: any, callback?: AnyFn) {
    const router = v4 ? this._router : this.router;
    const done = callback || finalDone(this, req, res, v4);
    // Express 4 answers an app without routes or middleware with the final handler alone
    if (v4 && !router) { done(); return; }
    if (this.enabled('x-powered-by')) res.setHeader('X-Powered-By', 'Express');
    req.res = res;
    res.req = req;
    // requests from app.listen() are created with these prototypes already (see serverClasses)
    if (!hasProto(req, this.request)) Object.setPrototypeOf(req, this.request);
    if (!hasProto(res, this.response)) Object.setPrototypeOf(res, this.response);
    if (!res.locals) res.locals = Object.create(null);
    // Express 4's query middleware is not a layer here: the request prototype parses req.query on first read. With
    // no 'query parser fn' at all (settings deleted), that middleware fell back to qs, which only the app can know.
    if (v4 && typeof this.get('query parser fn') !== 'function') req.query = defaultQuery4(req);
    router.handle(req, res, done);
  };
}

function defaultQuery4(req: any): unknown {
  return qs().parse(parseUrl(req)!.query as string, { allowPrototypes: true });
}

/** `express.query(options)` of Express 4: req.query parsed with qs (or with `options` when it is a function). */
export function query4(options?: unknown): AnyFn {
  let opts: any = Object.assign({}, options);
  let queryparse: AnyFn = qs().parse;
  if (typeof options === 'function') {
    queryparse = options as AnyFn;
    opts = undefined;
  }
  if (opts !== undefined && opts.allowPrototypes === undefined) opts.allowPrototypes = true;
  return function query(req: any, _res: any, next: AnyFn) {
    if (!req.query) req.query = queryparse(parseUrl(req)!.query, opts);
    next();
  };
}

/**
 * The request and response classes of the app's server: node creates each request and response with the app's
 * prototypes already in their chain (one empty class prototype above them), so app.handle does not swap prototypes on
 * every request. Subclasses, not functions with `prototype = app.request`: V8 builds those instances far slower.
 */
export function serverClasses(app: any): { IncomingMessage: typeof http.IncomingMessage; ServerResponse: typeof http.ServerResponse } {
  class Request extends http.IncomingMessage {}
  class Response extends http.ServerResponse {}
  Object.setPrototypeOf(Request.prototype, app.request);
  Object.setPrototypeOf(Response.prototype, app.response);
  return { IncomingMessage: Request, ServerResponse: Response as unknown as typeof http.ServerResponse };
}

/** Whether `obj` already inherits `proto` directly or through one server-class prototype. */
function hasProto(obj: object, proto: object): boolean {
  const p = Object.getPrototypeOf(obj);
  return p === proto || Object.getPrototypeOf(p) === proto;
}

/** app.listen(...): a node http.Server for the app, listening; Express 5 also reports a listen error to the callback. */
export function appListen(v4: boolean): AnyFn {
  return function listen(this: any, ...args: any[]) {
    const server = http.createServer(serverClasses(this), this);
    applyKeelSettings(this, server);
    if (!v4 && typeof args[args.length - 1] === 'function') {
      const cb = args[args.length - 1] as AnyFn;
      let called = false;
      const done = args[args.length - 1] = function onceListening(this: unknown, ...a: unknown[]) {
        if (called) return;
        called = true;
        return cb.apply(this, a);
      };
      server.once('error', done);
    }
    return server.listen(...args);
  };
}
