/**
 * Why a 503 to an enqueue can be trusted (issue 28: 11 of 331 jobs answered 503 ran later).
 *
 * An add that times out client-side may still reach Redis: a hung Redis executes it when it resumes,
 * and ioredis resends unanswered commands after a reconnect. keel cannot take the command back, so
 * it makes the stored job inert instead. Every enqueue carries a random token in the job's data; the
 * producer that answered 503 (or ran the job here, `passOnStoreError`) writes its verdict under the
 * token (`SET … NX`), and the worker claims the token (`SET … run NX`) before running the job. Whoever
 * writes first decides: a refused job is discarded unrun. The verdict travels behind the add on the
 * same connection (and is sent again first thing after a reconnect), while the worker needs several
 * round trips after the add before it claims, so in a hang or a restart the verdict wins. If a worker
 * ever claims first (Redis answered after the deadline over a slow network), the producer learns it
 * when its verdict is refused, and logs an error with the job id: never silent.
 */
import type { Logger } from 'pino';
import { errorText } from '../ops/store-health.js';

/** How long a verdict ('refused', 'local') is kept: 7 days, longer than a job waits in a sane queue. */
export const FATE_VERDICT_TTL_MS = 7 * 24 * 3600 * 1000;
/** How long a worker's claim is kept: 1 hour (it only has to outlive a late verdict). */
export const FATE_CLAIM_TTL_MS = 3600 * 1000;
/** Verdicts waiting for Redis to come back, at most: 100,000 (beyond, each one more is logged as an error). */
export const MAX_PENDING_VERDICTS = 100_000;

export type Verdict = 'refused' | 'local';

/* eslint-disable @typescript-eslint/no-explicit-any -- ioredis is optional */
type Client = any;

export class JobFates {
  readonly #client: Client;
  readonly #keyPrefix: string;
  readonly #logger: Logger;
  readonly #pending = new Map<string, { verdict: Verdict; jobId: string; task: string }>();
  readonly #inFlight = new Set<string>();

  /** `client`: the producer's connection (the one the adds go through, so verdicts follow them). */
  constructor(client: Client, keyPrefix: string, logger: Logger) {
    this.#client = client;
    this.#keyPrefix = keyPrefix;
    this.#logger = logger;
    // Synchronously on 'ready': before ioredis resends the commands the old connection left unanswered.
    client.on('ready', () => this.flush());
  }

  /** Verdicts not yet confirmed by Redis. */
  get pending(): number {
    return this.#pending.size;
  }

  /** The producer answered without storing (`refused`) or ran the job here (`local`): the stored copy must not run. */
  decide(token: string, verdict: Verdict, jobId: string, task: string): void {
    if (this.#pending.size >= MAX_PENDING_VERDICTS) {
      this.#logger.error({ job_id: jobId, task }, 'background queue: too many verdicts waiting for Redis; if this job reached Redis it may run although it was refused');
      return;
    }
    this.#pending.set(token, { verdict, jobId, task });
    this.#send(token);
  }

  /** Send every pending verdict again (after a reconnect, or once Redis answers again). */
  flush(): void {
    for (const token of this.#pending.keys()) this.#send(token);
  }

  #send(token: string): void {
    const entry = this.#pending.get(token);
    if (!entry || this.#inFlight.has(token)) return;
    this.#inFlight.add(token);
    const key = this.#keyPrefix + token;
    this.#client.set(key, entry.verdict, 'PX', FATE_VERDICT_TTL_MS, 'NX').then(async (reply: unknown) => {
      this.#pending.delete(token);
      if (reply === 'OK') return;
      const now = await this.#client.get(key).catch(() => undefined);
      if (now === 'run') {
        this.#logger.error({ job_id: entry.jobId, task: entry.task, verdict: entry.verdict }, 'background job answered 503 (or run here) reached Redis late and a worker ran it before the refusal: it ran anyway');
      }
    }, (err: unknown) => {
      // Still unsent or unanswered: kept, sent again on the next reconnect or when Redis answers.
      this.#logger.debug({ err: errorText(err), job_id: entry.jobId }, 'background queue: verdict not confirmed yet');
    }).finally(() => this.#inFlight.delete(token));
  }

  /** The worker's turn: true to run the job, false if its producer refused it. */
  async claim(token: string): Promise<boolean> {
    const key = this.#keyPrefix + token;
    if ((await this.#client.set(key, 'run', 'PX', FATE_CLAIM_TTL_MS, 'NX')) === 'OK') return true;
    const verdict = await this.#client.get(key);
    // 'run': a retry or a re-run after a stall of a job already claimed. null: the claim expired meanwhile.
    return verdict === 'run' || verdict === null;
  }

  /** The verdict on `token` (null: none). */
  verdict(token: string): Promise<string | null> {
    return this.#client.get(this.#keyPrefix + token);
  }
}
