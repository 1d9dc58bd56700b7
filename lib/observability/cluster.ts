/**
 * Metrics under `workers > 1` (node:cluster): a scrape reaches one worker through the shared port, but
 * must count every worker. The worker that is scraped asks the primary, which gathers every worker's
 * registries with prom-client's AggregatorRegistry (counters and histograms summed; gauges as each
 * declares: `keel_dependency_up` the minimum, a shared queue's depth the maximum) and sends the text
 * back. If the primary does not answer within CLUSTER_SCRAPE_TIMEOUT_MS the worker answers its own.
 */
import cluster from 'node:cluster';
import { lazyRequire } from '../http/lazy-require.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- prom-client is optional */
const loadProm = lazyRequire<any>('prom-client');

/** How long a scraped worker waits for the primary's aggregate, ms (6000: prom-client's own 5 s bound, plus slack). */
export const CLUSTER_SCRAPE_TIMEOUT_MS = 6000;

const REQ = 'keel:metrics-req';
const RES = 'keel:metrics-res';

interface ScrapeResponse { type: typeof RES; id: number; text?: string; error?: string }

/** In the primary of a `workers > 1` server with metrics on: answer the workers' scrape requests. */
export function serveClusterMetrics(): void {
  const prom = loadProm();
  const aggregator = new prom.AggregatorRegistry();
  cluster.on('message', (worker, message: { type?: unknown; id?: unknown } | null) => {
    if (message?.type !== REQ) return;
    const reply = (r: Omit<ScrapeResponse, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: RES, id: message.id, ...r });
    };
    aggregator.clusterMetrics().then((text: string) => reply({ text }), (err: Error) => reply({ error: err.message }));
  });
}

let workerReady = false;
let nextId = 0;
const pending = new Map<number, (text: string | undefined) => void>();

/**
 * In a cluster worker: report `registries` when the primary gathers (prom-client's worker side), and
 * listen for the primary's answers. Outside a cluster worker: nothing.
 */
export function joinClusterMetrics(registries: readonly unknown[]): void {
  if (!cluster.isWorker || !process.send) return;
  const prom = loadProm();
  // The constructor installs prom-client's worker-side listener (it answers the primary's gathering).
  void new prom.AggregatorRegistry();
  prom.AggregatorRegistry.setRegistries([...registries]);
  if (workerReady) return;
  workerReady = true;
  process.on('message', (message: ScrapeResponse | null) => {
    if (message?.type !== RES) return;
    const done = pending.get(message.id);
    pending.delete(message.id);
    done?.(message.error === undefined ? message.text : undefined);
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
