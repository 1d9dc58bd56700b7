/**
 * OpenTelemetry request spans through `@opentelemetry/api` (an optional peer dependency, loaded when
 * `ServerConfig.opentelemetry` is on). keel creates spans and never exports them: the app's OTel SDK
 * (NodeSDK, a BasicTracerProvider with its exporter) does, through the global tracer provider, so
 * keel's spans join the app's traces. Without an SDK the API's no-op tracer makes them free.
 *
 * One SERVER span per request, named `<METHOD> <route pattern>` (OTel HTTP semantic conventions,
 * stable since v1.23: `http.request.method`, `http.route`, `http.response.status_code`, `url.path`,
 * `url.scheme`, `network.protocol.version`, `client.address`, `user_agent.original`; status ERROR
 * for 5xx only, since a 4xx is the client's error, not the server span's). Its parent is the span already
 * active (the app's own HTTP instrumentation), else the caller's W3C `traceparent` as keel parses it
 * (middleware/http-trace), else none: a new trace.
 */
import { lazyRequire } from '../lazy-require.js';
import type { OpenTelemetryConfig } from '../records/observability.js';
import type { KeelRequest } from '../request.js';
import { parseTraceparent } from '../../middleware/http-trace/traceparent.js';
import { parseTracestate } from '../../middleware/http-trace/tracestate.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- @opentelemetry/api is optional: its types stay out of keel's declarations */
const loadApi = lazyRequire<any>('@opentelemetry/api');

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
  /** Run `fn` with the span active (handlers' own spans become its children). */
  run(fn: () => void): void;
  end(route: string | null, status: number, aborted: boolean): void;
}

/**
 * Starts one server span per request.
 *
 * @example
 * const tracer = new RequestTracer({ enabled: true, tracer_name: 'keel' });
 * const span = tracer.start(req);
 * span.run(() => router(req, res));
 * res.on('close', () => span.end(req.routePattern ?? null, res.statusCode, !res.writableFinished));
 */
export class RequestTracer {
  readonly #api: any;
  readonly #tracer: any;

  constructor(config: Readonly<OpenTelemetryConfig>) {
    this.#api = loadApi();
    // A ProxyTracer: it follows a provider the app's SDK registers later (NodeSDK.start() after createApp).
    this.#tracer = this.#api.trace.getTracer(config.tracer_name);
  }

  #parent(req: KeelRequest): unknown {
    const api = this.#api;
    const active = api.context.active();
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

  start(req: KeelRequest): RequestSpan {
    const api = this.#api;
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const attributes: Record<string, string | number> = {
      'http.request.method': method,
      'url.path': q < 0 ? url : url.slice(0, q),
      'url.scheme': (req.socket as { encrypted?: boolean } | undefined)?.encrypted ? 'https' : 'http',
      'network.protocol.version': req.httpVersion ?? '1.1',
    };
    const client = req.socket?.remoteAddress;
    if (client) attributes['client.address'] = client;
    const ua = req.headers['user-agent'];
    if (typeof ua === 'string') attributes['user_agent.original'] = ua;
    const parent = this.#parent(req);
    const span = this.#tracer.startSpan(method, { kind: api.SpanKind.SERVER, attributes }, parent);
    const ctx = api.trace.setSpan(parent, span);
    const sc = span.spanContext();
    (req as KeelRequest & { keelSpan?: KeelSpanIds }).keelSpan = { traceId: sc.traceId, spanId: sc.spanId, traceFlags: sc.traceFlags };
    return {
      run: (fn) => api.context.with(ctx, fn),
      end: (route, status, aborted) => {
        if (route !== null) {
          span.updateName(`${method} ${route}`);
          span.setAttribute('http.route', route);
        }
        span.setAttribute('http.response.status_code', status);
        if (status >= 500) {
          span.setAttribute('error.type', String(status));
          span.setStatus({ code: api.SpanStatusCode.ERROR });
        } else if (aborted) {
          // The client left before the answer was complete (not the server's error).
          span.setAttribute('keel.aborted', true);
        }
        span.end();
      },
    };
  }
}

/** The ids of keel's OpenTelemetry span for `req`, when spans are on. */
export function keelSpanOf(req: KeelRequest): KeelSpanIds | undefined {
  return (req as KeelRequest & { keelSpan?: KeelSpanIds }).keelSpan;
}
