/** What the BullMQ backend (lib/background/bullmq.ts) shares with its executor (bullmq-executor.ts) and the App: the backend contract, the store error, the timing constants. */
import type { Logger } from 'pino';
import { HttpError } from '../http/errors.js';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from '../ops/redis-policy.js';
import type { BackgroundJobMetadata, BackgroundTaskConfig } from '../records/protocol.js';
import type { BackgroundRunner } from './executor.js';
import type { JobRegistry } from './jobs.js';
import type { JobTracing } from '../observability/job-spans.js';

/** How the App creates its background executor (`AppOptions.background`). Default: in process. */
export interface BackgroundBackend {
  /** 'memory' or 'bullmq'. */
  readonly kind: string;
  /** Whether jobs survive this process and are shared between instances (worker-only mode needs it). */
  readonly durable: boolean;
  /** Load third-party packages (`app.ready()`); rejects with an AppError naming `npm install …`. */
  load(): Promise<void>;
  create(config: Readonly<BackgroundTaskConfig>, context: BackendContext): BackgroundRunner;
}

/** What the App hands a backend: its logger, its named jobs, and its job spans when spans are on. */
export interface BackendContext {
  logger: Logger;
  jobs: JobRegistry;
  tracing?: JobTracing;
}

/** Redis is unreachable and the job was not stored: 503 (fail closed, `passOnStoreError: false`). */
export class BackgroundStoreError extends HttpError {
  readonly metadata: BackgroundJobMetadata;
  /** The id the job would have had; it will not run under it (a retry may reuse it as its `jobId`). */
  readonly jobId: string;
  constructor(metadata: BackgroundJobMetadata, cause: unknown, jobId = '') {
    super(503, 'The background queue is unavailable; the job was not queued and will not run; try again later', { code: 'KEEL_SERVICE_UNAVAILABLE', extensions: { code: 'KEEL_SERVICE_UNAVAILABLE' }, headers: { 'Retry-After': '1' }, expected: true, cause });
    this.metadata = metadata;
    this.jobId = jobId;
  }
}

/** Longest wait for Redis at enqueue before the job is refused (or run here with passOnStoreError): 500 ms (DEFAULT_REDIS_COMMAND_TIMEOUT_MS). */
export const ENQUEUE_TIMEOUT_MS = DEFAULT_REDIS_COMMAND_TIMEOUT_MS;

/** After the drain timeout, how long aborted jobs get to be moved back to waiting (and the queue to close): 5000 ms. */
export const HAND_BACK_GRACE_MS = 5000;

// Loaded by load(); typed loosely so keel's declarations never reference the optional packages.
/* eslint-disable @typescript-eslint/no-explicit-any */
export interface Modules { bullmq: any; ioredis: any }
