/**
 * The work gate (lib/server/cost.ts states the cost model): WorkRefusal, and WorkGate with its CPU
 * ledger admission, its server-wide queue, its overload shedding, and the charging of measured work.
 */
import { performance } from 'node:perf_hooks';
import { HttpError } from '../http/errors.js';
import { LoadMonitor } from './overload.js';
import { observe, type ShedReason } from '../observability/observe.js';
import { CpuLedger } from './cpu-ledger.js';
import { publishShed } from './shedding.js';
import type { WorkLimitsConfig } from '../records/work.js';

/** Retry-After (seconds) of a 503 for a full queue or an overloaded loop: one sample window is rarely longer. */
export const WORK_UNAVAILABLE_RETRY_AFTER_SECONDS = 1;
/**
 * On a late loop, new expensive work is shed when some is running or queued, or when the work charged over
 * the last two sample windows took at least this share of one window (0.25): JSON-RPC batches and gRPC calls
 * are not queued, so what they cost is how the gate knows they are what makes the loop late.
 */
export const SHED_CHARGED_SHARE = 0.25;

/** Why expensive work was refused: 429 (the client's budget) or 503 (queue full, overloaded). */
export class WorkRefusal extends HttpError {
  /** `cpu_ms_per_second` (429), `max_queued` or `overloaded` (503). */
  readonly reason: 'cpu_ms_per_second' | 'max_queued' | 'overloaded';
  readonly retryAfterSeconds: number;
  constructor(reason: WorkRefusal['reason'], detail: string, retryAfterSeconds: number, extensions: Record<string, unknown> = {}) {
    const status = reason === 'cpu_ms_per_second' ? 429 : 503;
    super(status, detail, {
      code: status === 429 ? 'KEEL_CPU_BUDGET_EXCEEDED' : 'KEEL_OVERLOADED',
      headers: { 'Retry-After': String(retryAfterSeconds) },
      extensions: { reason, ...extensions },
      expected: true,
    });
    this.name = 'WorkRefusal';
    // keel_requests_shed_total: the one place every shed 503 passes (docs/operations.md, "Metrics").
    if (status === 503) observe.shed(reason as ShedReason);
    this.reason = reason;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

interface Waiting {
  start: () => void;
  /** Reject it without running (evicted by another client's fair share). */
  refuse: (err: WorkRefusal) => void;
}

/** A thenable, without assuming a Promise. */
const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof (v as PromiseLike<unknown>)?.then === 'function';

/**
 * The gate of one App's expensive work. Protocols call `admit` before reading a request's body (a
 * cheap refusal), then `run` the work itself.
 *
 * @example
 * const gate = new WorkGate(WorkLimitsConfig.defaults());
 * const key = '203.0.113.7';
 * gate.admit(key);                                       // throws WorkRefusal (429 / 503)
 * const answer = await gate.run(key, () => expensive());  // queued, measured, charged to key
 */
export class WorkGate {
  readonly config: Readonly<WorkLimitsConfig>;
  readonly monitor: LoadMonitor;
  readonly #ledger: CpuLedger | undefined;
  /**
   * Waiting work by client key, served round-robin (one client's backlog never delays another's first operation);
   * a Map keeps the order in which clients came, and a client served goes to the back.
   */
  readonly #queues = new Map<string, Waiting[]>();
  #queued = 0;
  #running = 0;
  #pumpScheduled = false;
  /** No operation starts before this instant (performance.now()): the rest of the loop's time (max_loop_share). */
  #resumeAt = 0;
  /** Work charged in the current window of sample_interval_ms, in the one before, and when the current began. */
  #charged = 0;
  #chargedBefore = 0;
  #windowAt = 0;
  /** Refusals so far, by reason (tests and metrics). */
  readonly refused = { cpu_ms_per_second: 0, max_queued: 0, overloaded: 0 };

  constructor(config: Readonly<WorkLimitsConfig>, options: { now?: () => number } = {}) {
    this.config = config;
    this.#ledger = config.cpu_ms_per_second === null ? undefined : new CpuLedger(config.cpu_ms_per_second, config.cpu_ms_burst, options);
    this.monitor = new LoadMonitor({
      maxEventLoopDelayMs: config.max_event_loop_delay_ms,
      maxEventLoopUtilization: config.max_event_loop_utilization,
      sampleIntervalMs: config.sample_interval_ms,
    });
  }

  /** Operations running now. */
  get running(): number {
    return this.#running;
  }

  /** Operations waiting for a slot now. */
  get queued(): number {
    return this.#queued;
  }

  /** The client's budget left, ms (Infinity without per-client budgets). */
  remainingMs(key: string): number {
    return this.#ledger ? this.#ledger.remainingMs(key) : Infinity;
  }

  /**
   * Whether expensive work is what keeps the loop busy now: some running or waiting, or SHED_CHARGED_SHARE of a
   * window charged over the last two. Then shedding is the gate's (it refuses that work, in each protocol's
   * words), not the cheap-request shedder's (lib/server/shedding.ts).
   */
  get busy(): boolean {
    return this.#running + this.#queued > 0 || this.#recentlyCharged(0) >= SHED_CHARGED_SHARE * this.config.sample_interval_ms;
  }

  /** Throws a WorkRefusal when `key` may not start expensive work now: overloaded, or its budget spent. */
  admit(key: string): void {
    this.monitor.start();
    const load = this.monitor.sample;
    // Shed only while expensive work is already running or waiting: what piles up behind a late loop.
    // A lone request on a loop made late by something else is not refused for it.
    if (load.overloaded && this.busy) {
      this.refused.overloaded++;
      publishShed({ kind: 'work', reason: 'overloaded', eventLoopDelayMs: Math.round(load.delayMs), eventLoopUtilization: Math.round(load.utilization * 100) / 100 });
      throw new WorkRefusal('overloaded', `The server is overloaded (event-loop delay ${Math.round(load.delayMs)} ms, utilisation ${load.utilization.toFixed(2)}); retry in ${WORK_UNAVAILABLE_RETRY_AFTER_SECONDS} s`,
        WORK_UNAVAILABLE_RETRY_AFTER_SECONDS, { event_loop_delay_ms: Math.round(load.delayMs), event_loop_utilization: Math.round(load.utilization * 100) / 100 });
    }
    const refusal = this.#budgetRefusal(key);
    if (refusal) throw refusal;
  }

  #budgetRefusal(key: string): WorkRefusal | undefined {
    const wait = this.#ledger?.waitMs(key) ?? 0;
    if (wait <= 0) return undefined;
    this.refused.cpu_ms_per_second++;
    const seconds = Math.max(1, Math.ceil(wait / 1000));
    return new WorkRefusal('cpu_ms_per_second', `CPU budget exceeded: expensive work may use ${this.config.cpu_ms_burst} ms at once, refilled at ${this.config.cpu_ms_per_second} ms per second; retry in ${seconds} s`,
      seconds, { limit: this.config.cpu_ms_per_second, burst: this.config.cpu_ms_burst });
  }

  /**
   * Run `work` when a slot is free (one start per turn of the event loop), then charge its measured
   * time to `key`. Rejects with a WorkRefusal (503) when the queue is full. `cancelled` is asked when
   * the work's turn comes: true (the client left, the request timed out) skips it, resolving undefined.
   */
  run<T>(key: string, work: () => T | Promise<T>, cancelled?: () => boolean): Promise<T | undefined> {
    // Free slots take queued work on the next turns: only what waits beyond them counts against max_queued.
    if (this.#queued >= this.config.max_queued + Math.max(0, this.config.max_concurrent - this.#running)) {
      // Full. Per-client shares (issue 44 #9: 32 concurrent queries from one client refused another's trivial
      // one): a client with less waiting than the client with most gets in, and that client's newest waiting
      // operation is refused instead; the client with most (or as many) is refused.
      const heaviest = this.#heaviest();
      const mine = this.#queues.get(key)?.length ?? 0;
      if (!heaviest || heaviest[1].length <= mine) {
        this.refused.max_queued++;
        return Promise.reject(this.#queueFull());
      }
      this.refused.max_queued++;
      const evicted = heaviest[1].pop()!;
      this.#queued--;
      if (heaviest[1].length === 0) this.#queues.delete(heaviest[0]);
      evicted.refuse(this.#queueFull());
    }
    return new Promise<T | undefined>((resolve, reject) => {
      let waiting = this.#queues.get(key);
      if (!waiting) this.#queues.set(key, (waiting = []));
      this.#queued++;
      waiting.push({
        refuse: reject,
        start: () => {
          if (cancelled?.()) {
            this.#release();
            resolve(undefined);
            return;
          }
          // Checked again when its turn comes: work admitted together with a burst must not all run on
          // a budget the first ones already spent (the overshoot stays within max_concurrent operations).
          const refusal = this.#budgetRefusal(key);
          if (refusal) {
            this.#release();
            reject(refusal);
            return;
          }
          this.#measure(key, work).then(resolve, reject).finally(() => this.#release());
        },
      });
      this.#schedule();
    });
  }

  /**
   * Charge `ms` of work that ran outside the queue to `key` (JSON-RPC calls, gRPC calls: lib/jsonrpc,
   * lib/grpc measure the slices they run themselves). It counts toward the loop's share as queued work does.
   */
  charge(key: string, ms: number): void {
    this.#charge(key, ms);
  }

  /** Stop sampling the event loop (App shutdown). */
  close(): void {
    this.monitor.stop();
  }

  #measure<T>(key: string, work: () => T | Promise<T>): Promise<T> {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    let result: T | Promise<T>;
    try {
      result = work();
    } catch (err) {
      this.#charge(key, performance.now() - t0);
      return Promise.reject(err);
    }
    if (!isThenable(result)) {
      this.#charge(key, performance.now() - t0);
      return Promise.resolve(result);
    }
    const settle = (): void => {
      const cpu = process.cpuUsage(cpu0);
      this.#charge(key, Math.min(performance.now() - t0, (cpu.user + cpu.system) / 1000));
    };
    return Promise.resolve(result).finally(settle);
  }

  /** Milliseconds charged in this window and the one before (windows of sample_interval_ms), after adding `ms`. */
  #recentlyCharged(ms: number): number {
    const now = performance.now();
    const w = this.config.sample_interval_ms;
    if (now - this.#windowAt >= w) {
      this.#chargedBefore = now - this.#windowAt >= 2 * w ? 0 : this.#charged;
      this.#charged = 0;
      this.#windowAt = now;
    }
    this.#charged += ms;
    return this.#charged + this.#chargedBefore;
  }

  #charge(key: string, ms: number): void {
    this.#recentlyCharged(ms);
    this.#ledger?.charge(key, ms);
    // The loop's share: the next start waits ms × (1 − share) / share, so everyone else gets that time.
    const share = this.config.max_loop_share;
    if (share < 1) this.#resumeAt = Math.max(this.#resumeAt, performance.now() + (ms * (1 - share)) / share);
  }

  #queueFull(): WorkRefusal {
    publishShed({ kind: 'work', reason: 'max_queued' });
    return new WorkRefusal('max_queued', `Too much expensive work is waiting (${this.config.max_queued} queued); retry in ${WORK_UNAVAILABLE_RETRY_AFTER_SECONDS} s`,
      WORK_UNAVAILABLE_RETRY_AFTER_SECONDS, { limit: this.config.max_queued });
  }

  #heaviest(): [string, Waiting[]] | undefined {
    let best: [string, Waiting[]] | undefined;
    for (const entry of this.#queues) if (!best || entry[1].length > best[1].length) best = entry;
    return best;
  }

  /** The next waiting operation, round-robin between clients. */
  #next(): Waiting | undefined {
    for (const [key, waiting] of this.#queues) {
      const next = waiting.shift()!;
      this.#queues.delete(key);
      if (waiting.length > 0) this.#queues.set(key, waiting);
      this.#queued--;
      return next;
    }
    return undefined;
  }

  #release(): void {
    this.#running--;
    this.#schedule();
  }

  /**
   * One start per turn: setImmediate runs after the poll phase, so requests that arrived meanwhile go
   * first; and none before `#resumeAt` (max_loop_share), since one turn is not enough for everyone:
   * a new connection takes several turns to become a request.
   */
  #schedule(): void {
    if (this.#pumpScheduled || this.#queued === 0 || this.#running >= this.config.max_concurrent) return;
    this.#pumpScheduled = true;
    const wait = this.#resumeAt - performance.now();
    if (wait > 1) setTimeout(() => setImmediate(() => this.#pump()), wait);
    else setImmediate(() => this.#pump());
  }

  #pump(): void {
    this.#pumpScheduled = false;
    if (this.#running >= this.config.max_concurrent) return;
    const next = this.#next();
    if (!next) return;
    this.#running++;
    next.start();
    this.#schedule();
  }
}
