/**
 * Building the router: one find-my-way radix tree for keel routes and mounts, compiled pipelines,
 * and the fallbacks (405, merged Express routers, 404).
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { promises as fsp } from 'node:fs';
import { resolve, sep } from 'node:path';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import type { AppCore as App, KeelRouter, Mount } from './plugin.js';
import { readRawBodyThen } from '../http/body.js';
import { jsonPoisoning } from '../http/json-parse.js';
import { AppError, HttpError } from '../http/errors.js';
import { fallbackFeatures, routeFeatures, mountFeatures, preflightFeatures, staticFeature } from './features.js';
import { runChain, withMiddleware } from './chain.js';
import { isThenable } from './handler.js';
import { compileCore, type RouteHandler } from './pipeline.js';
import { chargedBodyParse } from './body-cost.js';
import { workGateOf } from '../server/cost.js';
import { problemFor, sendProblem, toProblem } from '../http/problem.js';
import type { MergedRouter } from './merge.js';
import { sendSocketProblem } from '../http/socket-problem.js';
import type { KeelRequest, Middleware, NextFunction } from '../http/request.js';
import type { RouteDefinition } from './route-definition.js';
import { compilePattern } from './router.js';
import { traceHandler, traceMiddleware } from '../observability/internal-spans.js';

export type { KeelRouter };

interface Store {
  handler: RouteHandler;
  pattern: string;
  /** Longest request target this route serves (its max_uri_length, else the server's; Infinity = none). */
  maxUri: number;
}

export interface RouterParts {
  routes: readonly RouteDefinition[];
  mounts: readonly Mount[];
  uses: readonly Middleware[];
  routers: readonly MergedRouter[];
}

function mountHandler(app: App, mount: Mount): RouteHandler {
  const limit = app.config.max_body_size;
  const { handler } = mount;
  const fail = (res: ServerResponse, err: unknown) => {
    app.logger.error({ err, mount: mount.path }, 'mounted handler failed');
    sendProblem(res, err);
  };
  const call = (req: KeelRequest, res: ServerResponse) => {
    try {
      const r = handler(req, res);
      if (isThenable(r)) r.then(undefined, (e: unknown) => fail(res, e));
    } catch (e) {
      fail(res, e);
    }
  };
  if (!mount.options.readBody) return (req, res) => call(req, res);
  return (req, res) => {
    readRawBodyThen(req, limit, (err) => (err ? sendProblem(res, err) : call(req, res)));
  };
}



/** RFC 9110 §15.5.15: the request target is longer than the server (or the route) reads. */
function uriTooLong(length: number, limit: number): HttpError {
  return new HttpError(414, `Request target of ${length} characters exceeds the limit of ${limit} characters`, { extensions: { limit } });
}

export function buildRouter(app: App, parts: RouterParts): KeelRouter {
  const fmw = FindMyWay({ ignoreTrailingSlash: false, caseSensitive: true, maxParamLength: 2048 });
  const methods = new Set<string>();
  // ServerConfig.max_uri_length (null: Infinity, so the checks below never fire and cost one comparison).
  const serverUri = app.config.max_uri_length ?? Infinity;
  // Before routing, a target is refused only past every limit: a route may raise its own above the server's.
  let uriGate = serverUri;

  // `label` is the pattern as registered (`/users/{id}`), which logs and traces show as req.routePattern.
  const add = (method: string, pattern: string, handler: RouteHandler, label = pattern, maxUri = serverUri) => {
    methods.add(method);
    try {
      fmw.on(method as HTTPMethod, pattern, () => undefined, { handler, pattern: label, maxUri } satisfies Store);
    } catch (err) {
      throw new AppError('Route', `Cannot register ${method} ${pattern}: ${(err as Error).message}`, { cause: err });
    }
  };

  // Spans on (ServerConfig.opentelemetry): each middleware and each core gets its INTERNAL span; off: nothing.
  const traced = app.config.opentelemetry?.enabled === true && app.config.opentelemetry.internal_spans;
  const spanned = (chain: Middleware[], core: RouteHandler, label: string): [Middleware[], RouteHandler] =>
    traced ? [chain.map((mw) => traceMiddleware(mw, label)), traceHandler(core, label)] : [chain, core];

  const c = app.config;
  const multipartLimits = { parts: c.multipart_max_parts, files: c.multipart_max_files, fields: c.multipart_max_fields, fieldSize: c.multipart_max_field_size };
  const gate = parts.routes.length > 0 ? workGateOf(app) : undefined;
  const chargedParse = gate && chargedBodyParse(gate);
  for (const route of parts.routes) {
    const hooks = app.hooks.resolve(route.lifecycleHooks ?? undefined, `${route.methods.join('|')} ${route.path}`);
    const core = compileCore(route, {
      hooks,
      maxBodySize: route.maxBodySize === undefined ? app.config.max_body_size : route.maxBodySize,
      jsonPoisoning: jsonPoisoning(route.onProtoPoisoning ?? app.config.on_proto_poisoning, route.onConstructorPoisoning ?? app.config.on_constructor_poisoning),
      multipartLimits,
      chargedParse,
      logger: app.logger,
      responseValidation: app.config.response_validation,
      warnUndeclaredStatus: process.env.NODE_ENV !== 'production',
      background: app.extensions.get('background') as never,
    });
    const [chain, traceable] = spanned(route.handler.staticResponse?.() ? [] : routeFeatures(app, route, parts.uses), core, route.path);
    const handler = withMiddleware(chain, traceable);
    const maxUri = route.maxUriLength === undefined ? serverUri : (route.maxUriLength ?? Infinity);
    uriGate = Math.max(uriGate, maxUri);
    for (const m of route.methods) add(m, route.compiled.pattern, handler, route.path, maxUri);
    const preflight = preflightFeatures(app, route);
    if (preflight && !parts.routes.some((r) => r.methods.includes('OPTIONS') && r.compiled.pattern === route.compiled.pattern) && !fmw.hasRoute('OPTIONS', route.compiled.pattern)) {
      // Not a preflight after all (no Access-Control-Request-Method): OPTIONS is not served here.
      add('OPTIONS', route.compiled.pattern, withMiddleware(preflight, (req, res) => miss(req, res, req.url?.split('?', 1)[0] ?? '/')), route.path, maxUri);
    }
  }
  for (const mount of parts.mounts) {
    const { pattern } = compilePattern(mount.path);
    const handler = withMiddleware(...spanned(mountFeatures(app, mount, parts.uses), mountHandler(app, mount), mount.path));
    const list = mount.methods === '*' ? ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] : mount.methods;
    for (const m of list) if (!fmw.hasRoute(m as HTTPMethod, pattern)) add(m, pattern, handler, mount.path);
  }

  // Express routers merged with mergeRouter() (lib/app/merge.ts), each on its own Express: entered only
  // for what keel's own routes do not match, in the order they were merged.
  const merged = parts.routers;
  function runMerged(req: KeelRequest, res: ServerResponse, done: NextFunction): void {
    let i = 0;
    const step = (err?: unknown): void => {
      if (err !== undefined && err !== null && err !== 'route' && err !== 'router') return done(err);
      if (res.writableEnded) return;
      const m = merged[i++];
      if (!m) return done();
      m.run(req, res, step);
    };
    step();
  }

  /** RFC 9110 §15.5.6: 405 with Allow when the path exists under other methods; else 404. */
  function miss(req: KeelRequest, res: ServerResponse, path: string): void {
    const allow: string[] = [];
    for (const m of methods) if (m !== req.method && fmw.find(m as HTTPMethod, path)) allow.push(m);
    // A GET route answers HEAD too (see keelRouter), so Allow says so (RFC 9110 §10.2.1).
    if (allow.includes('GET') && !allow.includes('HEAD')) allow.push('HEAD');
    if (allow.length) sendProblem(res, problemFor('KEEL_METHOD_NOT_ALLOWED', `${req.method} is not allowed for ${path}`), { Allow: allow.join(', ') });
    else sendProblem(res, problemFor('KEEL_NOT_FOUND', `No route matches ${req.method} ${path}`));
  }

  // Unmatched requests run the server chain too (request id, tracing, security headers on the 404),
  // then static files and merged routers. With no server feature on, a miss costs nothing extra.
  const statics = staticFeature(app);
  const fallbackList = [...fallbackFeatures(app, parts.uses), ...(statics ? [statics] : [])];
  const fallback = fallbackList.length || merged.length ? fallbackList : undefined;
  const staticMounts = app.config.static_files.map((m) => ({ prefix: m.route_prefix.replace(/\/+$/, ''), root: resolve(m.directory) }));

  function runFallback(req: KeelRequest, res: ServerResponse, path: string, next?: NextFunction): void {
    const done = (err?: unknown) => {
      if (err) {
        // An error out of a merged Express router: answered as a problem, and a server error is
        // logged with what identifies the request; its internals stay here.
        if (toProblem(err).problem.status >= 500) {
          app.logger.error({ err, status: 500, method: req.method, url: req.url, request_id: req.requestId ?? null }, 'unhandled error in a merged Express router');
        }
        return sendProblem(res, err);
      }
      if (next) return next();
      if (!res.writableEnded) miss(req, res, path);
    };
    runChain(fallback!, req, res, merged.length ? () => runMerged(req, res, done) : () => done());
  }

  /** Under Express (`next` given): does a static file exist at `path`? Then keel answers it. */
  async function staticFileAt(path: string): Promise<boolean> {
    for (const m of staticMounts) {
      if (path !== m.prefix && !path.startsWith(`${m.prefix}/`)) continue;
      let rest: string;
      try {
        rest = decodeURIComponent(path.slice(m.prefix.length));
      } catch {
        continue;
      }
      // Only a file inside the directory counts: a path that escapes it (`..%2f`, a NUL) is no file
      // here, whatever exists outside, so the answer reveals nothing about the rest of the disk.
      const file = resolve(m.root, `.${rest.startsWith('/') ? '' : '/'}${rest}`);
      if (rest.includes('\0') || (file !== m.root && !file.startsWith(m.root + sep))) continue;
      if (await fsp.stat(file).then(() => true, () => false)) return true;
    }
    return false;
  }

  /**
   * A request no keel route or mount matched. Standalone, it runs the fallback chain (server
   * features, static files, merged routers) and ends in a 405/404 problem. Embedded in Express
   * (`next` given), keel's server features are only for what keel answers: the request goes on to
   * the rest of the Express app untouched unless a merged router has a route for it or a static
   * file exists at its path (docs/error-handling.md, "Embedding").
   */
  function notFound(req: KeelRequest, res: ServerResponse, path: string, next?: NextFunction): void {
    if (!next) {
      const length = req.url?.length ?? 0;
      if (length > serverUri) return sendProblem(res, uriTooLong(length, serverUri));
      if (fallback) return runFallback(req, res, path);
      return miss(req, res, path);
    }
    if (!fallback) return next();
    if (merged.some((m) => m.claims(req.method ?? 'GET', path))) return runFallback(req, res, path, next);
    if (staticMounts.length === 0) return next();
    staticFileAt(path).then((found) => (found ? runFallback(req, res, path, next) : next()), () => next());
  }

  const router = function keelRouter(req: KeelRequest, res: ServerResponse, next?: NextFunction): void {
    const url = req.url ?? '/';
    // One comparison before routing, the query or the body (HTTP/1.1 target or HTTP/2 `:path` alike).
    // Embedded in Express (`next`), a request keel does not answer goes on untouched: only routes check.
    if (url.length > uriGate && !next) return sendProblem(res, uriTooLong(url.length, uriGate));
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const search = q < 0 ? '' : url.slice(q + 1);
    let found = fmw.find(req.method as HTTPMethod, path);
    // RFC 9110 §9.3.2: HEAD is GET without content; node:http drops the body of a HEAD response.
    if (!found && req.method === 'HEAD') found = fmw.find('GET', path);
    if (found) {
      const store = found.store as Store;
      if (url.length > store.maxUri) return sendProblem(res, uriTooLong(url.length, store.maxUri));
      (req as KeelRequest & { routePattern?: string }).routePattern = store.pattern;
      store.handler(req, res, found.params, search);
      return;
    }
    notFound(req, res, path, next);
  } as KeelRouter;

  const upgrades = app.upgrades();
  router.handleUpgrade = function handleUpgrade(req, socket, head) {
    const url = req.url ?? '/';
    if (url.length > serverUri) return sendSocketProblem(socket, uriTooLong(url.length, serverUri));
    const path = url.split('?', 1)[0]!;
    const h = upgrades.get(path);
    if (!h) return sendSocketProblem(socket, new HttpError(404, `No WebSocket route for ${path}`));
    try {
      h(req, socket, head);
    } catch (err) {
      app.logger.error({ err, path }, 'upgrade handler failed');
      // toProblem: a 4xx HttpError keeps its status; anything else is a 500 without internals.
      sendSocketProblem(socket, err);
    }
  };
  return router;
}
