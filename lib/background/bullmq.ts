/**
 * Durable background jobs in Redis through BullMQ: the same `data.background` API and
 * BackgroundTaskConfig semantics as the in-process executor, shared by every instance.
 *
 * - Jobs are named functions registered at start-up (`app.job(name, fn)`, lib/background/jobs.ts);
 *   `enqueue(name, payload)` stores name, JSON payload and metadata (name, request id) in the queue.
 *   A closure is refused: it cannot cross processes.
 * - `max_queue_size`: jobs waiting in the shared queue (waiting, delayed, prioritized, paused), counted
 *   before each add; one more is a BackgroundQueueFullError (503). Instances count concurrently, so
 *   the bound can be overshot by the adds in flight at that moment (at most one per concurrent request).
 * - `max_concurrent_tasks`: the worker's concurrency in this process.
 * - Retries: `attempts` with `backoff` (BullMQ's exponential or fixed), off by default (1 attempt).
 * - Shutdown: when it begins the worker stops taking jobs (another instance takes the waiting ones);
 *   after HTTP has drained, running jobs get `drain_timeout_secs` to finish, then their AbortSignal
 *   fires and they are moved back to waiting (handed back). Only a job that cannot be handed back
 *   (Redis gone) is reported abandoned.
 * bullmq and ioredis are optional peer dependencies, loaded by `app.ready()` (docs/scaling.md).
 */
import { AppError } from '../http/errors.js';
import { missingPackages, missingPackagesError } from '../ops/packages.js';
import { checkOptions, type BullMqBackgroundOptions } from './bullmq-options.js';
import type { BackgroundBackend, Modules } from './bullmq-contract.js';
import { BullMqExecutor } from './bullmq-executor.js';

export * from './bullmq-options.js';
export { BackgroundStoreError, ENQUEUE_TIMEOUT_MS, HAND_BACK_GRACE_MS, type BackgroundBackend, type BackendContext } from './bullmq-contract.js';

/** Packages the BullMQ executor needs (optional peer dependencies of keel). */
export const BULLMQ_PACKAGES: readonly string[] = ['bullmq@6', 'ioredis@6'];

// Loaded by load() (Modules, bullmq-contract.ts, is typed loosely for the optional packages).
let modules: Modules | undefined;

async function loadModules(): Promise<Modules> {
  if (modules) return modules;
  const missing = missingPackages(BULLMQ_PACKAGES);
  if (missing.length) throw missingPackagesError('The BullMQ background executor (AppOptions.background)', missing);
  const [bullmq, ioredis] = await Promise.all([import('bullmq'), import('ioredis')]);
  modules = { bullmq, ioredis };
  return modules;
}

/**
 * The BullMQ backend for `createApp(config, setup, { background: bullmqBackground({ connection }) })`.
 * Options are checked now (AppError naming the option); bullmq and ioredis are loaded by `app.ready()`.
 *
 * @example
 * const app = createApp({ background_tasks: { enabled: true } }, (app) => {
 *   app.job('send_welcome', async ({ userId }, { signal }) => { await mailer.welcome(userId, { signal }); });
 *   app.post('/users', async (data) => { await data.background!.enqueue('send_welcome', { userId: 7 }); return { ok: true }; });
 * }, { background: bullmqBackground({ connection: process.env.REDIS_URL! }) });
 */
export function bullmqBackground(options: BullMqBackgroundOptions): BackgroundBackend {
  checkOptions(options);
  return {
    kind: 'bullmq',
    durable: true,
    load: async () => void (await loadModules()),
    create(config, context) {
      if (!modules) throw new AppError('Server', 'The BullMQ background executor is not loaded: await app.ready() first (app.listen() and app.runWorker() do it)');
      return new BullMqExecutor(config, options, context, modules);
    },
  };
}
