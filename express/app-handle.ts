/**
 * How an Express 5 app answers a request (app.handle) and listens (app.listen). Ported from Express's
 * lib/application.js (Copyright (c) 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher
 * Wilson; MIT). Express 4's are its overlay's (express4/application.ts), which shares linkRequest() and serve().
 */
import type httpTypes from 'node:http';
import { createRequire } from 'node:module';
import finalhandler from 'finalhandler';
import parseUrl from 'parseurl';
import { setPoweredBy } from './engine-headers.js';
import { hotSettings } from './hot-settings.js';
import { applyKeelSettings } from './keel-server.js';
import { qs, type AnyFn } from './utils.js';

// node:http through require(), as Express loads it: APM agents that hook require() (OpenTelemetry's
// instrumentation-http registered with `node --require`, dd-trace, newrelic) patch http.Server when it is required;
// an ES import alone is invisible to them, and the app's HTTP SERVER spans would be missing.
const http = createRequire(import.meta.url)('node:http') as typeof httpTypes;

/**
 * The final handler of a request no handler answered: finalhandler's, created only when the router gets there (most
 * requests are answered before), so a request does not pay for its closures and options up front. Its error log
 * prints `logged(err)`, nothing under NODE_ENV=test, as Express.
 */
export function finalDone(app: any, req: any, res: any, logged: (err: any) => unknown): AnyFn {
  return function done(err?: unknown) {
    const onerror = (e: any) => {
      if (app.get('env') !== 'test') console.error(logged(e));
    };
    return finalhandler(req, res, { env: app.get('env'), onerror })(err);
  };
}

/** What Express 5's final handler logs of an error: the error itself. */
function asIs(err: any): any {
  return err;
}

/**
 * The app prototype a server class's instances inherit (on the class's prototype): one property load tells
 * linkRequest that a request needs no prototype change, where Object.getPrototypeOf is a runtime call.
 */
const kAppProto = Symbol('keel.appPrototype');

/** The start of app.handle: X-Powered-By, req/res linked and given the app's prototypes, res.locals. */
export function linkRequest(app: any, req: any, res: any): void {
  if (hotSettings(app).poweredBy) setPoweredBy(res);
  req.res = res;
  res.req = req;
  // requests from app.listen() are created with these prototypes already (see serverClasses)
  if (req[kAppProto] !== app.request && Object.getPrototypeOf(req) !== app.request) Object.setPrototypeOf(req, app.request);
  if (res[kAppProto] !== app.response && Object.getPrototypeOf(res) !== app.response) Object.setPrototypeOf(res, app.response);
  if (!res.locals) res.locals = Object.create(null);
}

/** app.handle: the final handler, the request linked to the app, then the router. */
export function appHandle(): AnyFn {
  return function handle(this: any, req: any, res: any, callback?: AnyFn) {
    const router = this.router;
    const done = callback || finalDone(this, req, res, asIs);
    linkRequest(this, req, res);
    router.handle(req, res, done);
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
  Object.defineProperty(Request.prototype, kAppProto, { value: app.request });
  Object.defineProperty(Response.prototype, kAppProto, { value: app.response });
  return { IncomingMessage: Request, ServerResponse: Response as unknown as typeof http.ServerResponse };
}

/** A node http.Server for the app, with keel's server settings applied (keel-server.ts). */
export function serve(app: any): httpTypes.Server {
  const server = http.createServer(serverClasses(app), app);
  applyKeelSettings(app, server);
  return server;
}

/** app.listen(...): a node http.Server for the app, listening; a listen error is reported to the callback too. */
export function appListen(): AnyFn {
  return function listen(this: any, ...args: any[]) {
    const server = serve(this);
    if (typeof args[args.length - 1] === 'function') {
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
