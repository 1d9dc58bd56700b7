/**
 * Prometheus metrics on prom-client (an optional peer dependency, loaded the first time an App turns
 * metrics on; docs/operations.md has the table of names and labels).
 *
 * Two registries: one per App for what is the App's own (its requests by route pattern and status,
 * its background executor), read at scrape time; one per process for what keel's stores, queues and
 * event buses report through lib/observability/observe.ts (they do not know which App they serve)
 * and prom-client's process metrics (event-loop lag keel's own: lib/observability/event-loop-lag.ts).
 * A scrape answers both.
 */
import { lazyRequire } from '../http/lazy-require.js';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from '../ops/redis-policy.js';
import type { MetricsConfig } from '../records/observability.js';
import { queueOf, setObserverSink, observe, OTHER_ROUTE, UNMATCHED_ROUTE } from './observe.js';
import { clusterScrape, joinClusterMetrics } from './cluster.js';
import { EVENT_LOOP_LAG_METRICS, registerEventLoopLag } from './event-loop-lag.js';
import type { Readiness } from './readiness.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- prom-client is optional: its types stay out of keel's declarations */
type Prom = any;
const loadProm = lazyRequire<Prom>('prom-client');

/** Packages metrics need (optional peer dependencies of keel). */
export const METRICS_PACKAGES: readonly string[] = ['prom-client@15'];

export { OTHER_ROUTE, UNMATCHED_ROUTE };

/** States of `keel_background_jobs` read from BullMQ at scrape time. */
const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'paused', 'failed', 'completed'] as const;

/** prom-client's own (unread) event-loop histogram's timer period, ms: 2^31 - 1 (24.8 days, the longest a JavaScript timer takes), so it all but never fires. */
const IDLE_TIMER_MS = 2 ** 31 - 1;

interface ProcessMetrics {
  registry: any;
  defaults: boolean;
}
let processMetrics: ProcessMetrics | undefined;

/** The process-wide registry, its counters fed by observe.ts; created once. */
function processRegistry(prom: Prom, defaults: boolean): ProcessMetrics {
  if (!processMetrics) {
    const registry = new prom.Registry();
    const counter = (name: string, help: string, labelNames: string[]) => new prom.Counter({ name, help, labelNames, registers: [registry] });
    const rateLimit = counter('keel_rate_limit_decisions_total', 'Rate-limit decisions by route pattern: allowed, limited (429), store_error_passed (fail open), store_error_refused (503)', ['route', 'decision']);
    const storeErrors = counter('keel_store_errors_total', 'Failed store commands, by store (rate_limit, background, pubsub) and kind (timeout, error)', ['store', 'kind']);
    const events = counter('keel_events_total', 'Events: published (to every instance), local_only (Redis away: this instance only), refused (Redis away, fail closed), delivered (to a local subscriber), dropped (a subscriber too far behind)', ['outcome']);
    const reconnects = counter('keel_redis_reconnects_total', 'Reconnection attempts of the Redis clients keel created, by client', ['client']);
    const stalled = counter('keel_background_jobs_stalled_total', 'BullMQ jobs found stalled (their worker died or blocked the event loop) and moved back', ['queue']);
    const contract = counter('keel_response_contract_violations_total', 'Answers refused (500) because they broke their route\'s response schema (response_validation: strict), by route pattern', ['route']);
    const shed = counter('keel_requests_shed_total', 'Requests refused with 503 to shed load, by reason: overloaded (the event loop is late), max_queued (expensive work\'s queue is full)', ['reason']);
    const lost = counter('keel_background_jobs_lost_total', 'Jobs lost because Redis came back empty (restarted without its data), by queue: the depth sampled before the outage', ['queue']);
    // Always 1: the alert rules find keel's scrape targets by it, also once they stopped answering (`up == 0`).
    new prom.Gauge({ name: 'keel_info', help: 'Always 1: this process exposes keel\'s metrics', registers: [registry], aggregator: 'max' }).set(1);
    // Present at 0 from start-up: Prometheus sees no increase in a counter whose first sample is already 4.
    for (const outcome of ['published', 'local_only', 'refused', 'delivered', 'dropped']) events.inc({ outcome }, 0);
    for (const reason of ['overloaded', 'max_queued']) shed.inc({ reason }, 0);
    setObserverSink({
      rateLimit: (decision, route) => rateLimit.inc({ route, decision }),
      storeError: (store, kind) => storeErrors.inc({ store, kind }),
      event: (outcome, n) => events.inc({ outcome }, n),
      reconnect: (client, n = 1) => reconnects.inc({ client }, n),
      stalled: (queue, n = 1) => stalled.inc({ queue }, n),
      responseContract: (route) => contract.inc({ route }),
      shed: (reason) => shed.inc({ reason }),
      lost: (queue, n) => lost.inc({ queue }, n),
    });
    processMetrics = { registry, defaults: false };
  }
  if (defaults && !processMetrics.defaults) {
    const { registry } = processMetrics;
    // Event-loop lag is keel's own, under prom-client's names: prom-client's lost a stall that began just after a
    // scrape (event-loop-lag.ts says why). collectDefaultMetrics has no option to leave its histogram out, so its
    // metrics are removed and its timer, which nothing reads any more, slowed from 100 firings a second to none.
    prom.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: IDLE_TIMER_MS });
    for (const name of EVENT_LOOP_LAG_METRICS) registry.removeSingleMetric(name);
    registerEventLoopLag(prom, registry);
    processMetrics.defaults = true;
  }
  return processMetrics;
}

/** What the metrics read from an App. */
export interface MetricsHost {
  readonly extensions: Map<string, unknown>;
}

type Child = { inc(): void; observe(v: number): void };

/**
 * One App's metrics: `request()` per answered request, `scrape()` for the endpoint.
 *
 * @example
 * const metrics = new AppMetrics(app, app.config.metrics!, readiness);
 * metrics.request('GET', '/users/{id}', 200, 0.004);
 * const { contentType, body } = await metrics.scrape();
 */
export class AppMetrics {
  readonly #host: MetricsHost;
  readonly #registry: any;
  readonly #process: ProcessMetrics;
  readonly #requests: any;
  readonly #duration: any;
  readonly #jobs: any;
  readonly #finished: any;
  readonly #up: any;
  readonly #readiness: Readiness | undefined;
  /** Label children by `method status route`: two Map look-ups per request instead of prom-client's label hashing. */
  readonly #children = new Map<string, [Child, Child]>();

  constructor(host: MetricsHost, config: Readonly<MetricsConfig>, readiness?: Readiness) {
    const prom = loadProm();
    this.#host = host;
    this.#readiness = readiness;
    this.#process = processRegistry(prom, config.default_metrics);
    const registry = (this.#registry = new prom.Registry());
    const labelNames = ['method', 'route', 'status'];
    this.#requests = new prom.Counter({ name: 'keel_http_requests_total', help: 'HTTP requests answered, by method, route pattern and status', labelNames, registers: [registry] });
    this.#duration = new prom.Histogram({
      name: 'keel_http_request_duration_seconds', help: 'Time from the request reaching keel to the end of its answer, seconds, by method, route pattern and status',
      labelNames, buckets: [...config.latency_buckets], registers: [registry],
    });
    // Read when a registry is collected (a scrape here, or the primary gathering a cluster's workers).
    const shared = this.#sharedQueue() !== undefined;
    this.#jobs = new prom.Gauge({
      name: 'keel_background_jobs', help: 'Background jobs by state (waiting, active, delayed, failed, …), read from the queue at scrape time', labelNames: ['queue', 'state'], registers: [registry],
      // Cluster workers sharing one BullMQ queue each read the same depths: the maximum, not the sum.
      aggregator: shared ? 'max' : 'sum',
      collect: () => this.#readJobs(),
    });
    // A counter (rate() applies) whose value is the executor's own tally, copied at scrape time.
    this.#finished = new prom.Counter({
      name: 'keel_background_jobs_processed_total', help: 'Jobs this process finished or refused since it started, by outcome (succeeded, failed, rejected, abandoned)', labelNames: ['outcome'], registers: [registry],
      collect: () => this.#readProcessed(),
    });
    this.#up = new prom.Gauge({
      name: 'keel_dependency_up', help: 'Whether a dependency answered its readiness probe (1) or not (0)', labelNames: ['dependency'], registers: [registry],
      aggregator: 'min',
      collect: () => this.#readDependencies(),
    });
    joinClusterMetrics([registry, this.#process.registry]);
  }

  #executor(): { stats?(): Record<string, unknown> } | undefined {
    const executor = this.#host.extensions.get('background') as { stats?(): Record<string, unknown> } | undefined;
    return executor && typeof executor.stats === 'function' ? executor : undefined;
  }

  #sharedQueue() {
    const executor = this.#executor();
    return executor ? queueOf(executor) : undefined;
  }

  /** Count one answered request. `route` is a pattern (bounded cardinality), never the raw URL. */
  request(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let pair = this.#children.get(key);
    if (!pair) {
      const labels = { method, route, status: String(status) };
      pair = [this.#requests.labels(labels), this.#duration.labels(labels)];
      this.#children.set(key, pair);
    }
    pair[0].inc();
    pair[1].observe(seconds);
  }

  /**
   * The exposition text (Prometheus text format 0.0.4) of this App and of the process; in a cluster
   * worker (`workers > 1`), of every worker, gathered by the primary.
   */
  async scrape(): Promise<{ contentType: string; body: string }> {
    const whole = await clusterScrape();
    if (whole !== undefined) return { contentType: this.#registry.contentType, body: whole };
    // In turn: reading the queue may count a store error, which the process registry then shows.
    const own: string = await this.#registry.metrics();
    const shared: string = await this.#process.registry.metrics();
    return { contentType: this.#registry.contentType, body: `${own}${shared}` };
  }

  #readProcessed(): void {
    this.#finished.reset();
    const stats = this.#executor()?.stats!() as { succeeded: number; failed: number; rejected: number; abandoned: number } | undefined;
    if (stats) for (const outcome of ['succeeded', 'failed', 'rejected', 'abandoned'] as const) this.#finished.inc({ outcome }, stats[outcome]);
  }

  async #readJobs(): Promise<void> {
    this.#jobs.reset();
    const executor = this.#executor();
    if (!executor) return;
    const stats = executor.stats!() as { queued: number; running: number };
    const shared = queueOf(executor);
    if (!shared) {
      // The in-process executor: its own queue.
      this.#jobs.set({ queue: 'memory', state: 'waiting' }, stats.queued);
      this.#jobs.set({ queue: 'memory', state: 'active' }, stats.running);
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      const counts = await Promise.race([
        shared.queue.getJobCounts(...QUEUE_STATES),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`queue counts: no answer within ${DEFAULT_REDIS_COMMAND_TIMEOUT_MS} ms`)), DEFAULT_REDIS_COMMAND_TIMEOUT_MS);
        }),
      ]);
      for (const state of QUEUE_STATES) this.#jobs.set({ queue: shared.queue.name, state }, counts[state] ?? 0);
    } catch (err) {
      // Redis down or hung: no depth this scrape (absent, not a stale number); keel_dependency_up says why.
      observe.storeError('background', err);
    } finally {
      clearTimeout(timer);
    }
  }

  async #readDependencies(): Promise<void> {
    this.#up.reset();
    if (!this.#readiness) return;
    const report = await this.#readiness.report();
    for (const [dependency, c] of Object.entries(report.checks)) this.#up.set({ dependency }, c.status === 'up' ? 1 : 0);
  }
}
