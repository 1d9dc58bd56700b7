// keel:integration
/**
 * A worker killed during a job (kill -9): the job's lock expires, another instance's stall check moves
 * it back to waiting and logs the stall with the job id and attempt, and the job runs again there
 * (at least once, docs/scaling.md "When a worker dies"). The stall is counted
 * (keel_background_jobs_stalled_total) though the job is retried, not failed (issue 36).
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

describe('when a worker is killed (SIGKILL) while it runs a job', { skip: NO_REDIS }, () => {
  let redis: RedisServer;
  let worker: Instance | undefined;
  const closers: (() => Promise<unknown>)[] = [];
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await worker?.kill();
    for (const c of closers) await c().catch(() => undefined);
    await redis?.stop();
  }, { timeout: 60_000 }); // a hang in teardown fails the file instead of holding the run

  it('should log the stall with the job id and attempt, and run the job again on another instance', { timeout: 90_000 }, async () => {
    worker = await startInstance({ REDIS_URL: redis.url, INSTANCE: 'W', MODE: 'worker', LOCK_MS: '1000' });
    // Enqueued from an instance that runs nothing, so the child worker takes it.
    const logs: LogRecord[] = [];
    const { logger, next } = captureLogs();
    void (async () => { for (;;) logs.push(await next()); })();
    const reran: { id: string | undefined; attempt: number }[] = [];
    const build = (runs: boolean) => createApp({ metrics: { default_metrics: false }, background_tasks: { enabled: true, drain_timeout_secs: 1 } }, (a) => {
      a.job('slow', (_p, ctx) => void reran.push({ id: ctx.id, attempt: ctx.attempt }));
      a.job('record', () => undefined);
    }, { logger, background: bullmqBackground({ connection: redis.url, worker: runs, lockDuration: 1000, stalledInterval: 1000 }) });
    const producer = build(false);
    (await producer.ready()).intoRouter();
    closers.push(() => backgroundOf(producer)!.shutdown());
    const id = await backgroundOf(producer)!.enqueue('slow', { n: 1 }, { jobId: 'killed-once' });
    assert.equal(id, 'killed-once');
    for (let i = 0; i < 600 && (await redis.client.llen('test:started')) === 0; i++) await sleep(50);
    assert.deepEqual(JSON.parse((await redis.client.lindex('test:started', 0))!), { instance: 'W', payload: { n: 1 }, id: 'killed-once', attempt: 1 });
    await worker.kill();

    // Another instance with a worker: its stall check finds the job once the dead worker's lock expires.
    const rescuer = build(true);
    const router = (await rescuer.ready()).intoRouter();
    closers.unshift(() => backgroundOf(rescuer)!.shutdown());
    for (let i = 0; i < 600 && reran.length === 0; i++) await sleep(50);
    assert.deepEqual(reran, [{ id: 'killed-once', attempt: 1 }]);
    const stall = logs.find((l) => /background job stalled/.test(String(l.msg)));
    assert.ok(stall, JSON.stringify(logs.map((l) => l.msg)));
    assert.equal(stall.job_id, 'killed-once');
    assert.equal(stall.task, 'slow');
    assert.equal(stall.attempt, 1);
    assert.equal(stall.level, 40);
    // Counted as a stall, and the run that followed as a success: nothing failed.
    for (let i = 0; i < 100 && backgroundOf(rescuer)!.stats().succeeded === 0; i++) await sleep(50);
    const metrics = (await request(router).get('/metrics')).text;
    assert.match(metrics, /keel_background_jobs_stalled_total\{queue="keel-background"\} 1\n/);
    assert.match(metrics, /keel_background_jobs_processed_total\{outcome="succeeded"\} 1\n/);
    assert.match(metrics, /keel_background_jobs_processed_total\{outcome="failed"\} 0\n/);
  });
});
