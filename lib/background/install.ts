/**
 * Installs the background executor on an App when `background_tasks.enabled` is true: started when
 * the router is built (spec), reachable by handlers as `data.background`, drained on shutdown. Which
 * executor: `AppOptions.background` (in process by default, BullMQ for several instances).
 */
import type { ProtocolHost as App } from '../app/plugin.js';
import { BackgroundExecutor, type BackgroundRunner } from './executor.js';
import type { BackgroundBackend } from './bullmq.js';
import { JobRegistry } from './jobs.js';
import { jobTracing } from '../observability/job-spans.js';

/** Key of the executor in `app.extensions` (the pipeline hands it to handlers as `data.background`). */
export const BACKGROUND_EXTENSION = 'background';

/** The default backend: the in-process BackgroundExecutor (jobs live and die with this process). */
export const memoryBackground: BackgroundBackend = Object.freeze<BackgroundBackend>({
  kind: 'memory',
  durable: false,
  load: async () => undefined,
  create: (config, context) => new BackgroundExecutor(config, context),
});

export function installBackground(app: App, backend: BackgroundBackend = memoryBackground, jobs: JobRegistry = new JobRegistry()): BackgroundRunner | undefined {
  const config = app.config.background_tasks;
  const existing = app.extensions.get(BACKGROUND_EXTENSION) as BackgroundRunner | undefined;
  if (!config.enabled || existing) return existing;
  // Spans on: PRODUCER at enqueue, CONSUMER at run (lib/observability/job-spans.ts).
  const executor = backend.create(config, { logger: app.logger, jobs, tracing: jobTracing(app.config.opentelemetry) });
  executor.start();
  app.extensions.set(BACKGROUND_EXTENSION, executor);
  // Beside the HTTP drain: a durable worker stops taking shared jobs (another instance takes them).
  if (executor.beginShutdown) app.preShutdown(() => executor.beginShutdown!());
  app.onShutdown(async () => {
    const report = await executor.shutdown();
    app.logger.info({ completed: report.completed, abandoned: report.abandoned.length, ...(report.handedBack ? { handed_back: report.handedBack.length } : {}) }, 'background executor drained');
  });
  return executor;
}

/** The App's executor, when background tasks are enabled and the router was built. */
export function backgroundOf(app: App): BackgroundRunner | undefined {
  const ex = app.extensions.get(BACKGROUND_EXTENSION);
  return ex && typeof (ex as BackgroundRunner).enqueue === 'function' ? (ex as BackgroundRunner) : undefined;
}
