/**
 * Background tasks: the executor the App starts when `background_tasks.enabled` is true; handlers
 * reach it as `data.background.enqueue(task, { name })`.
 */
export {
  BackgroundExecutor,
  BackgroundQueueFullError,
  BackgroundExecutorClosedError,
  DEFAULT_BACKGROUND_LOG_LEVEL,
  DEFAULT_QUEUE_FULL_RETRY_AFTER,
  DEFAULT_REFUSAL_LOG_INTERVAL_MS,
  type BackgroundTask,
  type BackgroundTaskConfigInput,
  type BackgroundJobMetadataInput,
  type BackgroundExecutorOptions,
  type BackgroundExecutorState,
  type BackgroundStats,
  type ShutdownReport,
} from './executor.js';
export { installBackground, backgroundOf, BACKGROUND_EXTENSION } from './install.js';
