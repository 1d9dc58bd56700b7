/**
 * The event-loop lag metrics (`nodejs_eventloop_lag_*`), measured by keel in place of prom-client's.
 *
 * Same names, help texts, types, aggregators and units as prom-client's `collectDefaultMetrics` (the dashboard and
 * the alert rules read them; the cluster aggregate takes the worst worker's by name), and the same meaning: a
 * histogram of the intervals between the firings of a 10 ms timer, in seconds, read and emptied at each scrape (an
 * idle loop reads ~0.01 s, a loop blocked 900 ms has one interval of ~0.9 s); `nodejs_eventloop_lag_seconds` is how
 * long a setImmediate queued at the previous scrape waited.
 *
 * Why not prom-client's: it reads `perf_hooks.monitorEventLoopDelay` and calls its `reset()` at each scrape, and
 * node's reset also forgets the histogram's previous timestamp (`Histogram::Reset` sets `prev_ = 0`), so the first
 * firing after a scrape records nothing and only sets the reference point. A stall that began within one
 * resolution (10 ms) of a scrape was never recorded: a 900 ms block was missing from the next scrape in about half
 * the runs of the cluster test (max and p99 ~0.01 s). Here the timer keeps its own `last` across resets, so the
 * interval that spans a scrape is recorded whole, in the next window.
 *
 * The timer is JavaScript's (setInterval, unref'd: it never keeps the process alive), not libuv's inside node:
 * node's own delta recorder (`recordDelta()`) has the same reset. It starts when the process registry turns its
 * process metrics on and runs for the life of the process, as prom-client's did: keel has no path that tears the
 * process registry down. JavaScript timers are scheduled in whole milliseconds, so an idle interval reads 10-11 ms
 * where libuv's read 10.0-10.1.
 */
import { createHistogram, performance, type RecordableHistogram } from 'node:perf_hooks';

/* eslint-disable @typescript-eslint/no-explicit-any -- prom-client is optional: its types stay out of keel's declarations */

/** The timer's period, ms: prom-client's default `eventLoopMonitoringPrecision`, so the readings keep their scale. */
export const EVENT_LOOP_LAG_RESOLUTION_MS = 10;

/** The histogram's statistics as prom-client names, describes and aggregates them (nanoseconds in, seconds out). */
const STATS: readonly [name: string, help: string, aggregator: string, read: (h: RecordableHistogram) => number][] = [
  ['min', 'The minimum recorded event loop delay.', 'min', (h) => h.min],
  ['max', 'The maximum recorded event loop delay.', 'max', (h) => h.max],
  ['mean', 'The mean of the recorded event loop delays.', 'average', (h) => h.mean],
  ['stddev', 'The standard deviation of the recorded event loop delays.', 'average', (h) => h.stddev],
  ['p50', 'The 50th percentile of the recorded event loop delays.', 'average', (h) => h.percentile(50)],
  ['p90', 'The 90th percentile of the recorded event loop delays.', 'average', (h) => h.percentile(90)],
  ['p99', 'The 99th percentile of the recorded event loop delays.', 'average', (h) => h.percentile(99)],
];

const LAG = 'nodejs_eventloop_lag_seconds';

/** Every name this module serves: the ones `collectDefaultMetrics` must give up first. */
export const EVENT_LOOP_LAG_METRICS: readonly string[] = [LAG, ...STATS.map(([stat]) => `nodejs_eventloop_lag_${stat}_seconds`)];

/**
 * Register the event-loop lag gauges on `registry` and start the timer that feeds them. Once per registry: a
 * second call throws (prom-client refuses a name registered twice).
 *
 * @example
 * registerEventLoopLag(prom, registry); // after removing prom-client's EVENT_LOOP_LAG_METRICS from it
 */
export function registerEventLoopLag(prom: any, registry: any): void {
  const histogram = createHistogram();
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    // Nanoseconds, as monitorEventLoopDelay records; at least 1, the histogram's lowest value.
    histogram.record(Math.max(1, Math.round((now - last) * 1e6)));
    last = now;
  }, EVENT_LOOP_LAG_RESOLUTION_MS);
  timer.unref();

  const registers = [registry];
  // Registered first: a scrape calls every metric's get() in turn, and only this one's collect sets the others.
  const lag = new prom.Gauge({
    name: LAG, help: 'Lag of event loop in seconds.', registers, aggregator: 'average',
    collect: () => {
      // Read at the next scrape, as prom-client's: how long this turn of the loop still had to run.
      const start = process.hrtime.bigint();
      setImmediate(() => lag.set(Number(process.hrtime.bigint() - start) / 1e9));
      // No interval ended since the last scrape (two scrapes within 10 ms): the last window's figures stay,
      // where prom-client's empty histogram read min 9.2e9 s, mean NaN and max 0.
      if (histogram.count === 0) return;
      for (const { gauge, read } of gauges) gauge.set(read(histogram) / 1e9);
      // Counts only: `last` stays, so the interval under way is recorded whole in the next window.
      histogram.reset();
    },
  });
  const gauges = STATS.map(([stat, help, aggregator, read]) => ({
    gauge: new prom.Gauge({ name: `nodejs_eventloop_lag_${stat}_seconds`, help, registers, aggregator }),
    read,
  }));
}
