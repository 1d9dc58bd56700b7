/**
 * The one place keel's stores, queues and event buses report what operators count (docs/operations.md,
 * "Metrics"). Each call is a no-op until an App turns metrics on (`ServerConfig.metrics`): the rate
 * limiter, the BullMQ executor and the pub/subs call these one-liners whether or not anyone counts,
 * so this module imports nothing and costs one branch per call while metrics are off.
 *
 * It also remembers, per owner (an executor, a pub/sub), the ioredis clients keel created and the
 * BullMQ queue and worker, so readiness can probe them and a scrape can read queue depths.
 */

/** What the rate limiter decided for one request. */
export type RateLimitDecision = 'allowed' | 'limited' | 'store_error_passed' | 'store_error_refused';
/** Which store failed. */
export type StoreName = 'rate_limit' | 'background' | 'pubsub';
/**
 * What happened to an event: `published` (Redis took it: every instance gets it), `local_only` (Redis
 * away and `passOnStoreError`: this instance's subscribers only), `refused` (Redis away and fail closed:
 * publish() rejected), `delivered` (handed to one local subscriber), `dropped` (a subscriber too far behind).
 */
export type EventOutcome = 'published' | 'local_only' | 'refused' | 'delivered' | 'dropped';

/** The `route` label of a request no route matched (a 404), or of one whose route is never known: one value, whatever the URL. */
export const UNMATCHED_ROUTE = '(unmatched)';

/** The `route` label of every value past the process's limit (MetricsConfig `max_route_labels`): one value, however many more. */
export const OTHER_ROUTE = '(other)';

/** A request as far as its route label looks at it: keel's pattern, or Express's matched route. */
export interface RoutedRequest {
  routePattern?: string;
  route?: { path?: unknown };
  baseUrl?: string;
  params?: unknown;
}

/**
 * `baseUrl` with each segment that is the value of a mount parameter written back as `:name`, where that
 * is certain: the parameter is in `req.params` (the router has `mergeParams`), not in the route's own
 * path, a string, and exactly one segment equals it. Anything else stays as it is (and the limit bounds it).
 */
function mountPattern(baseUrl: string, routePath: string, params: unknown): string {
  if (!baseUrl || typeof params !== 'object' || params === null) return baseUrl;
  const segments = baseUrl.split('/');
  const decoded = segments.map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  });
  for (const [name, value] of Object.entries(params)) {
    if (typeof value !== 'string' || !value || /^\d+$/.test(name) || routePath.includes(`:${name}`)) continue;
    const at = decoded.flatMap((s, i) => (s === value ? [i] : []));
    if (at.length === 1) segments[at[0]!] = `:${name}`;
  }
  return segments.join('/');
}

/**
 * The route pattern that answered (keel's, or an Express router's), never the raw URL; null while none
 * matched. The one definition of the `route` label (keel_http_requests_total, keel_rate_limit_decisions_total),
 * before routeLabelOf bounds it.
 */
export function routeOf(req: RoutedRequest): string | null {
  if (typeof req.routePattern === 'string') return req.routePattern;
  if (req.route && typeof req.route.path === 'string') return `${mountPattern(req.baseUrl ?? '', req.route.path, req.params)}${req.route.path}`;
  return null;
}

/** The longest `route` value not keel's own that is kept (a longer one is counted as `(other)`): 256 characters. */
export const MAX_ROUTE_LABEL_LENGTH = 256;

/** The process's limit on `route` values not keel's own, and who is told once it is reached. */
let labelLimit: { max: number; warn: (max: number, route: string) => void } | undefined;
const labels = new Set<string>();
let warned = false;

/**
 * Bound the `route` label values of this process to `max` (MetricsConfig `max_route_labels`; with several
 * Apps, the smallest applies, and its App's `warn` is called, once, when the limit is reached).
 */
export function limitRouteLabels(max: number, warn: (max: number, route: string) => void): void {
  if (!labelLimit || max < labelLimit.max) labelLimit = { max, warn };
}

/**
 * The `route` label of `req`: keel's route pattern always (bounded by the App's routes); `(unmatched)`
 * when none matched; an Express route (routeOf) while the process has seen fewer than its limit of
 * them, `(other)` past it.
 */
export function routeLabelOf(req: RoutedRequest): string {
  if (typeof req.routePattern === 'string') return req.routePattern;
  const route = routeOf(req);
  if (route === null) return UNMATCHED_ROUTE;
  // The count alone would still let 1000 values of 8 KB each (max_uri_length) sit in every metric's label maps.
  if (route.length > MAX_ROUTE_LABEL_LENGTH) return OTHER_ROUTE;
  if (labels.has(route) || !labelLimit) return route;
  if (labels.size < labelLimit.max) {
    labels.add(route);
    return route;
  }
  if (!warned) {
    warned = true;
    labelLimit.warn(labelLimit.max, route);
  }
  return OTHER_ROUTE;
}

/** The response of a rate-limited request, as far as the count looks at it. */
interface ClosingResponse {
  once?(event: 'close', listener: () => void): unknown;
}

/** Where the calls go once metrics are on (lib/observability/metrics.ts). */
export interface ObserverSink {
  rateLimit(decision: RateLimitDecision, route: string): void;
  storeError(store: StoreName, kind: 'timeout' | 'error'): void;
  event(outcome: EventOutcome, n: number): void;
  reconnect(client: string, n?: number): void;
  stalled(queue: string, n?: number): void;
  /** Requests refused with 503 because the server is overloaded or its work queue is full. */
  shed(reason: ShedReason): void;
  lost(queue: string, n: number): void;
  responseContract(route: string): void;
}

/** Why a request was shed (503 `KEEL_OVERLOADED`): the event loop is late, or expensive work's queue is full. */
export type ShedReason = 'overloaded' | 'max_queued';

/** An ioredis client, as far as keel looks at it (an EventEmitter with a status and options). */
export interface WatchedRedisClient {
  readonly status?: string;
  readonly options?: { maxRetriesPerRequest?: number | null };
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  ping?(): Promise<unknown>;
}

/** A BullMQ queue and worker, as far as keel looks at them. */
export interface WatchedQueue {
  readonly name: string;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
}
export interface WatchedWorker {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
}

let sink: ObserverSink | undefined;
/** Queues and Redis client roles seen, so their counters are present at 0 from start-up (an increase from 0 is one Prometheus sees). */
const knownQueues = new Set<string>();
const knownClients = new Set<string>();
const clients = new WeakMap<object, { role: string; client: WatchedRedisClient; probe?: () => Promise<unknown> }[]>();
const queues = new WeakMap<object, { queue: WatchedQueue; worker?: WatchedWorker }>();

/** Whether an error is a timeout (keel's bounds and ioredis' commandTimeout both say so in the message or name). */
function kindOf(err: unknown): 'timeout' | 'error' {
  const e = err as { name?: unknown; message?: unknown } | null;
  return /timeout|timed out|within \d+ ?ms/i.test(`${String(e?.name ?? '')} ${String(e?.message ?? '')}`) ? 'timeout' : 'error';
}

/**
 * The hooks. Each is safe to call from anywhere, at any rate: nothing happens until a sink is set.
 *
 * @example
 * import { observe } from '../observability/observe.js';
 * observe.storeError('pubsub', err); // counted as keel_store_errors_total{store="pubsub",kind="timeout"|"error"}
 */
export const observe = {
  /**
   * One rate-limit decision for `req`, labelled with its route (routeLabelOf). A limiter that runs before any
   * route matched (server-wide in front of merged Express routers, or `app.use()` in Express) counts when
   * the response closes, by the route that answered then, as keel_http_requests_total does; `(unmatched)`
   * when none did. Nothing is looked at while metrics are off.
   */
  rateLimit(decision: RateLimitDecision, request: object, res: ClosingResponse): void {
    if (!sink) return;
    const req = request as RoutedRequest;
    // (unmatched) is routeOf's null: no route yet, so look again once the response is done.
    const route = routeLabelOf(req);
    if (route !== UNMATCHED_ROUTE || typeof res.once !== 'function') return sink.rateLimit(decision, route);
    res.once('close', () => sink?.rateLimit(decision, routeLabelOf(req)));
  },
  /** A route's answer broke its response schema and was refused (lib/app/pipeline/contract.ts). */
  responseContract(route: string): void {
    sink?.responseContract(route);
  },
  /** A store command failed or timed out. */
  storeError(store: StoreName, err: unknown): void {
    sink?.storeError(store, kindOf(err));
  },
  /** Events published, delivered to local subscribers, dropped (a subscriber too far behind) or not published. */
  event(outcome: EventOutcome, n = 1): void {
    sink?.event(outcome, n);
  },
  /**
   * An ioredis client keel created for `owner` (role: 'background', 'pubsub', …): its reconnections are
   * counted, and readiness probes it (lib/observability/readiness.ts).
   */
  redisClient(owner: object, role: string, client: WatchedRedisClient): void {
    const list = clients.get(owner) ?? [];
    list.push({ role, client });
    clients.set(owner, list);
    client.on('reconnecting', () => sink?.reconnect(role));
    knownClients.add(role);
    sink?.reconnect(role, 0);
  },
  /**
   * How readiness asks whether `client` of `owner` can do its work (instead of a PING, which a Redis
   * Cluster client sends to any node: a hung primary of a shard keel does not use made it fail).
   */
  probe(owner: object, client: WatchedRedisClient, probe: () => Promise<unknown>): void {
    const entry = clients.get(owner)?.find((c) => c.client === client);
    if (entry) entry.probe = probe;
  },
  /** The BullMQ queue (and worker) of an executor: depths are read from it at scrape time, stalls counted. */
  queue(owner: object, queue: WatchedQueue, worker?: WatchedWorker): void {
    queues.set(owner, { queue, worker });
    worker?.on('stalled', () => sink?.stalled(queue.name));
    knownQueues.add(queue.name);
    sink?.stalled(queue.name, 0);
    sink?.lost(queue.name, 0);
  },
  /**
   * One request refused with 503 because the server is overloaded or its work queue is full (lib/server's
   * WorkRefusal calls this once, as it is made): keel_requests_shed_total.
   */
  shed(reason: ShedReason): void {
    sink?.shed(reason);
  },
  /** Redis came back empty: `n` jobs of `queue` it held (at the last sample) are gone. */
  jobsLost(queue: string, n: number): void {
    knownQueues.add(queue);
    sink?.lost(queue, n);
  },
};

/** The clients registered for `owner`. */
export function redisClientsOf(owner: object): readonly { role: string; client: WatchedRedisClient; probe?: () => Promise<unknown> }[] {
  return clients.get(owner) ?? [];
}

/** The queue registered for `owner`. */
export function queueOf(owner: object): { queue: WatchedQueue; worker?: WatchedWorker } | undefined {
  return queues.get(owner);
}

/** Turn counting on (the first App with metrics), or off again (tests). */
export function setObserverSink(next: ObserverSink | undefined): void {
  sink = next;
  for (const queue of knownQueues) {
    next?.stalled(queue, 0);
    next?.lost(queue, 0);
  }
  for (const role of knownClients) next?.reconnect(role, 0);
}
