/**
 * OpenTelemetry spans of keel/express and keel/express4, emitted natively: the spans
 * @opentelemetry/instrumentation-express gives an Express app, with its names and attributes (one INTERNAL span per
 * middleware, router and route a request enters: `express.name`, `express.type` = middleware | router |
 * request_handler, `http.route`), and the matched route handed to the HTTP SERVER span of
 * @opentelemetry/instrumentation-http, which names that span `GET /api/users/:id` and sets its `http.route`.
 *
 * instrumentation-express patches the module named `express` when it is loaded; an app importing `keel/express`
 * (or resolving `express` to keel's file) is not patched, so keel emits the same spans itself through
 * `@opentelemetry/api` (an optional peer, loaded only once an OTel context manager is registered). When
 * instrumentation-express did patch keel (a shim package named `express` that re-exports keel), its wrapped layers
 * are left to it: a layer is spanned by one of the two, never both.
 *
 * The OpenTelemetry side is keel's App's own (lib/observability/spans.ts): finding instrumentation-http's SERVER
 * span, handing it the route, starting INTERNAL spans, recording an error. This file holds what is Express's:
 * which layers get a span, their names and attributes, and the route as Express's layers build it.
 *
 * Off costs nothing per request but one read of the OTel API's global registry (`registeredSpanKit`): without a
 * registered context manager there is no active span, so no span to parent Express spans to.
 *
 * Names, attributes and the route store follow instrumentation-express 0.71 (src/instrumentation.ts and
 * src/utils.ts, Copyright The OpenTelemetry Authors, Apache-2.0), so dashboards built on it keep working.
 */
import { isNextError, registeredSpanKit, type HttpRpcMetadata, type SpanKit } from '../lib/observability/spans.js';
import type { AnyFn } from './utils.js';
import type { Layer } from './router/layer.js';
import { runLayer } from './router/channels.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- Express's req and res are untyped in the engine */

/** The instrumentation scope of keel's Express spans. */
export const EXPRESS_TRACER_NAME = 'keel/express';

const kTrace = Symbol('keel.expressTrace');

/** One traced request: its spans, the SERVER span's RPC metadata and the paths of the layers it is in (outermost first). */
export interface ExpressTrace {
  readonly kit: SpanKit;
  /** instrumentation-http's RPC metadata, when the SERVER span is its (the route goes there). */
  readonly http: HttpRpcMetadata | undefined;
  readonly paths: string[];
}

/**
 * The request's trace when it runs under an active span (instrumentation-http's SERVER span, or the app's own),
 * else undefined. Cheap when OTel is not set up: one read of the API's global registry.
 */
export function traceOf(req: any): ExpressTrace | undefined {
  const kit = registeredSpanKit(EXPRESS_TRACER_NAME);
  if (kit === undefined) return undefined;
  const existing = req[kTrace] as ExpressTrace | undefined;
  if (existing !== undefined) return existing;
  const active = kit.active();
  if (kit.spanOf(active) === undefined) return undefined;
  const trace: ExpressTrace = { kit, http: kit.httpServerSpan(active), paths: [] };
  Object.defineProperty(req, kTrace, { configurable: true, value: trace });
  return trace;
}

/** The path argument of use()/route() as instrumentation-express records it (`getLayerPath`). */
function pathOf(arg: unknown): string | undefined {
  if (Array.isArray(arg)) return arg.map((a) => segmentOf(a) || '').join(',');
  return segmentOf(arg);
}

function segmentOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  if (arg instanceof RegExp || typeof arg === 'number') return arg.toString();
  return undefined;
}

/** The route so far: the layers' paths without '/' and wildcards, joined (`getConstructedRoute`). */
function constructedRoute(paths: string[]): string {
  const meaningful = paths.filter((p) => p !== '/' && p !== '/*' && !/^\/\{[*][^}]*\}$/.test(p));
  if (meaningful.length === 1 && meaningful[0] === '*') return '*';
  return meaningful.join('').replace(/\/{2,}/g, '/');
}

/** The `http.route` of the request so far, or undefined when none matched (`getActualMatchedRoute`). */
function matchedRoute(req: any, paths: string[]): string | undefined {
  if (paths.length === 0) return undefined;
  if (paths.every((p) => p === '/')) return req.originalUrl === '/' ? '/' : undefined;
  const route = constructedRoute(paths);
  if (route === '*') return route;
  if (route.includes('/') && (route.includes(',') || route.includes('\\') || route.includes('*') || route.includes('['))) {
    return route;
  }
  const normalized = route.startsWith('/') ? route : `/${route}`;
  const original = String(req.originalUrl);
  const valid = normalized.length > 0
    && (original === normalized || original.startsWith(normalized) || normalized.includes(':') || normalized.includes('*'));
  return valid ? normalized : undefined;
}

/** A mounted router's name: the path of its first route (`getRouterPath`). */
function routerPath(path: string, layer: any): string {
  const first = layer.handle?.stack?.[0];
  if (first?.route?.path) return `${path}${first.route.path}`;
  if (first?.handle?.stack) return routerPath(path, first);
  return path;
}

interface LayerMetadata {
  name: string;
  type: 'router' | 'request_handler' | 'middleware';
  expressName: string;
}

/** The span name and the layer's kind (`getLayerMetadata`): routers, route layers, middleware. */
function metadataOf(route: string, layer: Layer, layerPath: string | undefined): LayerMetadata {
  if (layer.name === 'router') {
    const path = routerPath('', layer) || layerPath || route || '/';
    return { name: `router - ${path}`, type: 'router', expressName: path };
  }
  if (layer.name === 'bound dispatch' || layer.name === 'handle') {
    return {
      name: `request handler${layer.path ? ` - ${route || layerPath}` : ''}`,
      type: 'request_handler',
      expressName: (route || layerPath) ?? 'request handler',
    };
  }
  return { name: `middleware - ${layer.name}`, type: 'middleware', expressName: layer.name };
}

/**
 * Runs a router layer's request handler inside its span: the span ends when the layer calls next (recording an
 * error passed to it) or when the response closes; a router's span ends at once, as instrumentation-express's.
 */
export function traceLayer(trace: ExpressTrace, layer: Layer, req: any, res: any, next: AnyFn): void {
  const handle = layer.handle as AnyFn & { __wrapped?: boolean };
  // an error handler gets no span; a layer an instrumentation already wrapped (shimmer's mark) is its to span
  if (handle.length > 3 || handle.__wrapped === true) { runLayer(layer, req, res, next); return; }
  const kit = trace.kit;
  const layerPath = pathOf(layer.pathArgument);
  const stored = layerPath !== undefined;
  if (stored) trace.paths.push(layerPath);
  const route = constructedRoute(trace.paths);
  const httpRoute = matchedRoute(req, trace.paths);
  const meta = metadataOf(route, layer, layerPath);
  if (trace.http !== undefined) kit.setRpcRoute(trace.http, httpRoute);
  const parentContext = kit.active();
  if (kit.spanOf(parentContext) === undefined) { runLayer(layer, req, res, next); return; }

  const attributes: Record<string, string> = { 'express.name': meta.expressName, 'express.type': meta.type };
  if (httpRoute !== undefined) attributes['http.route'] = httpRoute;
  const started = kit.startInternal(meta.name, attributes, parentContext);
  const span = started.span;
  let context = started.context;
  let ended = false;
  if (meta.type === 'router') {
    span.end();
    ended = true;
    context = parentContext;
  }
  const onClose = (): void => {
    if (!ended) {
      ended = true;
      span.end();
    }
  };
  const traced = function tracedNext(err?: unknown): void {
    const isError = isNextError(err);
    if (!ended) {
      if (isError) kit.recordError(span, err);
      ended = true;
      res.removeListener('close', onClose);
      span.end();
    }
    if (!(req.route && isError) && stored) trace.paths.pop();
    // the next layer runs in the context active now (baggage a middleware set), with the parent span restored
    const active = kit.active();
    const parentSpan = kit.spanOf(parentContext);
    kit.run(parentSpan ? kit.api.trace.setSpan(active, parentSpan) : active, () => next(err));
  };
  try {
    kit.run(context, () => runLayer(layer, req, res, traced));
  } finally {
    if (!ended) res.once('close', onClose);
  }
}
