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
  bullmqBackground, BackgroundStoreError, BULLMQ_PACKAGES, DEFAULT_BULLMQ_QUEUE, DEFAULT_BULLMQ_PREFIX, DEFAULT_BULLMQ_CLUSTER_PREFIX, DEFAULT_BULLMQ_ATTEMPTS,
  DEFAULT_BULLMQ_BACKOFF, DEFAULT_BULLMQ_KEEP_COMPLETED, DEFAULT_BULLMQ_KEEP_FAILED, ENQUEUE_TIMEOUT_MS, HAND_BACK_GRACE_MS,
  DEFAULT_BULLMQ_MAX_STALLED_COUNT, DEFAULT_BULLMQ_LOCK_DURATION_MS, DEFAULT_BULLMQ_STALLED_INTERVAL_MS, JOB_ID_PATTERN,
  type BullMqBackgroundOptions, type BackgroundBackend,
} from './bullmq.js';
export { FATE_VERDICT_TTL_MS, FATE_CLAIM_TTL_MS, MAX_PENDING_VERDICTS } from './fate.js';
export { DEFAULT_STORE_LOG_INTERVAL_MS, PROBE_INTERVAL_MS, type StoreState, type StoreStatus } from '../ops/store-health.js';
