/**
 * The span primitives keel's router (lib/observability/tracing.ts, lib/app/dispatch.ts) and keel/express
 * (express/tracing.ts) share, so both behave as instrumentation-express and @fastify/otel do under the
 * standard setup (NodeSDK with getNodeAutoInstrumentations, which registers instrumentation-http):
 *
 * - {@link SpanKit.httpServerSpan}: the SERVER span instrumentation-http started for the request, found
 *   as those packages find it, through the RPC metadata it puts in the active context
 *   (`getRPCMetadata(context.active())?.type === RPCType.HTTP`, @opentelemetry/core). When there is
 *   one, keel starts no SERVER span of its own: one SERVER span per request, never two.
 * - {@link SpanKit.setRoute}: `http.route` and the name `<METHOD> <route>` on that span, and the route
 *   in the RPC metadata, from which instrumentation-http names the span again when it ends it;
 *   {@link SpanKit.setRpcRoute}: the RPC metadata's route alone, as instrumentation-express hands it
 *   over while Express's layers still move it (keel/express).
 * - {@link SpanKit.startInternal}: an INTERNAL span (a middleware, a handler, a protocol operation),
 *   child of the active span, with the context to run the work in.
 * - {@link SpanKit.recordError}: a 5xx: an `exception` event and status ERROR with the error's message.
 * - {@link registeredSpanKit}: the kit only when an OTel SDK registered a context manager (one property
 *   read otherwise), for keel/express, which has no setting that turns its spans on.
 *
 * The RPC metadata key is @opentelemetry/core's own: `createContextKey(description)` is
 * `Symbol.for(description)` in @opentelemetry/api, so the same description is the same key in every
 * copy of core (a test checks it against core's `setRPCMetadata`). keel reads it through the API
 * alone and does not depend on @opentelemetry/core, which the app's SDK brings (keel's optional peer
 * is @opentelemetry/api only).
 *
 * Everything goes through @opentelemetry/api, loaded on the first `spanKit()` call (only when spans
 * are on): without an SDK its no-op tracer makes every span a shared non-recording object, so the
 * cost is a few property reads per span.
 *
 * @example
 * import { spanKit } from '../lib/observability/spans.js';
 * const kit = spanKit('keel');
 * const http = kit.httpServerSpan();           // instrumentation-http's SERVER span, if registered
 * if (http) kit.setRoute(http, 'GET', '/users/{id:int}');
 * const { span, context } = kit.startInternal('request handler - /users/{id:int}', { 'http.route': '/users/{id:int}' });
 * kit.run(context, () => handler(req, res));
 * res.once('close', () => span.end());
 */
import { lazyRequire } from '../http/lazy-require.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- @opentelemetry/api is optional: its types stay out of keel's declarations */
const loadApi = lazyRequire<any>('@opentelemetry/api');

/** @opentelemetry/core's RPC metadata key description (`RPC_METADATA_KEY`), and its `RPCType.HTTP`. */
export const RPC_METADATA_KEY_DESCRIPTION = 'OpenTelemetry SDK Context Key RPC_METADATA';
export const RPC_TYPE_HTTP = 'http';

/** A span as keel uses it: the subset of the API's `Span` (typed loosely: the API is optional). */
export interface KitSpan {
  spanContext(): { traceId: string; spanId: string; traceFlags: number };
  setAttribute(key: string, value: string | number | boolean): unknown;
  setAttributes(attributes: Record<string, string | number | boolean>): unknown;
  updateName(name: string): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: unknown): unknown;
  addEvent(name: string, attributes?: Record<string, unknown>): unknown;
  isRecording(): boolean;
  end(): void;
}

/** instrumentation-http's RPC metadata: `{ type: 'http', span, route? }` (mutable: route is set by frameworks). */
export interface HttpRpcMetadata {
  type: string;
  span: KitSpan;
  route?: string;
}

/** An opaque OpenTelemetry Context. */
export type KitContext = object;

/** The spans of one tracer (its name is the instrumentation scope of the spans). */
export interface SpanKit {
  /** @opentelemetry/api itself, for what the kit does not wrap (propagation, SpanKind). */
  readonly api: any;
  readonly tracer: any;
  /** The active context. */
  active(): KitContext;
  /** The span in `ctx` (default: the active context), or undefined when there is none. */
  spanOf(ctx?: KitContext): KitSpan | undefined;
  /** instrumentation-http's RPC metadata in `ctx` (default: the active context), or undefined without it. */
  httpServerSpan(ctx?: KitContext): HttpRpcMetadata | undefined;
  /** Name the request's SERVER span by its route: `http.route`, `<METHOD> <route>`, the RPC metadata's route. */
  setRoute(target: HttpRpcMetadata | KitSpan, method: string, route: string): void;
  /**
   * The route in instrumentation-http's RPC metadata only (undefined: none matched), from which it sets
   * `http.route` and names its span when the response finishes: what instrumentation-express does, since
   * a later Express layer may still change or drop the route (a span's attribute cannot be removed).
   */
  setRpcRoute(meta: HttpRpcMetadata, route: string | undefined): void;
  /** Start an INTERNAL span, child of `parent` (default: the active context); `context` has it active. */
  startInternal(name: string, attributes?: Record<string, string | number | boolean>, parent?: KitContext): { span: KitSpan; context: KitContext };
  /** Run `fn` with `ctx` active (async continuations keep it under the SDK's AsyncLocalStorage context manager). */
  run<T>(ctx: KitContext, fn: () => T): T;
  /**
   * A server error on `span`: an `exception` event (type, message, stacktrace) and status ERROR with a
   * message. The message stays when instrumentation-http later sets a bare ERROR for the 5xx. A value
   * that is not an Error is recorded as `fallbackMessage`, or, without one, as its string (as
   * instrumentation-express records a non-Error passed to `next`).
   */
  recordError(span: KitSpan, err: unknown, fallbackMessage?: string): void;
}

const kits = new Map<string, SpanKit>();

function setRpcRoute(meta: HttpRpcMetadata, route: string | undefined): void {
  meta.route = route;
}

/** The kit of tracer `name` (one per name per process; loads @opentelemetry/api on the first call). */
export function spanKit(name: string): SpanKit {
  let kit = kits.get(name);
  if (!kit) kits.set(name, (kit = makeKit(name)));
  return kit;
}

function makeKit(name: string): SpanKit {
  const api = loadApi();
  // A ProxyTracer: it follows a provider the app's SDK registers later (NodeSDK.start() after createApp).
  const tracer = api.trace.getTracer(name);
  const rpcKey = api.createContextKey(RPC_METADATA_KEY_DESCRIPTION);
  const INTERNAL = api.SpanKind.INTERNAL;
  const ERROR = api.SpanStatusCode.ERROR;
  return {
    api,
    tracer,
    active: () => api.context.active(),
    spanOf: (ctx) => api.trace.getSpan(ctx ?? api.context.active()),
    httpServerSpan(ctx) {
      const meta = (ctx ?? api.context.active()).getValue(rpcKey) as HttpRpcMetadata | undefined;
      return meta?.type === RPC_TYPE_HTTP && meta.span ? meta : undefined;
    },
    setRoute(target, method, route) {
      const meta = 'span' in target && 'type' in target ? (target as HttpRpcMetadata) : undefined;
      const span = meta ? meta.span : (target as KitSpan);
      if (meta) setRpcRoute(meta, route);
      span.setAttribute('http.route', route);
      span.updateName(`${method} ${route}`);
    },
    setRpcRoute,
    startInternal(spanName, attributes, parent) {
      const p = parent ?? api.context.active();
      const span = tracer.startSpan(spanName, { kind: INTERNAL, attributes }, p) as KitSpan;
      return { span, context: api.trace.setSpan(p, span) };
    },
    run: (ctx, fn) => api.context.with(ctx, fn),
    recordError(span, err, fallbackMessage) {
      if (!span.isRecording()) return;
      const message = err instanceof Error ? err.message : fallbackMessage ?? String(err);
      if (err instanceof Error) span.recordException(err);
      else if (fallbackMessage === undefined) span.recordException(message);
      else span.recordException({ name: 'Error', message });
      span.setStatus({ code: ERROR, message });
      keepErrorMessage(span, ERROR, message);
    },
  };
}

/**
 * Whether a value passed to a Connect / Express `next` is an error for the layer's span: not undefined or
 * null, nor `'route'` / `'router'`, which skip the rest of a route or router (instrumentation-express's rule).
 */
export function isNextError(err: unknown): boolean {
  return err !== undefined && err !== null && err !== 'route' && err !== 'router';
}

/** Where @opentelemetry/api 1.x keeps the globals an SDK registers (its `_globalThis[Symbol.for(...)]`). */
const OTEL_GLOBAL = Symbol.for('opentelemetry.js.api.1');
let registry: { context?: unknown } | undefined;
/** @opentelemetry/api could not be loaded although an SDK registered itself (another copy of the API). */
let apiMissing = false;

/**
 * The kit of tracer `name` when an OTel SDK registered a context manager, else undefined. Without one no
 * span is ever active, so there is nothing to name or parent spans to: this costs one property read of
 * the API's global registry (the SDK sets it; the API package alone does not) and loads nothing.
 */
export function registeredSpanKit(name: string): SpanKit | undefined {
  registry ??= (globalThis as { [OTEL_GLOBAL]?: { context?: unknown } })[OTEL_GLOBAL];
  if (registry === undefined || registry.context === undefined || apiMissing) return undefined;
  try {
    return spanKit(name);
  } catch {
    apiMissing = true;
    return undefined;
  }
}

const guarded = new WeakSet<object>();

/**
 * instrumentation-http sets `{ code: ERROR }` (no message) on its SERVER span for a 5xx when the
 * response closes, and the SDK's setStatus replaces the status, message included: this span's later
 * bare ERROR keeps `message`. Only spans keel recorded an error on (the 5xx path) are touched.
 */
function keepErrorMessage(span: KitSpan, ERROR: number, message: string): void {
  if (guarded.has(span)) return;
  guarded.add(span);
  const setStatus = span.setStatus;
  span.setStatus = function keepMessage(this: KitSpan, status) {
    return setStatus.call(this, status?.code === ERROR && status.message === undefined ? { code: ERROR, message } : status);
  };
}

/** What keel's spans keep for one request (`requestTraceOf(req)`): its SERVER span, whoever started it. */
export interface RequestTrace {
  readonly kit: SpanKit;
  /** The request's SERVER span: instrumentation-http's when it is registered, else keel's. */
  readonly server: KitSpan;
  /** instrumentation-http's RPC metadata, when the SERVER span is its. */
  readonly http: HttpRpcMetadata | undefined;
  readonly method: string;
  /** keel's INTERNAL spans of this request (middleware, handler), ended at the latest with the answer. */
  readonly open: KitSpan[];
  /** A 5xx was recorded on the SERVER span (its status already carries a message). */
  errored: boolean;
}

const TRACE = Symbol('keel.requestTrace');

/** Keep `trace` on `req` (keel's request tracer and keel/express's do it once per request). */
export function attachRequestTrace(req: object, trace: RequestTrace): void {
  (req as { [TRACE]?: RequestTrace })[TRACE] = trace;
}

/** The spans of `req` (an IncomingMessage), when spans are on. */
export function requestTraceOf(req: object | null | undefined): RequestTrace | undefined {
  return (req as { [TRACE]?: RequestTrace } | null | undefined)?.[TRACE];
}

/**
 * A 5xx answer for `req` because of `err` (keel's problem writer calls it; nothing happens without
 * spans): the exception and message on the request's SERVER span and on its innermost open INTERNAL
 * span (the handler, or the middleware that failed), as instrumentation-express records a layer's error.
 * The client's answer is unaffected (a 500 problem without internals): spans go to the operator.
 */
export function recordRequestError(req: object | null | undefined, err: unknown, message: string): void {
  const t = requestTraceOf(req);
  if (!t) return;
  t.errored = true;
  t.kit.recordError(t.server, err, message);
  for (let i = t.open.length - 1; i >= 0; i--) {
    const s = t.open[i]!;
    if (s.isRecording()) return t.kit.recordError(s, err, message);
  }
}
