// keel/express4, CommonJS: typed as Express 4 with the app's own @types/express (an optional peer dependency, as
// for every package that extends Express: the types of `req`, `res`, Router and the middleware passed to keel's app
// are the very ones the app's code is written against, augmentations of express-serve-static-core included).
// Install @types/express@4 for keel/express4 (an Express 4 app has it). See docs/express-engine.md, "Switching a production app".
import e = require('express');

declare function express(): e.Express;
declare namespace express {
  export import json = e.json;
  export import raw = e.raw;
  export import text = e.text;
  export import urlencoded = e.urlencoded;
  export import application = e.application;
  export import request = e.request;
  export import response = e.response;
  export import Router = e.Router;
  export import RouterOptions = e.RouterOptions;
  export import Application = e.Application;
  export import CookieOptions = e.CookieOptions;
  export import Errback = e.Errback;
  export import ErrorRequestHandler = e.ErrorRequestHandler;
  export import Express = e.Express;
  export import Handler = e.Handler;
  export import IRoute = e.IRoute;
  export import IRouter = e.IRouter;
  export import IRouterHandler = e.IRouterHandler;
  export import IRouterMatcher = e.IRouterMatcher;
  export import MediaType = e.MediaType;
  export import NextFunction = e.NextFunction;
  export import Locals = e.Locals;
  export import Request = e.Request;
  export import RequestHandler = e.RequestHandler;
  export import RequestParamHandler = e.RequestParamHandler;
  export import Response = e.Response;
  export import Send = e.Send;
  /** `express.static` (serve-static 1.x). */
  const serveStatic: typeof e.static;
  export { serveStatic as static };
  /** A route (what `app.route(path)` and `router.route(path)` return); @types/express does not declare the class. */
  /** Express 4's `express.query(options)` middleware (@types/express 5 no longer declares it). */
  export function query(options: object | ((str: string, options?: unknown) => unknown)): e.Handler;
  export const Route: { new (path: string): e.IRoute; prototype: e.IRoute };
}
export = express;
