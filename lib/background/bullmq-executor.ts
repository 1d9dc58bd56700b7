/**
 * The BullMQ executor behind `bullmqBackground()` (lib/background/bullmq.ts, whose header states its
 * semantics): queue and worker set-up, enqueue with its outage handling, running jobs, drain and shutdown.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { createRedisClient, isClusterConnection, pingSlotsOf } from '../ops/redis-connection.js';
import { BackgroundJobMetadata, type BackgroundTaskConfig } from '../records/protocol.js';
import {
  BackgroundExecutor, BackgroundExecutorClosedError, BackgroundQueueFullError,
  type BackgroundJobMetadataInput, type BackgroundRunner, type BackgroundStats, type BackgroundTask, type ShutdownReport,
} from './executor.js';
import { checkPayload, type JobRegistry } from './jobs.js';
import { observe } from '../observability/observe.js';
import {
  DEFAULT_BULLMQ_ATTEMPTS, DEFAULT_BULLMQ_BACKOFF, DEFAULT_BULLMQ_KEEP_COMPLETED, DEFAULT_BULLMQ_KEEP_FAILED,
  DEFAULT_BULLMQ_LOCK_DURATION_MS, DEFAULT_BULLMQ_MAX_STALLED_COUNT, DEFAULT_BULLMQ_PREFIX, DEFAULT_BULLMQ_QUEUE,
  DEFAULT_BULLMQ_CLUSTER_PREFIX, DEFAULT_BULLMQ_STALLED_INTERVAL_MS, JOB_ID_PATTERN, type BullMqBackgroundOptions,
} from './bullmq-options.js';
import { JobFates } from './fate.js';
import { logStall, settlesWithin, workerEnded } from './bullmq-support.js';
import { RedisEpoch } from '../ops/redis-epoch.js';
import { errorText, StoreHealth, type StoreStatus } from '../ops/store-health.js';
import { raceStarvationAware, starved, watchLoop } from '../ops/loop-stall.js';
import type { JobTracing, TraceCarrier } from '../observability/job-spans.js';
import { BackgroundStoreError, ENQUEUE_TIMEOUT_MS, HAND_BACK_GRACE_MS, type BackendContext, type Modules } from './bullmq-contract.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
/** How often a worker asks Redis for a job's claim before handing the job back: 11 (≈ 5.5–11 s). */
const CLAIM_TRIES = 11;
/** Why a running job's signal fired at shutdown: it is handed back, not failed. */
const HANDED_BACK = 'keel: shutdown drain timed out; job handed back to the queue';

interface Active { job: any; metadata: BackgroundJobMetadata }

export class BullMqExecutor implements BackgroundRunner {
  readonly config: Readonly<BackgroundTaskConfig>;
  readonly #options: BullMqBackgroundOptions;
  readonly #logger: Logger;
  readonly #jobs: JobRegistry;
  readonly #m: Modules;
  readonly #connections: any[] = [];
  #queue: any;
  #producer: any;
  #worker: any;
  #local: BackgroundExecutor | undefined;
  #state: BackgroundStats['state'] = 'created';
  readonly #active = new Set<Active>();
  /** Jobs #process ran (it logs and counts their failures itself). */
  readonly #ran = new WeakSet<object>();
  #idleWaiters: (() => void)[] = [];
  #succeeded = 0;
  #failed = 0;
  #rejected = 0;
  #abandoned: BackgroundJobMetadata[] = [];
  #handedBack: BackgroundJobMetadata[] = [];
  #shutdown: Promise<ShutdownReport> | undefined;
  #workerClosed: Promise<unknown> | undefined;
  readonly #health: StoreHealth;
  /** Stops this executor's use of the event-loop stall sampler (lib/ops/loop-stall.ts). */
  #unwatch: (() => void) | undefined;
  #fates!: JobFates;
  #epoch: RedisEpoch | undefined;
  #probe: (() => Promise<void>) | undefined;
  readonly #tracing: JobTracing | undefined;

  constructor(config: Readonly<BackgroundTaskConfig>, options: BullMqBackgroundOptions, context: BackendContext, m: Modules) {
    this.config = config;
    this.#options = options;
    this.#logger = context.logger;
    this.#jobs = context.jobs;
    this.#m = m;
    this.#tracing = context.tracing;
    this.#health = new StoreHealth(this.#logger, 'background');
  }

  /** The state of Redis as this executor sees it (readiness: `{ redis: 'up' }` when it can store and take jobs). */
  async #depth(): Promise<number> {
    const counts = (await this.#queue.getJobCounts('waiting', 'delayed', 'prioritized', 'paused', 'active')) as Record<string, number>;
    return Object.values(counts).reduce((a, b) => a + (b || 0), 0);
  }

  status(): StoreStatus {
    return this.#health.status();
  }

  #connect(own: Record<string, unknown>): any {
    // Bounded reconnects unless the user's connection options choose their own strategy.
    const client = createRedisClient(this.#m.ioredis, this.#options.connection, own);
    // Connection errors surface where they matter (enqueue, the worker's own retries), not as crashes.
    client.on('error', (err: Error) => this.#logger.debug({ err: errorText(err) }, 'background queue: redis connection error'));
    observe.redisClient(this, 'background', client);
    this.#connections.push(client);
    return client;
  }

  start(): void {
    if (this.#state !== 'created') return;
    this.#state = 'running';
    // A timed-out command is judged against how stalled the loop was meanwhile (issue 36).
    this.#unwatch = watchLoop();
    const { Queue, Worker } = this.#m.bullmq;
    const name = this.#options.queueName ?? DEFAULT_BULLMQ_QUEUE;
    // A cluster needs every key of a queue in one slot: BullMQ's scripts touch several (a hash tag).
    const prefix = this.#options.prefix ?? (isClusterConnection(this.#options.connection) ? DEFAULT_BULLMQ_CLUSTER_PREFIX : DEFAULT_BULLMQ_PREFIX);
    // Producer: while Redis is down a command fails after one reconnection attempt (or ENQUEUE_TIMEOUT_MS),
    // so enqueue answers soon instead of holding the request. (Not enableOfflineQueue: false: BullMQ's
    // own start-up INFO would fail before the connection is up, and the queue with it.)
    const producer = (this.#producer = this.#connect({ maxRetriesPerRequest: 1, commandTimeout: ENQUEUE_TIMEOUT_MS }));
    // The queue's keys share one hash tag: its shard is the only one this executor needs (issue 47).
    const needed = [`${prefix}:${name}:keel-epoch`];
    const probe = (this.#probe = () => pingSlotsOf(producer, needed));
    this.#health.attach(producer, probe);
    observe.probe(this, producer, probe);
    this.#fates = new JobFates(producer, `${prefix}:${name}:keel-fate:`, this.#logger);
    // Once Redis answers again, verdicts that could not be sent go first (lib/background/fate.ts).
    this.#health.onChange((state) => state === 'up' && this.#fates.flush());
    // A Redis that comes back empty lost the jobs it held: say so, and count them (lib/ops/redis-epoch.ts).
    const epoch = (this.#epoch = new RedisEpoch(producer, `${prefix}:${name}:keel-epoch`, () => this.#depth(), (lost) => {
      observe.jobsLost(name, lost);
      this.#logger.error({ component: 'background', store: 'redis', queue: name, jobs_lost: lost }, 'redis came back empty: the jobs it held are lost (waiting, delayed and running at the last sample)');
    }));
    this.#health.onChange((state, _previous, reconnected) => (state === 'up' ? epoch.up(reconnected) : epoch.down()));
    this.#queue = new Queue(name, { connection: producer, prefix });
    this.#queue.on('error', (err: Error) => this.#logger.debug({ err: errorText(err) }, 'background queue error'));
    if (this.#options.worker !== false) {
      // The worker's connection blocks (BZPOPMIN), which BullMQ requires to retry for ever.
      const blocking = this.#connect({ maxRetriesPerRequest: null });
      this.#health.attach(blocking);
      this.#worker = new Worker(name, (job: any, token: string, signal: AbortSignal) => this.#process(job, token, signal), {
        connection: blocking,
        prefix,
        concurrency: this.config.max_concurrent_tasks,
        maxStalledCount: this.#options.maxStalledCount ?? DEFAULT_BULLMQ_MAX_STALLED_COUNT,
        lockDuration: this.#options.lockDuration ?? DEFAULT_BULLMQ_LOCK_DURATION_MS,
        stalledInterval: this.#options.stalledInterval ?? DEFAULT_BULLMQ_STALLED_INTERVAL_MS,
      });
      // Connection trouble is the store's state (logged once per change by StoreHealth), not a line per retry.
      this.#worker.on('error', (err: Error) => this.#logger.debug({ err: errorText(err) }, 'background worker error'));
      this.#worker.on('stalled', (jobId: string) => void this.#stalled(jobId));
      // A job BullMQ fails without running it (stalled more than maxStalledCount times: its "deferred
      // failure") never reaches #process: this is its one error line, and the failed count.
      this.#worker.on('failed', (job: any, err: Error) => {
        if (!job || this.#ran.has(job)) return;
        this.#failed++;
        this.#logger.error({ task: job.name, request_id: job.data?.metadata?.request_id, job_id: job.id, attempt: (job.attemptsMade ?? 0) + 1, stalled_count: job.stalledCounter, reason: errorText(err) }, 'background job failed for good without running: stalled more than maxStalledCount times (its worker died or blocked its event loop past lockDuration)');
      });
    }
    observe.queue(this, this.#queue, this.#worker);
  }

  enqueue(task: BackgroundTask, metadata?: BackgroundJobMetadataInput): Promise<void>;
  enqueue(name: string, payload?: unknown, metadata?: BackgroundJobMetadataInput): Promise<string>;
  enqueue(nameOrTask: string | BackgroundTask, payload?: unknown, metadata?: BackgroundJobMetadataInput): Promise<string | void> {
    if (typeof nameOrTask !== 'string') {
      throw new TypeError('The BullMQ background executor runs named jobs only: a closure cannot cross processes. Register the work at start-up with app.job(name, (payload, ctx) => …) and enqueue(name, payload)');
    }
    this.#jobs.get(nameOrTask); // UnknownJobError now, in the request that made the mistake
    checkPayload(nameOrTask, payload);
    const { jobId, ...rest } = metadata ?? {};
    if (jobId !== undefined && !(typeof jobId === 'string' && JOB_ID_PATTERN.test(jobId))) {
      throw new TypeError(`The jobId of background job "${nameOrTask}" must be 1 to 200 letters, digits, "_", "." or "-", not only digits, got ${JSON.stringify(jobId)}`);
    }
    const meta = BackgroundJobMetadata.parse({ name: nameOrTask, ...rest }, 'BackgroundJobMetadata') as BackgroundJobMetadata;
    if (this.#state === 'created' || this.#state === 'draining' || this.#state === 'stopped') {
      this.#rejected++;
      throw new BackgroundExecutorClosedError(meta);
    }
    if (!this.#tracing) return this.#add(nameOrTask, payload, meta, jobId);
    const send = this.#tracing.produce({ name: nameOrTask, system: 'bullmq', queue: this.#options.queueName ?? DEFAULT_BULLMQ_QUEUE, id: jobId });
    return send.settle(this.#add(nameOrTask, payload, meta, jobId, send.carrier));
  }

  async #add(name: string, payload: unknown, meta: BackgroundJobMetadata, key: string | undefined, trace?: TraceCarrier): Promise<string> {
    // Every enqueue has its own token (its verdict's key); the job id is the caller's key or the token.
    const token = randomUUID();
    const jobId = key ?? token;
    let attempt = { expired: false, sent: false, trace };
    let sent = false;
    try {
      // While Redis is known to be away, refuse at once instead of waiting out the timeout per request.
      if (!this.#health.available) throw new Error('Redis is unavailable (waiting for it to answer again)');
      for (let tries = 0; ; tries++) {
        const started = performance.now();
        try {
          await this.#storeWithin(name, payload, meta, token, jobId, key !== undefined, attempt);
          break;
        } catch (err) {
          sent ||= attempt.sent;
          attempt.expired = true;
          // Timed out because this process was starved, not Redis: try once more. Safe: the same job id
          // makes a second add of a job the first one stored a no-op (lib/ops/loop-stall.ts).
          if (tries > 0 || err instanceof BackgroundQueueFullError || !starved(started, ENQUEUE_TIMEOUT_MS)) throw err;
          this.#logger.debug({ task: name, reason: errorText(err) }, 'background enqueue timed out while the event loop was stalled; retrying once');
          attempt = { expired: false, sent: false, trace };
        }
      }
      this.#health.commandSucceeded();
      return jobId;
    } catch (err) {
      if (err instanceof BackgroundQueueFullError) throw err;
      attempt.expired = true;
      observe.storeError('background', err);
      if (this.#health.available) this.#health.commandFailed(err);
      const local = this.#options.passOnStoreError === true;
      // The add may still reach Redis (a hung Redis resumes, ioredis resends after a reconnect): its
      // copy must not run, as the caller is told it was not stored (or it runs here).
      if (sent || attempt.sent) this.#fates.decide(token, local ? 'local' : 'refused', jobId, name);
      if (local) {
        this.#health.count('background queue unavailable; jobs run in this process (passOnStoreError)', { task: name, request_id: meta.request_id, reason: errorText(err) });
        this.#localExecutor().enqueue(name, payload, { ...meta, jobId });
        return jobId;
      }
      this.#rejected++;
      this.#health.count('background queue unavailable; jobs refused (503, not stored, will not run)', { task: name, request_id: meta.request_id, reason: errorText(err) });
      throw new BackgroundStoreError(meta, err, jobId);
    }
  }

  /** #store bounded by ENQUEUE_TIMEOUT_MS (extended once if the loop was starved meanwhile). */
  #storeWithin(name: string, payload: unknown, meta: BackgroundJobMetadata, token: string, jobId: string, keyed: boolean, attempt: { expired: boolean; sent: boolean; trace?: TraceCarrier }): Promise<void> {
    // Bounded: while Redis reconnects, BullMQ may wait for the connection rather than fail.
    const stored = this.#store(name, payload, meta, token, jobId, keyed, attempt);
    return raceStarvationAware(stored, ENQUEUE_TIMEOUT_MS, () => {
      attempt.expired = true;
      return new Error(`Redis did not answer within ${ENQUEUE_TIMEOUT_MS} ms`);
    }, false);
  }

  async #store(name: string, payload: unknown, meta: BackgroundJobMetadata, token: string, jobId: string, keyed: boolean, attempt: { expired: boolean; sent: boolean; trace?: TraceCarrier }): Promise<void> {
    const waiting: number = await this.#queue.getJobCountByTypes('waiting', 'delayed', 'prioritized', 'paused');
    // The caller was already answered (refused, or the job ran here): a late add would run it again.
    if (attempt.expired) return;
    if (waiting >= this.config.max_queue_size) {
      this.#rejected++;
      this.#logger.warn({ task: name, request_id: meta.request_id, max_queue_size: this.config.max_queue_size }, 'background queue full; job refused');
      throw new BackgroundQueueFullError(meta, this.config.max_queue_size);
    }
    // `trace`: the enqueuer's trace context, so the job's CONSUMER span joins the request's trace.
    const add = () => this.#queue.add(name, { payload: payload ?? null, metadata: meta, token, ...(attempt.trace && { trace: attempt.trace }) }, {
      jobId,
      attempts: this.#options.attempts ?? DEFAULT_BULLMQ_ATTEMPTS,
      backoff: this.#options.backoff ?? DEFAULT_BULLMQ_BACKOFF,
      removeOnComplete: this.#options.keepCompleted ?? DEFAULT_BULLMQ_KEEP_COMPLETED,
      removeOnFail: this.#options.keepFailed ?? DEFAULT_BULLMQ_KEEP_FAILED,
    });
    attempt.sent = true;
    await add();
    if (!keyed || attempt.expired) return;
    // A caller's key that already names a job: BullMQ kept that job and ignored this add. Fine (the
    // idempotent answer) unless that job is the inert copy of an enqueue answered 503: then replace it.
    const existing = await this.#queue.getJob(jobId);
    const theirs: unknown = existing?.data?.token;
    if (typeof theirs !== 'string' || theirs === token || attempt.expired) return;
    const verdict = await this.#fates.verdict(theirs);
    if (verdict !== 'refused' && verdict !== 'local') return;
    await existing.remove(); // throws while a worker holds it (discarding it): the caller retries
    if (!attempt.expired) await add();
  }

  #localExecutor(): BackgroundExecutor {
    if (!this.#local) {
      this.#local = new BackgroundExecutor(this.config, { logger: this.#logger, jobs: this.#jobs });
      this.#local.start();
    }
    return this.#local;
  }

  async #process(job: any, token: string, signal: AbortSignal): Promise<void> {
    this.#ran.add(job);
    const metadata = BackgroundJobMetadata.parse(job.data?.metadata ?? { name: job.name }, 'BackgroundJobMetadata') as BackgroundJobMetadata;
    if (!this.#jobs.has(job.name)) {
      // Another deployment enqueued a name this one does not know: no retry can fix that.
      const err = new this.#m.bullmq.UnrecoverableError(`No background job named ${JSON.stringify(job.name)} is registered on this instance (registered: ${this.#jobs.names().join(', ') || 'none'})`);
      this.#failed++;
      this.#logger.error({ task: job.name, request_id: metadata.request_id, job_id: job.id }, err.message);
      throw err;
    }
    const enqueueToken: unknown = job.data?.token;
    if (typeof enqueueToken === 'string') {
      const claim = await this.#claim(enqueueToken);
      if (claim === 'unanswered') return this.#handBackUnclaimed(job, token, metadata);
      if (!claim) {
        // Its enqueue was answered 503 (or ran it in that process): the copy that reached Redis late stays unrun.
        this.#health.count('background jobs answered 503 reached Redis late; discarded, not run', { task: job.name, job_id: job.id, request_id: metadata.request_id });
        return;
      }
    }
    const entry: Active = { job, metadata };
    this.#active.add(entry);
    try {
      const run = () => this.#jobs.get(job.name)(job.data?.payload ?? undefined, { signal, metadata, attempt: job.attemptsMade + 1, id: job.id });
      await (this.#tracing ? this.#tracing.consume(job.data?.trace, { name: job.name, system: 'bullmq', queue: job.queueName, id: job.id, attempt: job.attemptsMade + 1 }, run) : run());
      this.#succeeded++;
    } catch (err) {
      if (signal.aborted && signal.reason === HANDED_BACK) {
        try {
          await job.moveToWait(token);
          this.#handedBack.push(metadata);
        } catch (moveErr) {
          // Not when the drain already counted it, giving up on the worker (Redis away).
          if (!this.#abandoned.includes(metadata)) {
            this.#abandoned.push(metadata);
            this.#logger.warn({ err: moveErr, task: job.name, request_id: metadata.request_id }, 'background job could not be handed back; abandoned');
          }
        }
        throw new this.#m.bullmq.WaitingError();
      }
      this.#failed++;
      this.#logger.error({ err, task: job.name, request_id: metadata.request_id, job_id: job.id, attempt: job.attemptsMade + 1 }, 'background task failed');
      throw err;
    } finally {
      this.#active.delete(entry);
      if (this.#active.size === 0) for (const w of this.#idleWaiters.splice(0)) w();
    }
  }

  /**
   * The worker's claim on a job's token, retried while Redis is briefly away; 'unanswered' when it stays away
   * (CLAIM_TRIES tries, ENQUEUE_TIMEOUT_MS apart): the job is then handed back, not failed.
   */
  async #claim(token: string): Promise<boolean | 'unanswered'> {
    for (let i = 1; ; i++) {
      try {
        return await this.#fates.claim(token);
      } catch (err) {
        if (i >= CLAIM_TRIES) {
          this.#logger.debug({ err: errorText(err) }, 'background job claim: Redis did not answer');
          return 'unanswered';
        }
        await new Promise((r) => setTimeout(r, ENQUEUE_TIMEOUT_MS));
      }
    }
  }

  /**
   * A job taken from the queue whose claim Redis did not answer (its primary died under it: a failover takes
   * longer than the claim's retries). Failing it would lose an accepted job for a reason of keel's own (with
   * the default one attempt, for good): it goes back to waiting instead, or, if Redis cannot take even that,
   * stays active without a lock renewal, and the stall check puts it back (lockDuration + stalledInterval).
   */
  async #handBackUnclaimed(job: any, token: string, metadata: BackgroundJobMetadata): Promise<never> {
    const fields = { task: job.name, request_id: metadata.request_id, job_id: job.id };
    try {
      await job.moveToWait(token);
      this.#logger.warn(fields, 'background job taken while Redis did not answer its claim; handed back to the queue (it runs later)');
    } catch (err) {
      this.#logger.warn({ ...fields, reason: errorText(err) }, 'background job taken while Redis did not answer its claim; left to the stall check (it runs after lockDuration + stalledInterval)');
    }
    throw new this.#m.bullmq.WaitingError();
  }

  /** BullMQ found `jobId` stalled (lock expired): log it with its attempt, and whether it failed for good. */
  #stalled(jobId: string): Promise<void> {
    return logStall(this.#queue, jobId, this.#options, this.#logger);
  }

  /** Resolves when no job runs in this process (jobs waiting in Redis belong to every instance). */
  idle(): Promise<void> {
    const local = this.#local?.idle() ?? Promise.resolve();
    if (this.#active.size === 0) return local;
    return Promise.all([local, new Promise<void>((r) => this.#idleWaiters.push(r))]).then(() => undefined);
  }

  stats(): BackgroundStats {
    const l = this.#local?.stats();
    return {
      state: this.#state,
      queued: l?.queued ?? 0,
      running: this.#active.size + (l?.running ?? 0),
      succeeded: this.#succeeded + (l?.succeeded ?? 0),
      failed: this.#failed + (l?.failed ?? 0),
      rejected: this.#rejected + (l?.rejected ?? 0),
      abandoned: this.#abandoned.length + (l?.abandoned ?? 0),
    };
  }

  /**
   * Shutdown begins: take no more jobs from the shared queue (BullMQ's close() stops fetching at once
   * and resolves when the running jobs are done); the running ones continue.
   */
  beginShutdown(): void {
    this.#workerClosed ??= this.#worker ? this.#worker.close().catch((err: unknown) => this.#logger.warn({ err }, 'background worker close failed')) : Promise.resolve();
  }

  shutdown(): Promise<ShutdownReport> {
    this.#shutdown ??= this.#drain();
    return this.#shutdown;
  }

  async #drain(): Promise<ShutdownReport> {
    const settledBefore = this.#succeeded + this.#failed;
    this.#state = 'draining';
    this.beginShutdown();
    const local = this.#local?.shutdown();
    const ended = await workerEnded(this.#workerClosed!, () => this.idle(), () => this.#redisAway(), this.config.drain_timeout_secs * 1000);
    // Whether Redis answers now: a hand-back, and the queue's own close, are Redis commands.
    let away = ended === 'redis-away';
    if (ended !== 'closed' && this.#worker) {
      // Their signal fires; #process moves each back to waiting for another instance.
      if (this.#active.size) this.#worker.cancelAllJobs(HANDED_BACK);
      // With Redis away no hand-back can happen, and BullMQ's close() waits for a reconnection that may
      // never come: waiting HAND_BACK_GRACE_MS for it would hold the exit past the drain timeout (issue 36).
      away ||= await this.#redisAway();
      if (away || !(await settlesWithin(this.#workerClosed!, HAND_BACK_GRACE_MS))) {
        for (const { metadata } of this.#active) if (!this.#handedBack.includes(metadata) && !this.#abandoned.includes(metadata)) this.#abandoned.push(metadata);
        this.#logger.warn({ running: this.#active.size, redis: away ? 'away' : 'answering' }, 'background worker did not close (Redis unreachable?); giving up on it');
        void this.#worker.close(true).catch(() => undefined);
      }
    }
    this.#state = 'stopped';
    this.#health.close();
    this.#epoch?.close();
    this.#unwatch?.();
    if (!away) await settlesWithin(Promise.allSettled([this.#queue?.close()]), HAND_BACK_GRACE_MS);
    for (const c of this.#connections) c.disconnect();
    const localReport = await local;
    const abandoned = [...this.#abandoned, ...(localReport?.abandoned ?? [])];
    if (this.#handedBack.length) this.#logger.warn({ handed_back: this.#handedBack }, 'background jobs handed back to the queue at shutdown');
    if (abandoned.length) this.#logger.warn({ abandoned }, 'background jobs abandoned at shutdown');
    return { completed: this.#succeeded + this.#failed - settledBefore + (localReport?.completed ?? 0), abandoned, handedBack: [...this.#handedBack] };
  }

  /** Whether Redis is away: known down, or no answer to a PING within ENQUEUE_TIMEOUT_MS (extended once if this process was starved). */
  async #redisAway(): Promise<boolean> {
    if (!this.#health.available || !this.#producer) return true;
    try {
      await raceStarvationAware(this.#probe!(), ENQUEUE_TIMEOUT_MS, () => new Error(`Redis did not answer a PING within ${ENQUEUE_TIMEOUT_MS} ms`));
      return false;
    } catch {
      return true;
    }
  }

}