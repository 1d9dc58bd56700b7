// keel:integration
/**
 * Durable background jobs (BullMQ) across keel processes: a job queued on instance A while A is
 * stopping is run later by instance B, a worker-only process (`app.runWorker()`), with the request id
 * of the request that queued it; with Redis down, enqueue answers 503 (fail closed, the default) or
 * runs the job in the process (`passOnStoreError: true`). docs/scaling.md.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { NO_REDIS, startRedis, type RedisServer } from '../helpers/redis-server.js';
import { startInstance, type Instance } from './instances.js';

async function done(redis: RedisServer, count: number, ms = 15_000): Promise<{ instance: string; payload: unknown; request_id: string | null }[]> {
  for (let i = 0; i < ms / 50; i++) {
    const rows = await redis.client.lrange('test:done', 0, -1);
    if (rows.length >= count) return rows.map((r) => JSON.parse(r));
    await sleep(50);
  }
  return (await redis.client.lrange('test:done', 0, -1)).map((r) => JSON.parse(r));
}

describe('when a job is queued on an instance that is stopping', { skip: NO_REDIS }, () => {
  let redis: RedisServer;
  const started: Instance[] = [];

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await Promise.all(started.map((i) => i.kill()));
    await redis?.stop();
  });

  it('should keep the job in Redis and let a worker-only instance run it', async () => {
    const a = await startInstance({ REDIS_URL: redis.url, INSTANCE: 'A' });
    started.push(a);
    // The handler enqueues 400 ms after the request arrived; SIGTERM comes in between.
    const answer = fetch(`${a.url}/enqueue?delay=400&n=1`, { method: 'POST', headers: { 'x-request-id': 'req-from-A' } });
    await sleep(150);
    const exited = a.stop();
    const res = await answer;
    assert.equal(res.status, 202, a.output());
    assert.deepEqual(await res.json(), { queued: true, instance: 'A' });
    assert.equal(await exited, 0, a.output());
    // A stopped taking jobs when its shutdown began: the job waits in Redis, no process is running.
    assert.deepEqual(await redis.client.lrange('test:done', 0, -1), []);

    const b = await startInstance({ REDIS_URL: redis.url, INSTANCE: 'B', MODE: 'worker' });
    started.push(b);
    const rows = await done(redis, 1);
    assert.deepEqual(rows, [{ instance: 'B', payload: { n: 1 }, request_id: 'req-from-A', attempt: 1 }]);
    assert.equal(await b.stop(), 0, b.output());
  });

  it('should share the jobs of two running instances without running one twice', async () => {
    await redis.client.del('test:done');
    const [a, b] = await Promise.all([
      startInstance({ REDIS_URL: redis.url, INSTANCE: 'A' }),
      startInstance({ REDIS_URL: redis.url, INSTANCE: 'B', MODE: 'worker' }),
    ]);
    started.push(a, b);
    const statuses = await Promise.all(Array.from({ length: 40 }, (_, n) => fetch(`${a.url}/enqueue?n=${n}`, { method: 'POST' }).then((r) => r.status)));
    assert.deepEqual([...new Set(statuses)], [202]);
    const rows = await done(redis, 40);
    assert.equal(rows.length, 40);
    assert.deepEqual(rows.map((r) => (r.payload as { n: number }).n).sort((x, y) => x - y), Array.from({ length: 40 }, (_, n) => n));
    await Promise.all([a.stop(), b.stop()]);
  });

  describe('when Redis goes down', () => {
    let closed: Instance;
    let open: Instance;
    before(async () => {
      await redis.client.del('test:done');
      [closed, open] = await Promise.all([
        startInstance({ REDIS_URL: redis.url, INSTANCE: 'closed' }),
        startInstance({ REDIS_URL: redis.url, INSTANCE: 'open', PASS_ON_STORE_ERROR: '1' }),
      ]);
      started.push(closed, open);
      await redis.kill();
    });

    it('should refuse the job with a 503 problem by default', async () => {
      const res = await fetch(`${closed.url}/enqueue?n=7`, { method: 'POST', signal: AbortSignal.timeout(10_000) });
      assert.equal(res.status, 503);
      assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
      assert.equal(res.headers.get('retry-after'), '1');
    });
    it('should still stop, within drain_timeout_secs and the hand-back grace, while Redis is down', async () => {
      const t0 = performance.now();
      const code = await closed.stop();
      const seconds = (performance.now() - t0) / 1000;
      assert.equal(code, 0, closed.output());
      // The fixture's drain_timeout_secs is 5; HAND_BACK_GRACE_MS bounds the worker's and the queue's close (5 s each).
      assert.ok(seconds < 16, `stopped after ${seconds.toFixed(1)} s`);
    });
    it('should run the job in the process with passOnStoreError: true', async () => {
      const res = await fetch(`${open.url}/enqueue?n=8`, { method: 'POST' });
      assert.equal(res.status, 202);
      // The job ran here (its own write to Redis fails while Redis is down, so start it again to look).
      await sleep(200);
      await redis.start();
      const rows = await done(redis, 1, 5000);
      assert.deepEqual(rows.map((r) => [r.instance, r.payload]), [['open', { n: 8 }]], JSON.stringify(rows));
    });
  });
});
