/**
 * Which background job is running, and a process-wide `unhandledRejection` guard for job code.
 *
 * A job may start a promise it never awaits; if that promise rejects, Node (15+) turns the
 * rejection into an uncaught exception and the server dies. Jobs run inside an AsyncLocalStorage
 * context, which Node restores when it emits `unhandledRejection`, so the guard can tell a job's
 * stray rejection (logged by its executor, the process lives) from anyone else's (left to the
 * process's own policy, below).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** What a running job's context carries. */
export interface JobContext {
  /** Called with the reason of an unhandled rejection that started inside the job. */
  onStrayRejection(reason: unknown): void;
}

export const jobContext = new AsyncLocalStorage<JobContext>();

let users = 0;

/** Node's `--unhandled-rejections` mode in effect (default `throw`). */
function rejectionMode(): string {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const flag = flags.reverse().find((f) => f.startsWith('--unhandled-rejections='));
  return flag ? flag.slice('--unhandled-rejections='.length) : 'throw';
}

function guard(reason: unknown): void {
  const job = jobContext.getStore();
  if (job) {
    job.onStrayRejection(reason);
    return;
  }
  // Not ours. If another listener exists it decides; otherwise our listener must not silence a
  // rejection Node would have raised: re-raise it as an uncaught exception, as Node's default does.
  if (process.listenerCount('unhandledRejection') > 1) return;
  const mode = rejectionMode();
  if (mode === 'throw' || mode === 'strict') {
    process.nextTick(() => {
      throw reason;
    });
  } else if (mode === 'warn' || mode === 'warn-with-error-code') {
    process.emitWarning(`Unhandled promise rejection: ${String(reason)}`, 'UnhandledPromiseRejectionWarning');
    if (mode === 'warn-with-error-code') process.exitCode = 1;
  }
}

/** Install the guard (reference-counted: one listener however many executors run). */
export function acquireRejectionGuard(): void {
  if (users++ === 0) process.on('unhandledRejection', guard);
}

export function releaseRejectionGuard(): void {
  if (users > 0 && --users === 0) process.off('unhandledRejection', guard);
}
