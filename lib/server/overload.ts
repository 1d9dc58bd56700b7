/**
 * Is the event loop overloaded? (issue 35 item 3.) Two of node's own measures, sampled over a window
 * as fastify's under-pressure does:
 *
 * - event-loop delay: `perf_hooks.monitorEventLoopDelay` records how late a 10 ms timer fires; the
 *   window's mean, less that resolution, is how long any callback (a `/health` request) waits for the
 *   loop. A single long task barely moves the mean (one late sample among ~50); a loop blocked most of
 *   the time does.
 * - event-loop utilisation: `performance.eventLoopUtilization()` over the window, the share of time the
 *   loop was not idle waiting for I/O. Near 1 the loop has no slack left for anyone.
 *
 * Only new expensive work consults it (lib/server/cost.ts); cheap routes and `/health` are never refused, so
 * shedding happens before the loop is too late for them. The sampling timer is unref'd and costs one
 * histogram read per window; it runs only while a WorkGate is in use. The histogram is read as running totals,
 * never reset (#measure says why).
 */
import { monitorEventLoopDelay, performance, type EventLoopUtilization, type IntervalHistogram } from 'node:perf_hooks';

/** Resolution of the delay histogram, ms: its timer's period (subtracted from the mean, as under-pressure does). */
export const EVENT_LOOP_RESOLUTION_MS = 10;

export interface LoadMonitorOptions {
  /** Mean event-loop delay (ms) past which the loop is overloaded; 0 = not checked. */
  maxEventLoopDelayMs: number;
  /** Event-loop utilisation (0-1) past which the loop is overloaded; 0 = not checked. */
  maxEventLoopUtilization: number;
  /** Window length, ms. */
  sampleIntervalMs: number;
}

/** The last window's measures. */
export interface LoadSample {
  /** Mean event-loop delay, ms (resolution subtracted, never below 0). */
  readonly delayMs: number;
  /** Event-loop utilisation, 0-1. */
  readonly utilization: number;
  /** Whether either passed its threshold. */
  readonly overloaded: boolean;
}

const IDLE: LoadSample = Object.freeze({ delayMs: 0, utilization: 0, overloaded: false });

/**
 * Samples the event loop every `sampleIntervalMs` once started.
 *
 * @example
 * const monitor = new LoadMonitor({ maxEventLoopDelayMs: 100, maxEventLoopUtilization: 0.98, sampleIntervalMs: 500 });
 * monitor.start();
 * if (monitor.sample.overloaded) refuse503();
 */
export class LoadMonitor {
  readonly options: Readonly<LoadMonitorOptions>;
  #histogram: IntervalHistogram | undefined;
  #elu: EventLoopUtilization | undefined;
  #timer: NodeJS.Timeout | undefined;
  #sample: LoadSample = IDLE;
  /** Windows in a row that were overloaded (0 after one that was not). */
  #streak = 0;
  /** When the last window ended (performance.now()). */
  #lastAt = 0;
  /** The histogram's count and sum of delays (ns) when the last window ended: a window is the difference. */
  #count = 0;
  #sum = 0;

  constructor(options: LoadMonitorOptions) {
    this.options = Object.freeze({ ...options });
  }

  /** True when neither threshold is set: nothing to measure. */
  get disabled(): boolean {
    return this.options.maxEventLoopDelayMs <= 0 && this.options.maxEventLoopUtilization <= 0;
  }

  /** The last complete window (all zeros before the first). */
  get sample(): LoadSample {
    return this.#sample;
  }

  /** How many windows in a row, up to the last, were overloaded: one long task makes one window late, a flood many. */
  get streak(): number {
    return this.#streak;
  }

  /** Begin sampling (idempotent; nothing when disabled). */
  start(): void {
    if (this.#timer || this.disabled) return;
    this.#histogram = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
    this.#histogram.enable();
    this.#elu = performance.eventLoopUtilization();
    this.#lastAt = performance.now();
    this.#count = 0;
    this.#sum = 0;
    this.#timer = setInterval(() => this.#measure(), this.options.sampleIntervalMs);
    this.#timer.unref();
  }

  /** Stop sampling and forget the last window. */
  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#histogram?.disable();
    this.#timer = undefined;
    this.#histogram = undefined;
    this.#sample = IDLE;
    this.#streak = 0;
  }

  #measure(): void {
    const h = this.#histogram!;
    const at = performance.now();
    // The histogram is never reset: node's reset() also forgets its timer's last firing, so the first firing
    // after it only sets a reference point, and a block that began within one resolution of a window's end
    // was not in any window (a 700 ms block right after a window read as no delay at all). A window's mean
    // is the difference of the running totals instead (the histogram's buckets map a value to the same
    // representative every time, so the difference is the window's own sum).
    const count = h.count;
    const sum = count > 0 ? h.mean * count : 0;
    const n = count - this.#count;
    // No sample in a whole window: the histogram's 10 ms timer never got its turn, the loop was blocked that long.
    const mean = n > 0 ? (sum - this.#sum) / n / 1e6 : at - this.#lastAt;
    this.#count = count;
    this.#sum = sum;
    this.#lastAt = at;
    const delayMs = Math.max(0, mean - EVENT_LOOP_RESOLUTION_MS);
    const now = performance.eventLoopUtilization();
    const utilization = performance.eventLoopUtilization(now, this.#elu).utilization;
    this.#elu = now;
    const { maxEventLoopDelayMs: maxDelay, maxEventLoopUtilization: maxElu } = this.options;
    const overloaded = (maxDelay > 0 && delayMs > maxDelay) || (maxElu > 0 && utilization > maxElu);
    this.#sample = { delayMs, utilization, overloaded };
    this.#streak = overloaded ? this.#streak + 1 : 0;
  }
}
