/** Helpers of the BullMQ executor (lib/background/bullmq.ts): stall logging, bounded waits. */
import type { Logger } from 'pino';
import { PROBE_INTERVAL_MS } from '../ops/store-health.js';
import { DEFAULT_BULLMQ_LOCK_DURATION_MS, DEFAULT_BULLMQ_MAX_STALLED_COUNT, type BullMqBackgroundOptions } from './bullmq-options.js';

/** Whether `p` settles within `ms` (it keeps running either way). */
export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  const done = p.then(() => true, () => true);
  const result = await Promise.race([done, late]);
  clearTimeout(timer);
  return result;
}

/**
 * The drain's wait (at most `ms`, the drain timeout) for a worker to close once its running jobs are
 * done: 'closed'; 'redis-away' as soon as no job runs (`idle`) and Redis does not answer (`away`):
 * BullMQ's close() would wait for a reconnection and nothing is left to hand back (issue 36: the exit
 * waited for it); 'timeout' when jobs still run at the deadline.
 */
export async function workerEnded(closing: Promise<unknown>, idle: () => Promise<void>, away: () => Promise<boolean>, ms: number): Promise<'closed' | 'redis-away' | 'timeout'> {
  let over = false;
  const closed = closing.then(() => 'closed' as const, () => 'closed' as const);
  const idleAndAway = (async () => {
    await idle();
    while (!over) {
      if (await away()) return 'redis-away' as const;
      // Redis answers: close() is finishing; look again unless it has.
      await new Promise((r) => setTimeout(r, PROBE_INTERVAL_MS).unref());
    }
    return 'timeout' as const;
  })();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), ms)));
  try {
    return await Promise.race([closed, idleAndAway, late]);
  } finally {
    over = true;
    clearTimeout(timer);
  }
}

/**
 * Log a job BullMQ found stalled (its lock expired: the worker died or blocked its event loop past
 * lockDuration), with its id, name, request id and attempt, at warn: moved back to waiting (it runs
 * again), or failed for good (more than maxStalledCount stalls; the failure is logged as an error once). Before, keel
 * logged nothing and jobs failed silently (issue 28).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- bullmq is optional: its types stay out of keel's declarations
export async function logStall(queue: any, jobId: string, options: BullMqBackgroundOptions, logger: Logger): Promise<void> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let job: any;
  let state = 'unknown';
  try {
    job = await queue.getJob(jobId);
    state = job ? await job.getState() : 'missing';
  } catch {
    // Redis away again: log what is known.
  }
  const fields = {
    job_id: jobId, task: job?.name, request_id: job?.data?.metadata?.request_id, attempt: (job?.attemptsMade ?? 0) + 1,
    stalled_count: job?.stalledCounter, max_stalled_count: options.maxStalledCount ?? DEFAULT_BULLMQ_MAX_STALLED_COUNT, state,
    lock_duration_ms: options.lockDuration ?? DEFAULT_BULLMQ_LOCK_DURATION_MS,
  };
  // BullMQ 6 moves it back to waiting marked to fail ("deferred failure"); the worker that takes it fails
  // it without running it, which may already have happened: that failure is the job's one error line
  // (bullmq.ts, 'failed'), so the stall itself is a warn.
  if (state === 'failed' || job?.deferredFailure) logger.warn({ ...fields, will_run: false }, 'background job stalled more than maxStalledCount times (its worker died or blocked its event loop past lockDuration); it is failed, not run again');
  else logger.warn(fields, 'background job stalled (its worker died or blocked its event loop past lockDuration); moved back to waiting: it will run again');
}
