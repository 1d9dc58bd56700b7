/**
 * Background tasks: the executor the App starts when `background_tasks.enabled` is true; handlers
 * reach it as `data.background.enqueue(task, { name })` or `enqueue('job_name', payload)` for jobs of `app.job()`.
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
  type BackgroundRunner,
} from './executor.js';
export { installBackground, backgroundOf, memoryBackground, BACKGROUND_EXTENSION } from './install.js';
export { JobRegistry, UnknownJobError, JOB_NAME_PATTERN, type JobHandler, type JobRunContext } from './jobs.js';
export {
  bullmqBackground, BackgroundStoreError, BULLMQ_PACKAGES, DEFAULT_BULLMQ_QUEUE, DEFAULT_BULLMQ_PREFIX, DEFAULT_BULLMQ_ATTEMPTS,
  DEFAULT_BULLMQ_BACKOFF, DEFAULT_BULLMQ_KEEP_COMPLETED, DEFAULT_BULLMQ_KEEP_FAILED, ENQUEUE_TIMEOUT_MS, HAND_BACK_GRACE_MS,
  type BullMqBackgroundOptions, type BackgroundBackend,
} from './bullmq.js';
