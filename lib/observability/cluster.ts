/**
 * Metrics under `workers > 1` (node:cluster): a scrape reaches one worker through the shared port, but
 * must count every worker. The worker that is scraped asks the primary, which gathers every worker's
 * registries (as JSON, over the cluster's IPC channel) and answers with one aggregate.
 *
 * What the aggregate keeps that prom-client's own AggregatorRegistry did not (issue 47):
 * - counters never go backwards. The primary keeps each worker's last counts; when a worker exits, its
 *   counters and histograms are folded into a "retired" tally that stays in every later sum. Before,
 *   the sum fell when a worker died (1924 → 1093 in the operator's run), Prometheus read a reset and
 *   `increase()` counted 4,558 requests for 3,500 sent. A worker that does not answer in time is
 *   counted at its last counts, not left out.
 * - event-loop lag is the worst worker's (`max`), not the mean: one worker blocked 900 ms at a time
 *   beside an idle one read 0.46 s.
 * - `keel_cluster_worker_restarts_total` counts the workers the primary replaced, 0 from start-up.
 * Counts a worker made after its last gather and before it died are lost (at most one scrape's worth):
 * an undercount, never a reset. If the primary does not answer within CLUSTER_SCRAPE_TIMEOUT_MS the
 * worker answers its own.
 */
import cluster, { type Worker } from 'node:cluster';
import { lazyRequire } from '../http/lazy-require.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- prom-client is optional */
const loadProm = lazyRequire<any>('prom-client');

/** How long a scraped worker waits for the primary's aggregate, ms (6000: the gather's own bound, plus slack). */
export const CLUSTER_SCRAPE_TIMEOUT_MS = 6000;

/** How long the primary waits for each worker's registries, ms (5000, prom-client's own bound). */
export const CLUSTER_GATHER_TIMEOUT_MS = 5000;

const REQ = 'keel:metrics-req';
const RES = 'keel:metrics-res';
const COLLECT = 'keel:metrics-collect';
const COLLECTED = 'keel:metrics-collected';

interface ScrapeResponse { type: typeof RES; id: number; text?: string; error?: string }
interface Collected { type: typeof COLLECTED; id: number; metrics?: MetricJson[] }
/** prom-client's `getMetricsAsJSON()` entry. */
interface MetricJson { name: string; help: string; type: string; aggregator: string; values: { value: number; labels: Record<string, unknown>; metricName?: string }[] }

/** Gauges whose cluster value is the worst worker's, whatever prom-client declares (it averages them). */
const WORST_WORKER = /^nodejs_eventloop_lag_(?!min_)/;

/** Counters and histograms: what a dead worker leaves in the sum. */
const monotonic = (m: MetricJson) => m.type === 'counter' || m.type === 'histogram';

/** One gather in the primary: every live worker's metrics, or its last ones when it does not answer in time. */
export class ClusterMetrics {
  readonly #last = new Map<number, MetricJson[]>();
  #retired: MetricJson[] = [];
  #restarts = 0;
  #nextId = 0;
  readonly #waiting = new Map<number, (metrics: MetricJson[] | undefined) => void>();

  constructor() {
    cluster.on('message', (worker, message: Collected | null) => {
      if (message?.type !== COLLECTED) return;
      const done = this.#waiting.get(message.id);
      this.#waiting.delete(message.id);
      if (message.metrics) this.#last.set(worker.id, message.metrics);
      done?.(message.metrics);
    });
  }

  /** A worker exited: its counters stay in the sum from now on (its gauges go with it). */
  retire(worker: Worker): void {
    const last = this.#last.get(worker.id);
    this.#last.delete(worker.id);
    if (!last) return;
    const counters = last.filter(monotonic);
    this.#retired = aggregatedJson(this.#retired.length ? [this.#retired, counters] : [counters]);
  }

  /** The primary started a worker in place of one that exited. */
  restarted(): void {
    this.#restarts++;
  }

  #collect(worker: Worker): Promise<MetricJson[] | undefined> {
    if (!worker.isConnected()) return Promise.resolve(this.#last.get(worker.id)?.filter(monotonic));
    const id = this.#nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(id);
        resolve(this.#last.get(worker.id)?.filter(monotonic));
      }, CLUSTER_GATHER_TIMEOUT_MS);
      timer.unref();
      this.#waiting.set(id, (metrics) => {
        clearTimeout(timer);
        resolve(metrics);
      });
      worker.send({ type: COLLECT, id });
    });
  }

  /** The exposition text of the whole cluster. */
  async text(): Promise<string> {
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    const gathered = (await Promise.all(workers.map((w) => this.#collect(w)))).filter((m): m is MetricJson[] => m !== undefined);
    const restarts: MetricJson = {
      name: 'keel_cluster_worker_restarts_total', help: 'Cluster workers that exited and were replaced by the primary (workers > 1)',
      type: 'counter', aggregator: 'sum', values: [{ value: this.#restarts, labels: {} }],
    };
    const all = [...gathered, this.#retired, [restarts]].map((list) => list.map((m) => (WORST_WORKER.test(m.name) ? { ...m, aggregator: 'max' } : m)));
    return loadProm().AggregatorRegistry.aggregate(all).metrics();
  }
}

/** prom-client's aggregate of several workers' JSON, as JSON again (the retired tally). */
function aggregatedJson(lists: MetricJson[][]): MetricJson[] {
  const registry = loadProm().AggregatorRegistry.aggregate(lists);
  return (registry.getMetricsAsArray() as { get(): MetricJson }[]).map((m) => m.get());
}

let primary: ClusterMetrics | undefined;

/**
 * In the primary of a `workers > 1` server with metrics on: answer the workers' scrape requests. The
 * caller tells it of exits (`retire`) and replacements (`restarted`).
 */
export function serveClusterMetrics(): ClusterMetrics {
  if (primary) return primary;
  const metrics = (primary = new ClusterMetrics());
  cluster.on('message', (worker, message: { type?: unknown; id?: unknown } | null) => {
    if (message?.type !== REQ) return;
    const reply = (r: Omit<ScrapeResponse, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: RES, id: message.id, ...r });
    };
    metrics.text().then((text: string) => reply({ text }), (err: Error) => reply({ error: err.message }));
  });
  return metrics;
}

let workerReady = false;
let workerRegistries: readonly any[] = [];
let nextId = 0;
const pending = new Map<number, (text: string | undefined) => void>();

/**
 * In a cluster worker: report `registries` when the primary gathers, and listen for the primary's
 * answers. Outside a cluster worker: nothing.
 */
export function joinClusterMetrics(registries: readonly unknown[]): void {
  if (!cluster.isWorker || !process.send) return;
  workerRegistries = [...registries];
  if (workerReady) return;
  workerReady = true;
  process.on('message', (message: ScrapeResponse | { type?: unknown; id: number } | null) => {
    if (message?.type === COLLECT) {
      Promise.all(workerRegistries.map((r) => r.getMetricsAsJSON() as Promise<MetricJson[]>)).then(
        (lists) => process.send?.({ type: COLLECTED, id: message.id, metrics: lists.flat() }),
        () => process.send?.({ type: COLLECTED, id: message.id }),
      );
      return;
    }
    if (message?.type !== RES) return;
    const done = pending.get(message.id);
    pending.delete(message.id);
    const r = message as ScrapeResponse;
    done?.(r.error === undefined ? r.text : undefined);
  });
}

/** The whole cluster's exposition text, or undefined (not a cluster worker, or no answer in time). */
export function clusterScrape(): Promise<string | undefined> {
  if (!workerReady || !process.send) return Promise.resolve(undefined);
  const id = nextId++;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      resolve(undefined);
    }, CLUSTER_SCRAPE_TIMEOUT_MS);
    timer.unref();
    pending.set(id, (text) => {
      clearTimeout(timer);
      resolve(text);
    });
    process.send!({ type: REQ, id });
  });
}
