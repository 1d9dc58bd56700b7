/**
 * Options of `bullmqBackground()` (lib/background/bullmq.ts): their defaults as named constants, and
 * the check that refuses a bad one when the factory runs.
 */
import { AppError } from '../http/errors.js';
import { connectionProblem, isClusterConnection, type RedisConnection } from '../ops/redis-connection.js';

/** Default BullMQ queue name: 'keel-background'. */
export const DEFAULT_BULLMQ_QUEUE = 'keel-background';
/** Default prefix of BullMQ's Redis keys: 'keel:bull'. */
export const DEFAULT_BULLMQ_PREFIX = 'keel:bull';
/**
 * Default prefix on a Redis Cluster: '{keel:bull}'. The braces are a hash tag: every key of the queue
 * lands in one slot, as BullMQ's multi-key scripts require (BullMQ's own advice for clusters).
 */
export const DEFAULT_BULLMQ_CLUSTER_PREFIX = '{keel:bull}';
/** Default attempts per job: 1 (no retry). */
export const DEFAULT_BULLMQ_ATTEMPTS = 1;
/** Default backoff between attempts: exponential from 1000 ms. */
export const DEFAULT_BULLMQ_BACKOFF = Object.freeze({ type: 'exponential' as const, delay: 1000 });
/** Completed jobs kept in Redis (newest first): 1000. */
export const DEFAULT_BULLMQ_KEEP_COMPLETED = 1000;
/** Failed jobs kept in Redis: 5000. */
export const DEFAULT_BULLMQ_KEEP_FAILED = 5000;

/**
 * Times a running job may be found stalled (its lock expired: the worker was killed, or blocked its
 * event loop past `lockDuration`) and moved back to waiting; one more and it fails
 * ("job stalled more than allowable limit"): 1 (BullMQ's default).
 */
export const DEFAULT_BULLMQ_MAX_STALLED_COUNT = 1;
/** How long a worker's lock on a running job lasts, renewed every half of it, ms: 30000 (BullMQ's default). */
export const DEFAULT_BULLMQ_LOCK_DURATION_MS = 30_000;
/** How often workers look for stalled jobs, ms: 30000 (BullMQ's default). */
export const DEFAULT_BULLMQ_STALLED_INTERVAL_MS = 30_000;
/**
 * A job id the caller gives (`enqueue(name, payload, { jobId })`): 1 to 200 letters, digits, `_ . -`,
 * not only digits (BullMQ reserves integer ids and refuses ':').
 */
export const JOB_ID_PATTERN = /^(?!\d+$)[A-Za-z0-9_.-]{1,200}$/;

export interface BullMqBackgroundOptions {
  /**
   * Redis URL (`redis://127.0.0.1:6379`), ioredis options (`{ host, port, password, tls }`), or a Redis
   * Cluster's seed nodes (`{ cluster: ['10.0.0.1:6379', …], clusterOptions }`, docs/scaling.md#redis-cluster).
   */
  connection: RedisConnection;
  /** Queue name; instances sharing it share jobs. Default {@link DEFAULT_BULLMQ_QUEUE} ('keel-background'). */
  queueName?: string;
  /**
   * Prefix of BullMQ's keys. Default {@link DEFAULT_BULLMQ_PREFIX} ('keel:bull'); on a cluster
   * {@link DEFAULT_BULLMQ_CLUSTER_PREFIX} ('{keel:bull}'), and a prefix given for a cluster must hold a hash tag (`{…}`).
   */
  prefix?: string;
  /** Run jobs in this process. false: a web-only instance that only enqueues. Default true. */
  worker?: boolean;
  /** Runs per job, first included. Default {@link DEFAULT_BULLMQ_ATTEMPTS} (1: no retry). */
  attempts?: number;
  /** Wait between attempts. Default {@link DEFAULT_BULLMQ_BACKOFF} (exponential, 1000 ms). */
  backoff?: { type: 'exponential' | 'fixed'; delay: number };
  /** Completed / failed jobs kept in Redis. Defaults 1000 / 5000. */
  keepCompleted?: number;
  keepFailed?: number;
  /**
   * When Redis fails at enqueue: true runs the job in this process instead (fail open: no durability,
   * no retries), false refuses it with a 503 problem (fail closed). Default false.
   */
  passOnStoreError?: boolean;
  /**
   * Stall recoveries per job before it fails. Default {@link DEFAULT_BULLMQ_MAX_STALLED_COUNT} (1): a
   * worker killed during a job, then again during its re-run, fails the job. Each stall is logged.
   */
  maxStalledCount?: number;
  /**
   * A worker's lock on a running job, ms. Default {@link DEFAULT_BULLMQ_LOCK_DURATION_MS} (30000). A job
   * whose worker dies runs again (elsewhere) after at most about `lockDuration + stalledInterval`.
   */
  lockDuration?: number;
  /** How often stalled jobs are looked for, ms. Default {@link DEFAULT_BULLMQ_STALLED_INTERVAL_MS} (30000). */
  stalledInterval?: number;
}

export function checkOptions(o: BullMqBackgroundOptions): void {
  const bad = (key: string, value: unknown, expected: string): never => {
    throw new AppError('Server', `Invalid bullmqBackground option ${key}: expected ${expected}, got ${JSON.stringify(value)}`);
  };
  if (typeof o !== 'object' || o === null) bad('(options)', o, 'an object with a connection');
  const known = ['connection', 'queueName', 'prefix', 'worker', 'attempts', 'backoff', 'keepCompleted', 'keepFailed', 'passOnStoreError', 'maxStalledCount', 'lockDuration', 'stalledInterval'];
  for (const k of Object.keys(o)) if (!known.includes(k)) bad(k, (o as unknown as Record<string, unknown>)[k], `one of ${known.join(', ')}`);
  const problem = connectionProblem(o.connection);
  if (problem) bad('connection', o.connection, problem);
  if (o.queueName !== undefined && !(typeof o.queueName === 'string' && /^[A-Za-z0-9_.-]{1,100}$/.test(o.queueName))) bad('queueName', o.queueName, 'letters, digits, "_", "." or "-"');
  if (o.prefix !== undefined && !(typeof o.prefix === 'string' && o.prefix.length > 0)) bad('prefix', o.prefix, 'a non-empty string');
  // Without a hash tag BullMQ's scripts fail with CROSSSLOT at the first enqueue: refuse it now.
  if (o.prefix !== undefined && isClusterConnection(o.connection) && !/\{[^{}]+\}/.test(o.prefix)) bad('prefix', o.prefix, `a hash tag on a cluster, e.g. "{${o.prefix}}"`);
  if (o.worker !== undefined && typeof o.worker !== 'boolean') bad('worker', o.worker, 'true or false');
  if (o.attempts !== undefined && !(Number.isInteger(o.attempts) && o.attempts >= 1)) bad('attempts', o.attempts, 'an integer ≥ 1');
  if (o.backoff !== undefined && !(typeof o.backoff === 'object' && o.backoff !== null && ['exponential', 'fixed'].includes(o.backoff.type) && Number.isInteger(o.backoff.delay) && o.backoff.delay >= 0)) {
    bad('backoff', o.backoff, "{ type: 'exponential' | 'fixed', delay: integer ms ≥ 0 }");
  }
  for (const k of ['keepCompleted', 'keepFailed'] as const) if (o[k] !== undefined && !(Number.isInteger(o[k]) && o[k]! >= 0)) bad(k, o[k], 'an integer ≥ 0');
  if (o.passOnStoreError !== undefined && typeof o.passOnStoreError !== 'boolean') bad('passOnStoreError', o.passOnStoreError, 'true or false');
  if (o.maxStalledCount !== undefined && !(Number.isInteger(o.maxStalledCount) && o.maxStalledCount >= 0)) bad('maxStalledCount', o.maxStalledCount, 'an integer ≥ 0');
  for (const k of ['lockDuration', 'stalledInterval'] as const) if (o[k] !== undefined && !(Number.isInteger(o[k]) && o[k]! >= 1000)) bad(k, o[k], 'an integer number of ms ≥ 1000');
}

