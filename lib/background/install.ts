/**
 * Installs the background executor on an App when `background_tasks.enabled` is true: started when
 * the router is built (spec), reachable by handlers as `data.background`, drained on shutdown.
 */
import type { ProtocolHost as App } from '../plugin.js';
import { BackgroundExecutor } from './executor.js';

/** Key of the executor in `app.extensions` (the pipeline hands it to handlers as `data.background`). */
export const BACKGROUND_EXTENSION = 'background';

export function installBackground(app: App): void {
  const config = app.config.background_tasks;
  if (!config.enabled || app.extensions.has(BACKGROUND_EXTENSION)) return;
  const executor = new BackgroundExecutor(config, { logger: app.logger });
  executor.start();
  app.extensions.set(BACKGROUND_EXTENSION, executor);
  app.onShutdown(async () => {
    const report = await executor.shutdown();
    app.logger.info({ completed: report.completed, abandoned: report.abandoned.length }, 'background executor drained');
  });
}

/** The App's executor, when background tasks are enabled and the router was built. */
export function backgroundOf(app: App): BackgroundExecutor | undefined {
  const ex = app.extensions.get(BACKGROUND_EXTENSION);
  return ex instanceof BackgroundExecutor ? ex : undefined;
}
