/**
 * `express()` and the `express` namespace (Router, json, static, request, response…) of one major, ported from
 * Express's lib/express.js, 5.x and 4.x (Copyright (c) 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015
 * Douglas Christopher Wilson; MIT).
 */
import { EventEmitter } from 'node:events';
import { query4 } from './app-handle.js';
import { createApplicationPrototype } from './application.js';
import { createRequestPrototype } from './request.js';
import { createRequestPrototype4 } from './express4/request.js';
import { checkPatchedExpress } from './patched-express.js';
import { createResponsePrototype } from './response.js';
import { createResponsePrototype4 } from './express4/response.js';
import { createRouterClass, Route, Route4 } from './router/index.js';
import type { AnyFn } from './utils.js';

/** Copies own property descriptors not already on `dest` (what merge-descriptors does with redefine=false). */
function mixin(dest: object, src: object): void {
  for (const name of Object.getOwnPropertyNames(src)) {
    if (Object.prototype.hasOwnProperty.call(dest, name)) continue;
    Object.defineProperty(dest, name, Object.getOwnPropertyDescriptor(src, name)!);
  }
}

/**
 * The body-parser and serve-static of one major (their defaults differ: Express 4's parsers set req.body = {} on
 * every request and default `extended: true`; serve-static 1 says charset=UTF-8). Each entry imports its own, so that
 * loading keel/express does not load Express 4's serve-static 1 and send 0.19, nor keel/express4 the 2.x ones.
 */
export interface MajorLibraries {
  bodyParser: { json: AnyFn; raw: AnyFn; text: AnyFn; urlencoded: AnyFn };
  serveStatic: AnyFn;
}

/** The `express` function of one major, with its namespace. */
export function createExpress(major: 4 | 5, libraries: MajorLibraries): any {
  const Router = createRouterClass(major);
  const proto = createApplicationPrototype(major, Router);
  const request = major === 4 ? createRequestPrototype4() : createRequestPrototype();
  const response = major === 4 ? createResponsePrototype4() : createResponsePrototype();

  function createApplication(): any {
    // a function declaration, not `const app = function app`: bundled (scripts/build.mjs), a function expression
    // whose name shadows an outer one is renamed (app2), and the app's `name` would differ from Express's
    function app(req: any, res: any, next?: AnyFn) {
      (app as any).handle(req, res, next);
    }
    mixin(app, EventEmitter.prototype);
    mixin(app, proto);
    app.request = Object.create(request, { app: { configurable: true, enumerable: true, writable: true, value: app } });
    app.response = Object.create(response, { app: { configurable: true, enumerable: true, writable: true, value: app } });
    (app as any).init();
    // express-async-errors and the like patch Express 4's files, which keel/express4 does not use: say so
    if (major === 4) checkPatchedExpress();
    return app;
  }

  const express: any = createApplication;
  express.application = proto;
  express.request = request;
  express.response = response;
  express.Route = major === 4 ? Route4 : Route;
  express.Router = Router;
  // each major with the body-parser and serve-static its Express depends on
  const parsers = libraries.bodyParser;
  express.json = parsers.json;
  express.raw = parsers.raw;
  express.static = libraries.serveStatic;
  express.text = parsers.text;
  express.urlencoded = parsers.urlencoded;
  if (major === 4) {
    express.query = query4;
    for (const name of REMOVED_MIDDLEWARE) {
      Object.defineProperty(express, name, {
        configurable: true,
        get() {
          throw new Error('Most middleware (like ' + name + ') is no longer bundled with Express and must be installed separately. Please see https://github.com/senchalabs/connect#middleware.');
        },
      });
    }
  }
  return express;
}

/** Connect middleware Express 3 bundled: Express 4 throws a pointer to the separate packages when one is read. */
const REMOVED_MIDDLEWARE = ['bodyParser', 'compress', 'cookieSession', 'session', 'logger', 'cookieParser', 'favicon',
  'responseTime', 'errorHandler', 'timeout', 'methodOverride', 'vhost', 'csrf', 'directory', 'limit', 'multipart',
  'staticCache'];
