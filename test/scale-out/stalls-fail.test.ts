// keel:integration
/**
 * Issue 36, item 2: a worker killed (SIGKILL) twice during one job. With maxStalledCount 1, BullMQ
 * marks the job to fail after its second stall and the next worker fails it without running it: keel
 * logs one error line for it, the failed counter (keel_background_jobs_processed_total) counts it, and
 * the stall it found is counted (keel_background_jobs_stalled_total).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { bullmqBackground, createApp } from '../../lib/index.js';
import { backgroundOf } from '../../lib/background/index.js';
import { NO_REDIS, startRedis, type RedisServer } from '../helpers/redis-server.js';
import { captureLogs, type LogRecord } from '../helpers/log-capture.js';
import { startInstance, type Instance } from './instances.js';

describe('when a worker is killed (SIGKILL) twice during one job', { skip: NO_REDIS }, () => {
  let redis: RedisServer;
  const workers: Instance[] = [];
  const closers: (() => Promise<unknown>)[] = [];
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const w of workers) await w.kill();
    for (const c of closers) await c().catch(() => undefined);
    await redis?.stop();
  }, { timeout: 60_000 });

  async function startedRuns(n: number): Promise<void> {
    for (let i = 0; i < 600 && (await redis.client.llen('test:started')) < n; i++) await sleep(50);
    assert.equal(await redis.client.llen('test:started'), n);
  }

  it('should log one error line for the job and count it failed once', { timeout: 120_000 }, async () => {
    const logs: LogRecord[] = [];
    const { logger, next } = captureLogs();
    void (async () => { for (;;) logs.push(await next()); })();
    const ran: number[] = [];
    const build = (runs: boolean) => createApp({ metrics: { default_metrics: false }, background_tasks: { enabled: true, drain_timeout_secs: 1 } }, (a) => {
      a.job('slow', (_p, ctx) => void ran.push(ctx.attempt));
      a.job('record', () => undefined);
    }, { logger, background: bullmqBackground({ connection: redis.url, worker: runs, lockDuration: 1000, stalledInterval: 1000 }) });
    const producer = build(false);
    (await producer.ready()).intoRouter();
    closers.push(() => backgroundOf(producer)!.shutdown());
    await backgroundOf(producer)!.enqueue('slow', { n: 1 }, { jobId: 'killed-twice' });

    // Two workers in turn take the job and are killed while running it.
    for (const name of ['W1', 'W2']) {
      const w = await startInstance({ REDIS_URL: redis.url, INSTANCE: name, MODE: 'worker', LOCK_MS: '1000' });
      workers.push(w);
      await startedRuns(workers.length);
      await w.kill();
    }
    assert.deepEqual((await redis.client.lrange('test:started', 0, -1)).map((s) => JSON.parse(s).instance), ['W1', 'W2']);

    // A third instance finds the second stall; BullMQ fails the job when a worker takes it.
    const rescuer = build(true);
    const router = (await rescuer.ready()).intoRouter();
    closers.unshift(() => backgroundOf(rescuer)!.shutdown());
    const isError = (l: LogRecord) => l.level === 50 && l.job_id === 'killed-twice';
    for (let i = 0; i < 600 && !logs.some(isError); i++) await sleep(50);
    await sleep(1500); // two more stall checks: no second error line may follow
    const errors = logs.filter((l) => (l.level as number) >= 50);
    assert.equal(errors.length, 1, JSON.stringify(logs.map((l) => [l.level, l.msg])));
    assert.equal(errors[0]!.job_id, 'killed-twice');
    assert.equal(errors[0]!.task, 'slow');
    assert.match(String(errors[0]!.msg), /failed for good/);
    assert.deepEqual(ran, [], 'the job was not run a third time');
    assert.equal(backgroundOf(rescuer)!.stats().failed, 1);
    const metrics = await request(router).get('/metrics');
    assert.match(metrics.text, /keel_background_jobs_processed_total\{outcome="failed"\} 1\n/);
    // W2 found the first stall (its own process); this instance the second, which failed the job.
    assert.match(metrics.text, /keel_background_jobs_stalled_total\{queue="keel-background"\} 1\n/);
  });
});
