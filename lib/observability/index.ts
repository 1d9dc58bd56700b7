/**
 * The operations endpoints of an App (docs/operations.md): readiness (`ServerConfig.readiness`),
 * Prometheus metrics (`ServerConfig.metrics`) and OpenTelemetry spans (`ServerConfig.opentelemetry`).
 *
 * They wrap the built router, so nothing is added to a request when all three are off (the router is
 * returned as it is). The probe and metrics paths are answered before any middleware: no rate limit
 * (a probe must not be refused, nor a scrape be a 503 because the rate-limit store is down, which is
 * when it matters most), no authentication (kubelet and Prometheus carry no credentials), and they
 * are not counted as requests. Keep them off the public internet (a NetworkPolicy, or a proxy that
 * does not route them): they say which dependencies are down.
 */
import http, { type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { AppError } from '../http/errors.js';
import { missingPackages, missingPackagesError } from '../ops/packages.js';
import type { KeelRequest, NextFunction } from '../http/request.js';
import type { KeelRouter } from '../app/plugin.js';
import type { ServerConfig } from '../records/server.js';
import { problemFor, sendProblem } from '../http/problem.js';
import { AppMetrics, METRICS_PACKAGES } from './metrics.js';
import { limitRouteLabels, OTHER_ROUTE, routeLabelOf, routeOf, type RoutedRequest } from './observe.js';
import { answerReadiness, dependencyChecks, Readiness, type ReadinessHost } from './readiness.js';
import { RequestTracer, TRACING_PACKAGES } from './tracing.js';

export { observe } from './observe.js';
export { Readiness, dependencyChecks, KEEL_READINESS_CHECKS, READINESS_PROBE_TIMEOUT_MS, READINESS_RETRY_AFTER_SECONDS, type DependencyCheck, type ReadinessReport, type DependencyStatus } from './readiness.js';
export { UNMATCHED_ROUTE, OTHER_ROUTE } from './metrics.js';
export { keelSpanOf, type KeelSpanIds } from './tracing.js';

/** What the operations endpoints read from an App. */
export interface ObservedApp extends ReadinessHost {
  readonly config: Readonly<ServerConfig>;
  readonly logger: Logger;
}

/**
 * Check, when the App starts (`app.ready()`), that the packages its settings need are installed:
 * an AppError naming `npm install prom-client` / `npm install @opentelemetry/api` otherwise.
 */
export function checkObservabilityPackages(config: Readonly<ServerConfig>): void {
  if (config.metrics?.enabled) {
    const missing = missingPackages(METRICS_PACKAGES);
    if (missing.length) throw missingPackagesError('ServerConfig.metrics', missing);
  }
  if (config.opentelemetry?.enabled) {
    const missing = missingPackages(TRACING_PACKAGES);
    if (missing.length) throw missingPackagesError('ServerConfig.opentelemetry', missing);
  }
}

type TracedRequest = KeelRequest & RoutedRequest;

/** A handler of one operations path (readiness or metrics). */
type Endpoint = (req: KeelRequest, res: ServerResponse) => void;

interface Endpoints {
  paths: Map<string, Endpoint>;
  metrics: AppMetrics | undefined;
  tracer: RequestTracer | undefined;
}

function endpoints(app: ObservedApp): Endpoints | undefined {
  const { readiness: r, metrics: m, opentelemetry: o } = app.config;
  if (!r?.enabled && !m?.enabled && !o?.enabled) return undefined;
  // Also here, not only in app.ready(): an App without protocols may build its router without ready().
  checkObservabilityPackages(app.config);
  const paths = new Map<string, Endpoint>();
  const readiness = r?.enabled || m?.enabled ? new Readiness(() => dependencyChecks(app), r?.cache_ms ?? 1000) : undefined;
  if (r?.enabled) paths.set(r.path, (req, res) => answerReadiness(readiness!, req, res));
  let metrics: AppMetrics | undefined;
  if (m?.enabled) {
    if (r?.enabled && r.path === m.path) throw new AppError('Server', `ServerConfig.metrics.path and ServerConfig.readiness.path are both ${JSON.stringify(m.path)}: give them different paths`);
    const own = (metrics = new AppMetrics(app, m, readiness));
    limitRouteLabels(m.max_route_labels, (max, route) => app.logger.warn({ max_route_labels: max, route: route.slice(0, 200) }, `metrics: ${max} distinct route label values reached; further ones are counted as route="${OTHER_ROUTE}"`));
    paths.set(m.path, (req, res) => answerMetrics(app, own, req, res));
  }
  return { paths, metrics, tracer: o?.enabled ? new RequestTracer(o) : undefined };
}

function answerMetrics(app: ObservedApp, metrics: AppMetrics, req: KeelRequest, res: ServerResponse): void {
  metrics.scrape().then(({ contentType, body }) => {
    res.statusCode = 200;
    res.setHeader('Content-Type', contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(req.method === 'HEAD' ? undefined : body);
  }, (err: unknown) => {
    app.logger.error({ err }, 'metrics scrape failed');
    sendProblem(res, problemFor('KEEL_INTERNAL'));
  });
}

const pathOf = (url: string | undefined): string => {
  const u = url ?? '/';
  const q = u.indexOf('?');
  return q < 0 ? u : u.slice(0, q);
};

/**
 * The App's router with its operations endpoints, request metrics and spans; the router itself when
 * all are off. Requests keel hands on to an embedding Express app (`next()`) are that app's: they
 * are not counted, and their span ends when keel hands them on.
 */
export function instrumentRouter(app: ObservedApp, router: KeelRouter): KeelRouter {
  const parts = endpoints(app);
  if (!parts) return router;
  const { paths, metrics, tracer } = parts;
  const observed = function keelObservedRouter(req: KeelRequest, res: ServerResponse, next?: NextFunction): void {
    const method = req.method ?? 'GET';
    if (paths.size && (method === 'GET' || method === 'HEAD')) {
      const endpoint = paths.get(pathOf(req.url));
      if (endpoint) return endpoint(req, res);
    }
    if (!metrics && !tracer) return router(req, res, next);
    const started = performance.now();
    const span = tracer && !tracer.untraced(pathOf(req.url)) ? tracer.start(req, res) : undefined;
    let handedOn = false;
    const onNext: NextFunction | undefined = next && ((err?: unknown) => {
      handedOn = true;
      span?.end(null, res.statusCode, false);
      next(err);
    });
    // Prepended: under instrumentation-http, keel's spans end (and the route is known) before its
    // own 'close' listener ends the SERVER span.
    res.prependListener('close', () => {
      if (handedOn) return;
      metrics?.request(method, routeLabelOf(req as TracedRequest), res.statusCode, (performance.now() - started) / 1000);
      span?.end(routeOf(req as TracedRequest), res.statusCode, !res.writableFinished);
    });
    if (!span) return router(req, res, onNext);
    span.run(() => router(req, res, onNext));
    // The router matched synchronously: the SERVER span is named now, before any handler's await.
    const route = (req as TracedRequest).routePattern;
    if (typeof route === 'string') span.route(route);
  } as KeelRouter;
  observed.handleUpgrade = router.handleUpgrade;
  return observed;
}

/**
 * A worker-only process (`app.runWorker()`) has no HTTP server: with readiness or metrics on, it
 * serves their paths alone on `host:port` (ServerConfig, overridable), so Kubernetes probes it and
 * Prometheus scrapes it like a web instance. `/health` answers 200 while the process runs. Resolves
 * to the listening server, or undefined when both are off.
 */
export async function listenWorkerProbes(app: ObservedApp, options: { host?: string; port?: number } = {}): Promise<Server | undefined> {
  if (!app.config.readiness?.enabled && !app.config.metrics?.enabled) return undefined;
  const parts = endpoints(app)!;
  const server = http.createServer((req, res) => {
    const path = pathOf(req.url);
    const endpoint = req.method === 'GET' || req.method === 'HEAD' ? parts.paths.get(path) : undefined;
    if (endpoint) return endpoint(req as KeelRequest, res);
    if (path === '/health' && (req.method === 'GET' || req.method === 'HEAD')) {
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Cache-Control', 'no-store');
      return res.end(req.method === 'HEAD' ? undefined : '{"status":"ok"}');
    }
    sendProblem(res, problemFor('KEEL_NOT_FOUND', `A worker serves only /health${[...parts.paths.keys()].map((p) => `, ${p}`).join('')}`));
  });
  const host = options.host ?? app.config.host;
  const port = options.port ?? app.config.port;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) => reject(new AppError('Server', `Cannot listen on ${host}:${port} for the worker's probes: ${err.message}`, { cause: err })));
    server.listen(port, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  app.logger.info({ url: `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`, paths: ['/health', ...parts.paths.keys()] }, 'worker probes listening');
  return server;
}
