/**
 * `express()` and the `express` namespace (Router, json, static, request, response…), ported from Express's
 * lib/express.js 5.x (Copyright (c) 2009-2013 TJ Holowaychuk, 2013 Roman Shtylman, 2014-2015 Douglas Christopher
 * Wilson; MIT). Express 5's parts by default; keel/express4 passes Express 4's (express4/create.ts).
 */
import { EventEmitter } from 'node:events';
import { createApplicationPrototype } from './application.js';
import { createRequestPrototype } from './request.js';
import { createResponsePrototype } from './response.js';
import { announceChannels } from './router/channels.js';
import { createRouterClass, Route } from './router/index.js';
import { Layer } from './router/layer.js';
import { View } from './view.js';
import type { AnyFn } from './utils.js';

/** Copies own property descriptors not already on `dest` (what merge-descriptors does with redefine=false). */
function mixin(dest: object, src: object): void {
  for (const name of Object.getOwnPropertyNames(src)) {
    if (Object.prototype.hasOwnProperty.call(dest, name)) continue;
    Object.defineProperty(dest, name, Object.getOwnPropertyDescriptor(src, name)!);
  }
}

/**
 * The body-parser and serve-static of an Express (their defaults differ: Express 4's parsers set req.body = {} on
 * every request and default `extended: true`; serve-static 1 says charset=UTF-8). Each entry imports its own, so that
 * loading keel/express does not load Express 4's serve-static 1 and send 0.19, nor keel/express4 the 2.x ones.
 */
export interface EngineLibraries {
  bodyParser: { json: AnyFn; raw: AnyFn; text: AnyFn; urlencoded: AnyFn };
  serveStatic: AnyFn;
}

/**
 * Where an `express` function keeps its parts (non-enumerable): keel's alias packages (scripts/pack-express.mjs)
 * map Express's own files onto them (`express/lib/router/layer` is `express[EXPRESS_PARTS].Layer`).
 */
export const EXPRESS_PARTS = Symbol.for('keel.express.parts');

/** What an `express` function is made of: its Router, Route and Layer classes and its three prototypes. */
export interface EngineParts {
  Router: AnyFn & { prototype: any };
  Layer: typeof Layer;
  Route: new (path: any) => unknown;
  application: Record<string, any>;
  request: any;
  response: any;
}

/** Express 5's parts. */
export function expressParts(): EngineParts {
  const Router = createRouterClass();
  return {
    Router,
    Layer,
    Route,
    application: createApplicationPrototype(Router),
    request: createRequestPrototype(),
    response: createResponsePrototype(),
  };
}

/**
 * The `express` function made of `parts` (Express 5's by default), with its namespace.
 *
 * @example
 * const express = createExpress({ bodyParser, serveStatic });
 */
export function createExpress(libraries: EngineLibraries, parts: EngineParts = expressParts()): any {
  const { application: proto, request, response } = parts;

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
    announceChannels(parts.Layer.prototype.channels);
    return app;
  }

  const express: any = createApplication;
  express.application = proto;
  express.request = request;
  express.response = response;
  express.Route = parts.Route;
  express.Router = parts.Router;
  Object.defineProperty(express, EXPRESS_PARTS, { value: { ...parts, View } });
  // the body-parser and serve-static the Express of these parts depends on
  const parsers = libraries.bodyParser;
  express.json = parsers.json;
  express.raw = parsers.raw;
  express.static = libraries.serveStatic;
  express.text = parsers.text;
  express.urlencoded = parsers.urlencoded;
  return express;
}
