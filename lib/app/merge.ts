/**
 * Express routers and apps merged into a keel App (mergeRouter / attachRouter): on which Express
 * they run, and which requests they claim when the App is itself embedded in Express.
 *
 * A router keeps the semantics of the Express it was written for. Express 4 and 5 differ in ways a
 * route notices (`req.param()`, `res.send(201, body)`, `?a[b]=1` parsing, path syntax), and those
 * come from the prototypes and settings of the *app* that runs the router, not from the router.
 * So:
 * - a whole Express app runs as itself (its own `handle`, prototypes and settings);
 * - a bare Router runs in a host app made by the `express` given to mergeRouter, or else by the
 *   user's `express` (resolved from the working directory) or keel's own, if that is the router's
 *   major version. An Express 4 router with no Express 4 to host it is refused with an AppError at
 *   merge time rather than silently run under Express 5.
 * Express is loaded here only when a router is merged.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../http/errors.js';
import type { NextFunction } from '../http/request.js';

/** An Express Router or app, of either major version (structural: keel does not need Express's types for it). */
export type ExpressRouterLike = ((req: any, res: any, next: any) => void) & { stack?: unknown };

/** An Express factory (`import express from 'express'`), 4 or 5. */
export type ExpressFactoryLike = (() => any) & { Router?: unknown };

export interface MergeRouterOptions {
  /**
   * The Express that runs a bare Router: pass the `express` your router was written for (Express 4
   * or 5). Default: the `express` your project resolves, else keel's own, when its major version is
   * the router's. Not needed for a whole Express app, which runs as itself.
   */
  express?: ExpressFactoryLike;
}

/** A merged router, ready to run: `run(req, res, done)` calls `done()` when it did not answer. */
export interface MergedRouter {
  readonly major: 4 | 5;
  run(req: IncomingMessage, res: ServerResponse, done: NextFunction): void;
  /** Whether one of its routes matches `method path` (used when the App is embedded in Express). */
  claims(method: string, path: string): boolean;
}

type Layer = {
  /** Express 4: a boolean, and `path` set on the layer; Express 5 (router@2): `{ path, … }` or false. */
  match(path: string): boolean | { path?: string };
  path?: string;
  route?: { _handles_method?(m: string): boolean; _handlesMethod?(m: string): boolean };
  handle?: { stack?: unknown };
};
type AnyApp = ExpressRouterLike & { handle: (req: unknown, res: unknown, done: NextFunction) => void; set: unknown; listen: unknown; lazyrouter?: () => void; _router?: { stack?: Layer[] }; router?: { stack?: Layer[] }; disable?(name: string): void; use?(r: unknown): void };

function isApp(r: ExpressRouterLike): r is AnyApp {
  const a = r as Partial<AnyApp>;
  return typeof a.handle === 'function' && typeof a.set === 'function' && typeof a.listen === 'function';
}

/** 4 or 5 for an Express app or Router; undefined for anything else (a plain middleware function). */
export function expressMajor(r: ExpressRouterLike): 4 | 5 | undefined {
  if (isApp(r)) return typeof r.lazyrouter === 'function' ? 4 : 5;
  const x = r as { process_params?: unknown; stack?: unknown; handle?: unknown };
  if (!Array.isArray(x.stack)) return undefined;
  // Express 4's Router has process_params on its prototype; Express 5's (router@2) has none.
  return typeof x.process_params === 'function' ? 4 : 5;
}

function majorOfFactory(factory: ExpressFactoryLike): 4 | 5 {
  const app = factory() as AnyApp;
  return typeof app.lazyrouter === 'function' ? 4 : 5;
}

/** The user's Express (resolved from the working directory), else keel's own; undefined when neither is installed. */
function resolveExpress(): ExpressFactoryLike | undefined {
  for (const from of [join(process.cwd(), 'package.json'), import.meta.url]) {
    try {
      return createRequire(from)('express') as ExpressFactoryLike;
    } catch {
      // not resolvable from here: try the next place
    }
  }
  return undefined;
}

function stackOf(r: ExpressRouterLike): Layer[] {
  if (isApp(r)) {
    // Express 4 builds its router lazily; Express 5 exposes it as app.router.
    return (r._router?.stack ?? r.router?.stack ?? []) as Layer[];
  }
  return Array.isArray(r.stack) ? (r.stack as Layer[]) : [];
}

/** Whether a route in `stack` (or in a sub-router mounted with `use`) answers `method path`. */
function stackClaims(stack: readonly Layer[], method: string, path: string, depth: number): boolean {
  if (depth > 16) return false;
  for (const layer of stack) {
    let matched: boolean | { path?: string };
    try {
      matched = typeof layer.match === 'function' && layer.match(path);
    } catch {
      matched = false;
    }
    if (!matched) continue;
    const matchedPath = typeof matched === 'object' ? (matched.path ?? '') : (layer.path ?? '');
    const route = layer.route;
    if (route) {
      const handles = route._handlesMethod ?? route._handles_method;
      if (handles?.call(route, method)) return true;
      continue;
    }
    const sub = layer.handle?.stack;
    if (Array.isArray(sub)) {
      const rest = path.slice(matchedPath.length) || '/';
      if (stackClaims(sub as Layer[], method, rest.startsWith('/') ? rest : `/${rest}`, depth + 1)) return true;
    }
  }
  return false;
}

/** Run `fn` on req/res and give them back their own prototypes afterwards (a host app replaces them). */
function hosted(handle: (req: IncomingMessage, res: ServerResponse, done: NextFunction) => void): MergedRouter['run'] {
  return (req, res, done) => {
    const reqProto = Object.getPrototypeOf(req) as object;
    const resProto = Object.getPrototypeOf(res) as object;
    handle(req, res, (err?: unknown) => {
      Object.setPrototypeOf(req, reqProto);
      Object.setPrototypeOf(res, resProto);
      done(err);
    });
  };
}

/** Check a router passed to mergeRouter() and decide where it runs. Throws AppError('Route'). */
export function prepareMergedRouter(router: ExpressRouterLike, options: MergeRouterOptions = {}): MergedRouter {
  if (typeof router !== 'function') throw new AppError('Route', 'mergeRouter() expects an Express Router or app');
  if (typeof options !== 'object' || options === null) throw new AppError('Route', 'mergeRouter(router, options): options must be an object such as { express }');
  if (options.express !== undefined && typeof options.express !== 'function') {
    throw new AppError('Route', 'mergeRouter(router, { express }): express must be the Express factory (import express from "express")');
  }
  const major = expressMajor(router);
  if (major === undefined) {
    throw new AppError('Route', 'mergeRouter() expects an Express Router (express.Router()) or app (express()); for a plain (req, res, next) middleware use app.use()');
  }
  const claims = (method: string, path: string) => stackClaims(stackOf(router), method, path, 0);
  if (isApp(router)) {
    // A whole app runs as itself: its own prototypes, settings (query parser, …) and major version.
    return { major, claims, run: hosted((req, res, done) => router.handle(req, res, done)) };
  }
  const factory = options.express ?? resolveExpress();
  const hostMajor = factory ? majorOfFactory(factory) : undefined;
  if (hostMajor !== major) {
    const found = hostMajor === undefined ? 'no Express is installed' : `the Express that would run it is Express ${hostMajor}`;
    throw new AppError('Route', `mergeRouter(): this is an Express ${major} Router, but ${found}. Running it on another major version would silently change req.param(), res.send(status, body) and query parsing. Pass the Express it was written for: app.mergeRouter(router, { express }) with \`import express from 'express'\` of version ${major}.`);
  }
  const host = factory!() as AnyApp;
  host.disable?.('x-powered-by');
  host.use!(router);
  return { major, claims, run: hosted((req, res, done) => host.handle(req, res, done)) };
}
