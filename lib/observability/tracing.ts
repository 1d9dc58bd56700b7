/**
 * OpenTelemetry request spans through `@opentelemetry/api` (an optional peer dependency, loaded when
 * `ServerConfig.opentelemetry` is on). keel creates spans and never exports them: the app's OTel SDK
 * (NodeSDK, a BasicTracerProvider with its exporter) does, through the global tracer provider, so
 * keel's spans join the app's traces. Without an SDK the API's no-op tracer makes them free.
 *
 * One SERVER span per request, named `<METHOD> <route pattern>` (OTel HTTP semantic conventions,
 * stable since v1.23: `http.request.method`, `http.route`, `http.response.status_code`, `url.path`,
 * `url.scheme`, `network.protocol.version`, `server.address`, `server.port`, `client.address`,
 * `user_agent.original`; status ERROR for 5xx only, since a 4xx is the client's error, not the server
 * span's). When instrumentation-http already started the request's SERVER span (NodeSDK with
 * getNodeAutoInstrumentations), keel names that span and starts none (lib/observability/spans.ts);
 * otherwise its parent is the span already active, else the caller's W3C `traceparent` as keel parses
 * it (middleware/http-trace), else none: a new trace. keel's own work (middleware, the handler) is
 * recorded as INTERNAL children (lib/observability/internal-spans.ts).
 */
import type { OpenTelemetryConfig } from '../records/observability.js';
import type { EventEmitter } from 'node:events';
import type { KeelRequest } from '../http/request.js';
import { parseTraceparent } from '../../middleware/http-trace/traceparent.js';
import { queryRedactor } from './redact.js';
import { parseTracestate } from '../../middleware/http-trace/tracestate.js';
import { attachRequestTrace, spanKit, type KitSpan, type RequestTrace, type SpanKit } from './spans.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- @opentelemetry/api is optional: its types stay out of keel's declarations */

/** Packages spans need (optional peer dependencies of keel). */
export const TRACING_PACKAGES: readonly string[] = ['@opentelemetry/api@1'];

/** The ids of keel's span for a request (`req.keelSpan`), so httpTrace logs and answers the same ids. */
export interface KeelSpanIds {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

/** A started request span; `end()` once the answer is complete. */
export interface RequestSpan {
  readonly trace: RequestTrace;
  /** Run `fn` with the span active (handlers' own spans become its children). */
  run(fn: () => void): void;
  /** The route is known (set as soon as the router matched, before instrumentation-http ends its span). */
  route(route: string): void;
  end(route: string | null, status: number, aborted: boolean): void;
}

/** `server.address` and `server.port` (HTTP semantic conventions): the Host header's, else the socket's local ones. */
function serverAddress(req: KeelRequest, attributes: Record<string, string | number>): void {
  const host = req.headers.host;
  let address: string | undefined;
  let port: number | undefined;
  if (typeof host === 'string' && host) {
    const close = host.startsWith('[') ? host.indexOf(']') : -1;
    const colon = host.indexOf(':', close + 1);
    address = close > 0 ? host.slice(1, close) : colon < 0 ? host : host.slice(0, colon);
    if (colon >= 0) port = Number(host.slice(colon + 1)) || undefined;
  } else address = req.socket?.localAddress;
  port ??= req.socket?.localPort;
  if (address) attributes['server.address'] = address;
  if (port) attributes['server.port'] = port;
}

/**
 * Starts one server span per request, or, when instrumentation-http already started one (the standard
 * setup), names that one by its route and adds nothing beside it.
 *
 * @example
 * const tracer = new RequestTracer({ enabled: true, tracer_name: 'keel' });
 * const span = tracer.start(req, res);
 * span.run(() => router(req, res));
 * res.on('close', () => span.end(req.routePattern ?? null, res.statusCode, !res.writableFinished));
 */
export class RequestTracer {
  readonly #kit: SpanKit;
  readonly #api: any;
  readonly #redact: (query: string) => string;
  readonly #untraced: ReadonlySet<string>;

  constructor(config: Readonly<OpenTelemetryConfig>) {
    this.#kit = spanKit(config.tracer_name);
    this.#api = this.#kit.api;
    this.#redact = queryRedactor(config.redacted_query_params ?? ['*']);
    this.#untraced = new Set(config.untraced_paths ?? []);
  }

  /** Whether keel starts no span for `path` (ServerConfig.opentelemetry `untraced_paths`: probes). */
  untraced(path: string): boolean {
    return this.#untraced.has(path);
  }

  /**
   * instrumentation-http records the URL with its query (`url.query`, `url.full`, and the older
   * `http.target`, `http.url`): a `?token=…` would reach every trace backend. keel, which enriches that
   * span, writes the redacted query over each of them (issue 47: the docs said redacted; it was not).
   */
  #redactHttpSpan(span: KitSpan, url: string): void {
    const q = url.indexOf('?');
    if (q < 0) return;
    const raw = url.slice(q + 1);
    const safe = this.#redact(raw);
    if (safe === raw) return;
    const attributes = (span as { attributes?: Record<string, unknown> }).attributes ?? {};
    span.setAttribute('url.query', safe);
    for (const key of ['url.full', 'http.target', 'http.url']) {
      const v = attributes[key];
      if (typeof v === 'string' && v.includes(raw)) span.setAttribute(key, v.replace(raw, safe));
    }
  }

  #parent(req: KeelRequest, active: unknown): unknown {
    const api = this.#api;
    if (api.trace.getSpan(active)) return active;
    const parent = parseTraceparent(req.headers.traceparent);
    if (!parent) return api.ROOT_CONTEXT;
    const state = req.headers.tracestate !== undefined ? parseTracestate(req.headers.tracestate) : undefined;
    return api.trace.setSpanContext(api.ROOT_CONTEXT, {
      traceId: parent.traceId,
      spanId: parent.parentId,
      // W3C flags → OTel TraceFlags: only "sampled" (bit 0) is defined for spans.
      traceFlags: parseInt(parent.flags, 16) & 1,
      isRemote: true,
      ...(state ? { traceState: api.createTraceState(state) } : {}),
    });
  }

  start(req: KeelRequest, res?: EventEmitter): RequestSpan {
    const api = this.#api;
    const kit = this.#kit;
    const method = req.method ?? 'GET';
    const active = api.context.active();
    const http = kit.httpServerSpan(active);
    let server: KitSpan;
    let ctx: unknown;
    if (http) {
      // The standard setup: instrumentation-http's SERVER span is the request's; keel names it.
      server = http.span;
      ctx = active;
      if (server.isRecording()) this.#redactHttpSpan(server, req.url ?? '/');
    } else {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const attributes: Record<string, string | number> = {
        'http.request.method': method,
        'url.path': q < 0 ? url : url.slice(0, q),
        'url.scheme': (req.socket as { encrypted?: boolean } | undefined)?.encrypted ? 'https' : 'http',
        'network.protocol.version': req.httpVersion ?? '1.1',
      };
      serverAddress(req, attributes);
      const client = req.socket?.remoteAddress;
      if (client) attributes['client.address'] = client;
      const ua = req.headers['user-agent'];
      if (typeof ua === 'string') attributes['user_agent.original'] = ua;
      const parent = this.#parent(req, active);
      server = kit.tracer.startSpan(method, { kind: api.SpanKind.SERVER, attributes }, parent);
      ctx = api.trace.setSpan(parent, server);
      // As instrumentation-http does: listeners of the request and the response (the body's 'data' and
      // 'end', which resume a handler reading it) run in the request's context, not the socket's.
      api.context.bind(ctx, req);
      if (res) api.context.bind(ctx, res);
    }
    const trace: RequestTrace = { kit, server, http, method, open: [], errored: false };
    attachRequestTrace(req, trace);
    const sc = server.spanContext();
    // With no SDK registered the API's span is a NonRecordingSpan: all-zero ids without a parent, the
    // caller's own span id with one. Neither is this request's span: the log line and the answer keep the
    // caller's trace (or a new one) instead (issue 47: `traceparent: 00-000…0-000…0-01`, span_id == parent_span_id).
    if (api.trace.isSpanContextValid(sc) && sc.spanId !== parseTraceparent(req.headers.traceparent)?.parentId) {
      (req as KeelRequest & { keelSpan?: KeelSpanIds }).keelSpan = { traceId: sc.traceId, spanId: sc.spanId, traceFlags: sc.traceFlags };
    }
    let named: string | null = null;
    const name = (route: string) => {
      if (route === named || !server.isRecording()) return;
      named = route;
      kit.setRoute(http ?? server, method, route);
    };
    return {
      trace,
      run: (fn) => api.context.with(ctx, fn),
      route: name,
      end: (route, status, aborted) => {
        for (const s of trace.open) if (s.isRecording()) s.end();
        if (route !== null) name(route);
        if (http) return; // instrumentation-http sets the status code and status, and ends its span
        server.setAttribute('http.response.status_code', status);
        if (status >= 500) {
          server.setAttribute('error.type', String(status));
          if (!trace.errored) server.setStatus({ code: api.SpanStatusCode.ERROR });
        } else if (aborted) {
          // The client left before the answer was complete (not the server's error).
          server.setAttribute('keel.aborted', true);
        }
        server.end();
      },
    };
  }
}

/** The ids of keel's OpenTelemetry span for `req`, when spans are on. */
export function keelSpanOf(req: KeelRequest): KeelSpanIds | undefined {
  return (req as KeelRequest & { keelSpan?: KeelSpanIds }).keelSpan;
}
