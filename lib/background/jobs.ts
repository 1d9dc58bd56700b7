/**
 * Named background jobs: functions registered at start-up under a name (`app.job(name, fn)`), enqueued
 * by name with a JSON payload (`data.background.enqueue('send_welcome', { userId })`).
 *
 * A closure cannot cross processes: a durable queue (BullMQ, lib/background/bullmq.ts) stores the
 * job's name and payload in Redis, and whichever instance takes it looks the name up in its own
 * registry. Every instance therefore registers the same names at start-up; the in-process executor
 * accepts named jobs too, so switching executors is configuration, not code (docs/scaling.md).
 */
import { AppError } from '../http/errors.js';
import type { BackgroundJobMetadata } from '../records/protocol.js';

/** What a named job receives besides its payload. */
export interface JobRunContext {
  /** Aborts when shutdown gives up on the job (drain timeout); the job is then handed back or abandoned. */
  readonly signal: AbortSignal;
  /** Name and request id of the request that enqueued it. */
  readonly metadata: BackgroundJobMetadata;
  /** 1 for the first run, 2 for the first retry, … (always 1 in process: retries need a durable queue). */
  readonly attempt: number;
  /** Id of the job in its queue (the caller's `jobId`, or one the BullMQ executor made), or the `jobId` given in process (else undefined). */
  readonly id: string | undefined;
}

/** A named job: `payload` is the JSON value given to `enqueue(name, payload)`. */
export type JobHandler<P = unknown> = (payload: P, ctx: JobRunContext) => unknown;

/** Job names: letters, digits, `_ . : -`, 1 to 128 characters (they become BullMQ job names and log fields). */
export const JOB_NAME_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

/** The named jobs of one App (or one executor used alone). */
export class JobRegistry {
  readonly #jobs = new Map<string, JobHandler>();

  /** Register `fn` under `name`. A bad name, a duplicate or a non-function: AppError('Server') now, at start-up. */
  register(name: string, fn: JobHandler): void {
    if (typeof name !== 'string' || !JOB_NAME_PATTERN.test(name)) {
      throw new AppError('Server', `Background job name ${JSON.stringify(name)} is not valid: use 1 to 128 letters, digits, "_", ".", ":" or "-"`);
    }
    if (typeof fn !== 'function') throw new AppError('Server', `Background job "${name}" must be a function (payload, ctx) => …, got ${typeof fn}`);
    if (this.#jobs.has(name)) throw new AppError('Server', `Background job "${name}" is already registered`);
    this.#jobs.set(name, fn);
  }

  has(name: string): boolean {
    return this.#jobs.has(name);
  }

  get size(): number {
    return this.#jobs.size;
  }

  names(): string[] {
    return [...this.#jobs.keys()];
  }

  /** The job `name`; an unregistered name throws UnknownJobError. */
  get(name: string): JobHandler {
    const fn = this.#jobs.get(name);
    if (!fn) throw new UnknownJobError(name, this.names());
    return fn;
  }
}

/**
 * `enqueue(name)` with a name no `app.job()` registered. A programming error (500 without internals
 * if it reaches a client), raised where the job is enqueued, not later on a job machine.
 */
export class UnknownJobError extends AppError {
  readonly jobName: string;
  constructor(name: string, known: readonly string[]) {
    super('Server', `No background job named ${JSON.stringify(name)} is registered (${known.length ? `registered: ${known.join(', ')}` : 'none is registered'}); register it at start-up with app.job(${JSON.stringify(name)}, (payload, ctx) => …) on every instance`);
    this.jobName = name;
  }
}

/** Payloads cross processes as JSON: refuse what JSON would silently change (functions, undefined at the top, cycles, BigInt). */
export function checkPayload(name: string, payload: unknown): void {
  if (payload === undefined) return;
  const kind = typeof payload;
  if (kind === 'function' || kind === 'symbol' || kind === 'bigint') {
    throw new TypeError(`The payload of background job "${name}" must be a JSON value, got a ${kind}`);
  }
  try {
    JSON.stringify(payload);
  } catch (err) {
    throw new TypeError(`The payload of background job "${name}" must be a JSON value: ${(err as Error).message}`);
  }
}
