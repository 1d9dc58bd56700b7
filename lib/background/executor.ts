/**
 * The in-process background task executor (spec: BackgroundTaskConfig, BackgroundJobMetadata).
 *
 * A bounded FIFO queue in front of at most `max_concurrent_tasks` running jobs. Enqueueing never
 * loses work silently: a full queue throws BackgroundQueueFullError (503 problem when it reaches the
 * client). Failures are logged, never thrown into the server. `shutdown()` drains for up to
 * `drain_timeout_secs` and reports what it had to abandon.
 */
import { pino, type Logger } from 'pino';
import { ConfigError, HttpError } from '../http/errors.js';
import { BackgroundJobMetadata, BackgroundTaskConfig } from '../records/protocol.js';
import { acquireRejectionGuard, jobContext, releaseRejectionGuard, type JobContext } from './context.js';
import { checkPayload, JobRegistry } from './jobs.js';
import type { StoreStatus } from '../ops/store-health.js';
import { ThrottledLog } from '../ops/throttled-log.js';
import type { JobTracing, TraceCarrier } from '../observability/job-spans.js';

/** Work to run after the response. `signal` aborts when shutdown gives up on the job (drain timeout). */
export type BackgroundTask = (signal: AbortSignal) => Promise<void> | void;

/** BackgroundTaskConfig input, snake_case or camelCase (generated from the record). `enabled` is the App's switch; the executor ignores it. */
export type { BackgroundTaskConfigInput } from '../records/protocol.js';
import type { BackgroundTaskConfigInput } from '../records/protocol.js';

/** BackgroundJobMetadata input: `name` (default "background_task") and the request id. */
export interface BackgroundJobMetadataInput {
  name?: string;
  request_id?: string | null;
  requestId?: string | null;
  /**
   * Idempotency key of a named job: the BullMQ executor stores it as the job id, so enqueueing the same
   * key again (a client retrying) adds nothing while that job is kept (docs/scaling.md). In process it
   * is only the job's `ctx.id`.
   */
  jobId?: string;
}

export interface BackgroundExecutorOptions {
  /** pino logger for task failures. Default: pino at {@link DEFAULT_BACKGROUND_LOG_LEVEL} to stdout. */
  logger?: Logger;
  /**
   * Refused jobs (queue full, shut down) are logged at warn, at most one line per this many ms with
   * a count (the first refusal at once). Default {@link DEFAULT_REFUSAL_LOG_INTERVAL_MS} (1000).
   */
  refusalLogIntervalMs?: number;
  /** Named jobs for `enqueue(name, payload)` (an App passes the jobs of `app.job()`). Default: none. */
  jobs?: JobRegistry;
  /** Spans of the jobs (PRODUCER at enqueue, CONSUMER at run): an App passes its own when spans are on. Default: none. */
  tracing?: JobTracing;
}

/** Level of the default logger: info. */
export const DEFAULT_BACKGROUND_LOG_LEVEL = 'info';
/** Refusals are logged at most once per this many ms, with a count: 1000. */
export const DEFAULT_REFUSAL_LOG_INTERVAL_MS = 1000;
/** Seconds a client is asked to wait after a full queue (Retry-After, RFC 9110 §10.2.3): 1. */
export const DEFAULT_QUEUE_FULL_RETRY_AFTER = 1;

export type BackgroundExecutorState = 'created' | 'running' | 'draining' | 'stopped';

export interface BackgroundStats {
  state: BackgroundExecutorState;
  /** Waiting to start. */
  queued: number;
  /** Started, not yet settled. */
  running: number;
  succeeded: number;
  failed: number;
  /** Refused by enqueue() (queue full or shut down). */
  rejected: number;
  /** Given up by shutdown(). */
  abandoned: number;
}

export interface ShutdownReport {
  /** Jobs that settled (succeeded or failed) while shutdown() was draining. */
  completed: number;
  /** Jobs still running, then those still queued, when the drain timed out (each in start/queue order). */
  abandoned: BackgroundJobMetadata[];
  /**
   * Durable executors only: jobs left in the shared queue for another instance (aborted running jobs
   * moved back to waiting). Absent for the in-process executor, which has nowhere to hand them.
   */
  handedBack?: BackgroundJobMetadata[];
}

/**
 * What the App needs from a background executor: `data.background.enqueue`, start when the router is
 * built, `shutdown()` after HTTP has drained (docs/operations.md). BackgroundExecutor (in process, the
 * default) and the BullMQ executor (lib/background/bullmq.ts) implement it.
 */
export interface BackgroundRunner {
  readonly config: Readonly<BackgroundTaskConfig>;
  start(): void;
  /** A closure (in process only) or a registered job name and its JSON payload. */
  enqueue(task: BackgroundTask, metadata?: BackgroundJobMetadataInput): void | Promise<void>;
  /** Durable executors resolve with the job's id (the caller's `jobId`, or one they made) once it is stored. */
  enqueue(name: string, payload?: unknown, metadata?: BackgroundJobMetadataInput): void | Promise<void | string>;
  /** Called when shutdown begins (beside the HTTP drain): a durable worker stops taking jobs from the shared queue. */
  beginShutdown?(): void | Promise<void>;
  shutdown(): Promise<ShutdownReport>;
  stats(): BackgroundStats;
  idle(): Promise<void>;
  /** Durable executors: the state of their store (`{ redis: 'up' | 'down' | 'reconnecting' }`), for readiness. */
  status?(): StoreStatus;
}

/** The queue is full: the job was not accepted. A 503 problem (with Retry-After) when it reaches a client. */
export class BackgroundQueueFullError extends HttpError {
  readonly metadata: BackgroundJobMetadata;
  constructor(metadata: BackgroundJobMetadata, capacity: number) {
    super(503, `The background queue is full (${capacity} waiting jobs); try again later`, {
      code: 'KEEL_BACKGROUND_QUEUE_FULL',
      headers: { 'Retry-After': String(DEFAULT_QUEUE_FULL_RETRY_AFTER) },
      // A refusal under load, not a failure: the executor logs it (aggregated), the request path does not.
      expected: true,
    });
    this.metadata = metadata;
  }
}

/** The executor is shutting down (or was never meant to take more work): the job was not accepted. */
export class BackgroundExecutorClosedError extends HttpError {
  readonly metadata: BackgroundJobMetadata;
  constructor(metadata: BackgroundJobMetadata) {
    super(503, 'The server is shutting down and accepts no background work', { code: 'KEEL_SERVICE_UNAVAILABLE', expected: true });
    this.metadata = metadata;
  }
}

interface Job extends JobContext {
  task: BackgroundTask;
  metadata: BackgroundJobMetadata;
  controller: AbortController;
  /** The enqueuer's trace context (spans on). */
  trace?: TraceCarrier;
}

/**
 * Bounded background executor.
 *
 * - `max_queue_size` (default 1024): jobs waiting to start; one more throws BackgroundQueueFullError.
 * - `max_concurrent_tasks` (default 128): jobs running at once.
 * - `drain_timeout_secs` (default 30): how long shutdown() waits for queued and running jobs.
 * Jobs start on a later turn of the event loop, never inside the enqueueing handler, in FIFO order.
 *
 * @example
 * import { BackgroundExecutor } from 'keel';
 * const background = new BackgroundExecutor({ max_concurrent_tasks: 4 });
 * background.start();
 * background.enqueue(async (signal) => { await fetch('https://example.com/hooks/welcome', { method: 'POST', signal }); }, { name: 'welcome_mail', request_id: 'req-1' });
 * const { abandoned } = await background.shutdown();
 */
export class BackgroundExecutor implements BackgroundRunner {
  readonly config: Readonly<BackgroundTaskConfig>;
  readonly #logger: Logger;
  readonly #jobs: JobRegistry | undefined;
  readonly #tracing: JobTracing | undefined;
  readonly #queue: Job[] = [];
  readonly #running = new Set<Job>();
  #state: BackgroundExecutorState = 'created';
  #pumpScheduled = false;
  #guarded = false;
  #idleWaiters: (() => void)[] = [];
  #succeeded = 0;
  #failed = 0;
  #rejected = 0;
  #abandoned = 0;
  #shutdown: Promise<ShutdownReport> | undefined;
  /** Refusals by reason: the first at once, then a line per interval with the counts since the last. */
  readonly #refusals: ThrottledLog<'queue_full' | 'shut_down', BackgroundJobMetadata>;

  constructor(config: BackgroundTaskConfigInput | Readonly<BackgroundTaskConfig> = {}, options: BackgroundExecutorOptions = {}) {
    this.config = BackgroundTaskConfig.parse(config, 'BackgroundTaskConfig');
    this.#logger = options.logger ?? pino({ level: DEFAULT_BACKGROUND_LOG_LEVEL });
    const interval = options.refusalLogIntervalMs ?? DEFAULT_REFUSAL_LOG_INTERVAL_MS;
    if (!Number.isInteger(interval) || interval < 1) {
      throw new ConfigError(`Invalid BackgroundExecutorOptions.refusalLogIntervalMs: expected an integer ≥ 1 (ms), got ${JSON.stringify(interval)}.`, {
        record: 'BackgroundExecutorOptions', path: 'refusalLogIntervalMs', key: 'refusalLogIntervalMs', value: interval,
      });
    }
    this.#refusals = new ThrottledLog({
      intervalMs: interval,
      first: (reason, meta) => this.#logRefusals({ [reason]: 1 }, { task: meta.name, request_id: meta.request_id }),
      interval: (counts, ms) => this.#logRefusals({ queue_full: counts.get('queue_full')?.count ?? 0, shut_down: counts.get('shut_down')?.count ?? 0 }, { interval_ms: ms }),
    });
    this.#jobs = options.jobs;
    this.#tracing = options.tracing;
  }

  /** Begin running jobs (idempotent). Jobs enqueued before start() wait in the queue. */
  start(): void {
    if (this.#state !== 'created') return;
    this.#state = 'running';
    this.#guard(true);
    this.#schedulePump();
  }

  /**
   * Queue `task`, or the registered job `name` with its JSON `payload` (run as `fn(payload, ctx)`).
   * Throws BackgroundQueueFullError when `max_queue_size` jobs are already waiting,
   * BackgroundExecutorClosedError once shutdown() has begun, UnknownJobError for an unregistered
   * name, and ConfigError for bad metadata.
   */
  enqueue(task: BackgroundTask, metadata?: BackgroundJobMetadataInput): void;
  enqueue(name: string, payload?: unknown, metadata?: BackgroundJobMetadataInput): void;
  enqueue(taskOrName: BackgroundTask | string, a?: unknown, b?: BackgroundJobMetadataInput): void {
    let task: BackgroundTask;
    let meta: BackgroundJobMetadata;
    if (typeof taskOrName === 'string') {
      if (!this.#jobs) throw new TypeError(`enqueue(${JSON.stringify(taskOrName)}): this executor has no named jobs (BackgroundExecutorOptions.jobs, or app.job() in an App)`);
      const fn = this.#jobs.get(taskOrName);
      checkPayload(taskOrName, a);
      const { jobId, ...rest } = b ?? {};
      meta = BackgroundJobMetadata.parse({ name: taskOrName, ...rest }, 'BackgroundJobMetadata') as BackgroundJobMetadata;
      // The job sees what a durable queue would hand it: a JSON copy, not the caller's object.
      const payload: unknown = a === undefined ? undefined : JSON.parse(JSON.stringify(a));
      const m = meta;
      task = (signal) => fn(payload, { signal, metadata: m, attempt: 1, id: jobId }) as Promise<void> | void;
    } else {
      if (typeof taskOrName !== 'function') throw new TypeError('enqueue() expects a function or the name of a registered job');
      task = taskOrName;
      meta = BackgroundJobMetadata.parse((a as BackgroundJobMetadataInput | undefined) ?? {}, 'BackgroundJobMetadata') as BackgroundJobMetadata;
    }
    if (!this.#tracing) return this.#accept(task, meta);
    const send = this.#tracing.produce({ name: meta.name, system: 'keel', id: b?.jobId });
    try {
      this.#accept(task, meta, send.carrier);
    } catch (err) {
      send.end(err);
      throw err;
    }
    send.end();
  }

  #accept(task: BackgroundTask, meta: BackgroundJobMetadata, trace?: TraceCarrier): void {
    if (this.#state === 'draining' || this.#state === 'stopped') {
      this.#refused('shut_down', meta);
      throw new BackgroundExecutorClosedError(meta);
    }
    if (this.#queue.length >= this.config.max_queue_size) {
      this.#refused('queue_full', meta);
      throw new BackgroundQueueFullError(meta, this.config.max_queue_size);
    }
    const job: Job = {
      task,
      metadata: meta,
      controller: new AbortController(),
      trace,
      onStrayRejection: (reason) => this.#logFailure(meta, reason, 'background task left an unhandled rejection'),
    };
    this.#queue.push(job);
    this.#schedulePump();
  }

  /** Resolves when nothing is queued or running (at once if so). */
  idle(): Promise<void> {
    if (this.#state === 'stopped' || (this.#queue.length === 0 && this.#running.size === 0)) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  stats(): BackgroundStats {
    return {
      state: this.#state,
      queued: this.#queue.length,
      running: this.#running.size,
      succeeded: this.#succeeded,
      failed: this.#failed,
      rejected: this.#rejected,
      abandoned: this.#abandoned,
    };
  }

  /**
   * Stop accepting jobs, let queued and running ones finish for up to `drain_timeout_secs`, then
   * abort what is left (its AbortSignal fires) and report it. Idempotent: later calls return the
   * same report. Jobs of an executor that was never started are abandoned at once.
   */
  shutdown(): Promise<ShutdownReport> {
    this.#shutdown ??= this.#drain();
    return this.#shutdown;
  }

  async #drain(): Promise<ShutdownReport> {
    const wasStarted = this.#state !== 'created';
    this.#state = 'draining';
    const settledBefore = this.#succeeded + this.#failed;
    if (wasStarted && this.config.drain_timeout_secs > 0) {
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.config.drain_timeout_secs * 1000)));
      await Promise.race([this.idle(), timedOut]);
      clearTimeout(timer);
    }
    this.#state = 'stopped';
    const left = [...this.#running, ...this.#queue];
    this.#queue.length = 0;
    for (const job of left) job.controller.abort(new Error('background drain timed out'));
    this.#abandoned += left.length;
    if (left.length > 0) {
      this.#logger.warn({ abandoned: left.map((j) => j.metadata) }, 'background jobs abandoned at shutdown');
    }
    if (this.#running.size === 0) this.#guard(false);
    this.#notifyIdle();
    return { completed: this.#succeeded + this.#failed - settledBefore, abandoned: left.map((j) => j.metadata) };
  }

  /**
   * Count a refusal. Under load a full queue refuses thousands of jobs a second: the first is logged
   * at once (warn, no stack: the client got a 503 it can retry), the rest as one line per interval.
   */
  #refused(reason: 'queue_full' | 'shut_down', meta: BackgroundJobMetadata): void {
    this.#rejected++;
    this.#refusals.note(reason, meta);
  }

  #logRefusals(counts: { queue_full?: number; shut_down?: number }, extra: Record<string, unknown>): void {
    const refused = (counts.queue_full ?? 0) + (counts.shut_down ?? 0);
    const msg = counts.queue_full ? 'background queue full; jobs refused' : 'background executor shut down; jobs refused';
    try {
      this.#logger.warn({ refused, ...counts, max_queue_size: this.config.max_queue_size, ...extra }, msg);
    } catch {
      // A failing logger must not turn a refusal into a crash.
    }
  }

  #guard(on: boolean): void {
    if (on && !this.#guarded) acquireRejectionGuard();
    if (!on && this.#guarded) releaseRejectionGuard();
    this.#guarded = on;
  }

  #schedulePump(): void {
    if (this.#pumpScheduled || this.#state === 'created' || this.#state === 'stopped') return;
    this.#pumpScheduled = true;
    // A later turn, so a job never runs inside (or delays) the handler that enqueued it.
    setImmediate(() => {
      this.#pumpScheduled = false;
      this.#pump();
    });
  }

  #pump(): void {
    while ((this.#state === 'running' || this.#state === 'draining') && this.#running.size < this.config.max_concurrent_tasks && this.#queue.length > 0) {
      this.#run(this.#queue.shift()!);
    }
  }

  #run(job: Job): void {
    this.#running.add(job);
    let outcome: Promise<void>;
    try {
      const run = () => job.task(job.controller.signal);
      const tracing = this.#tracing;
      outcome = Promise.resolve(jobContext.run(job, tracing ? () => tracing.consume(job.trace, { name: job.metadata.name, system: 'keel' }, run) : run));
    } catch (err) {
      outcome = Promise.reject(err);
    }
    outcome.then(
      () => {
        this.#succeeded++;
      },
      (err: unknown) => {
        this.#failed++;
        this.#logFailure(job.metadata, err, 'background task failed');
      },
    ).finally(() => {
      this.#running.delete(job);
      if (this.#state === 'stopped') {
        if (this.#running.size === 0) this.#guard(false);
        return;
      }
      this.#pump();
      this.#notifyIdle();
    });
  }

  #logFailure(meta: BackgroundJobMetadata, err: unknown, msg: string): void {
    try {
      this.#logger.error({ err, task: meta.name, request_id: meta.request_id }, msg);
    } catch {
      // A failing logger must not turn a task failure into a crash.
    }
  }

  #notifyIdle(): void {
    if (this.#queue.length > 0 || (this.#running.size > 0 && this.#state !== 'stopped')) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const w of waiters) w();
  }
}
