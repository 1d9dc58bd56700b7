/**
 * Records of the operations endpoints (docs/operations.md): readiness, Prometheus metrics and
 * OpenTelemetry spans. Each is `null` (off, nothing per request) unless given; `{}` turns it on with
 * the defaults below.
 */
import { defineRecord, fail, t, type InputOf } from './define.js';

/** Path of the readiness endpoint: '/ready'. */
export const DEFAULT_READINESS_PATH = '/ready';
/** How long one readiness answer is reused, ms (1000): a storm of probes costs Redis one PING per dependency per second. */
export const DEFAULT_READINESS_CACHE_MS = 1000;
/** Path of the Prometheus endpoint: '/metrics'. */
export const DEFAULT_METRICS_PATH = '/metrics';
/** Request-latency histogram buckets, seconds: 5 ms to 10 s (prom-client's defaults). */
export const DEFAULT_LATENCY_BUCKETS: readonly number[] = Object.freeze([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);
/**
 * Most distinct `route` label values per process (1000), beyond keel's own route patterns and `(unmatched)`:
 * well above any real App's routes; past it, new values are counted as `(other)` (a merged Express router
 * mounted on a parameterised path would otherwise put every parameter value in the label).
 */
export const DEFAULT_MAX_ROUTE_LABELS = 1000;
/** Name of keel's OpenTelemetry tracer: 'keel'. */
export const DEFAULT_TRACER_NAME = 'keel';

const path = () => t.string({ pattern: /^\/[^?#\s]*$/, hint: 'a path starting with "/" (no query)' });

export interface ReadinessConfig {
  enabled: boolean;
  path: string;
  cache_ms: number;
}
export const ReadinessConfig = defineRecord<ReadinessConfig>()('ReadinessConfig', {
  enabled: { type: t.boolean(), default: true, doc: 'Serve the readiness endpoint' },
  path: { type: path(), default: DEFAULT_READINESS_PATH, doc: 'Path answered 200 when every dependency is up, 503 problem+json listing the ones down' },
  cache_ms: { type: t.integer(0, 60_000), default: DEFAULT_READINESS_CACHE_MS, doc: 'How long one answer is reused, ms (probes within it cost nothing)' },
});

export interface MetricsConfig {
  enabled: boolean;
  path: string;
  default_metrics: boolean;
  latency_buckets: readonly number[];
  max_route_labels: number;
}
export const MetricsConfig = defineRecord<MetricsConfig>()('MetricsConfig', {
  enabled: { type: t.boolean(), default: true, doc: 'Serve Prometheus metrics (needs prom-client)' },
  path: { type: path(), default: DEFAULT_METRICS_PATH, doc: 'Path of the Prometheus text exposition' },
  default_metrics: { type: t.boolean(), default: true, doc: "prom-client's process metrics (CPU, memory, event-loop lag, GC)" },
  latency_buckets: { type: t.list(t.number(0), 1), default: () => [...DEFAULT_LATENCY_BUCKETS], doc: 'Request-latency histogram buckets, seconds, ascending' },
  max_route_labels: { type: t.integer(1, 1_000_000), default: DEFAULT_MAX_ROUTE_LABELS, doc: "Most distinct `route` label values per process besides keel's own route patterns (1000); past it, new ones are counted as `(other)`, with one warning" },
}, {
  check: (v, p) => {
    for (let i = 1; i < v.latency_buckets.length; i++) {
      if (!(v.latency_buckets[i]! > v.latency_buckets[i - 1]!)) fail('MetricsConfig', p, 'latency_buckets', v.latency_buckets, 'strictly ascending numbers of seconds', 'Write the bucket bounds in ascending order, e.g. [0.01, 0.1, 1].');
    }
  },
});

export interface OpenTelemetryConfig {
  enabled: boolean;
  tracer_name: string;
  internal_spans: boolean;
  redacted_query_params: string[];
  untraced_paths: string[];
}

/** Query parameters whose values no span carries: every one (`['*']`), since any may hold a token. */
export const DEFAULT_REDACTED_QUERY_PARAMS: readonly string[] = ['*'];
/** Paths answered without a span of keel's (with the readiness and metrics paths, never traced): `['/health']`. */
export const DEFAULT_UNTRACED_PATHS: readonly string[] = ['/health'];
export const OpenTelemetryConfig = defineRecord<OpenTelemetryConfig>()('OpenTelemetryConfig', {
  enabled: { type: t.boolean(), default: true, doc: "One SERVER span per request through @opentelemetry/api (instrumentation-http's, named by keel, when registered), job and event spans" },
  tracer_name: { type: t.string({ minLength: 1 }), default: DEFAULT_TRACER_NAME, doc: "Name of keel's tracer (the instrumentation scope of its spans)" },
  internal_spans: { type: t.boolean(), default: true, doc: 'INTERNAL spans for each middleware and the handler of a request (false: the SERVER span and protocol operations only)' },
  redacted_query_params: { type: t.list(t.string({ minLength: 1 })), default: () => [...DEFAULT_REDACTED_QUERY_PARAMS], doc: "Query parameters whose values are replaced by REDACTED in url.query, url.full, http.target and http.url of the request's SERVER span (instrumentation-http's, which keel enriches); '*' = every parameter" },
  untraced_paths: { type: t.list(path()), default: () => [...DEFAULT_UNTRACED_PATHS], doc: 'Paths keel starts no span for (probes); the readiness and metrics paths never have one. With instrumentation-http, pass untracedRequestHook(...) as its ignoreIncomingRequestHook' },
});

export type ReadinessConfigInput = InputOf<typeof ReadinessConfig>;
export type MetricsConfigInput = InputOf<typeof MetricsConfig>;
export type OpenTelemetryConfigInput = InputOf<typeof OpenTelemetryConfig>;
