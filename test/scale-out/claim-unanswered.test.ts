// keel:integration
/**
 * A worker takes a job and Redis does not answer its claim (lib/background/fate.ts): the job is handed back to
 * the queue and runs once the claim is answered; it is not failed (with the default one attempt, failing it
 * lost an accepted job for good: what a failover slower than the claim's retries did). The claim is made to
 * fail by the one thing a test can arrange without stopping Redis for the worker's fetch too: a key of another
 * type under the job's claim key (GET answers WRONGTYPE), removed afterwards. docs/scaling.md.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { NO_REDIS, startRedis, type RedisServer } from '../helpers/redis-server.js';
import { startInstance, type Instance } from './instances.js';

const QUEUE = 'keel:bull:keel-background';

describe('when Redis does not answer the claim of a job a worker took', { skip: NO_REDIS }, () => {
  let redis: RedisServer;
  const started: Instance[] = [];

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await Promise.all(started.map((i) => i.kill()));
    await redis?.stop();
  });

  it('should hand the job back to the queue, not fail it, and run it once the claim is answered', async () => {
    const a = await startInstance({ REDIS_URL: redis.url, INSTANCE: 'A', WORKER: '0' });
    started.push(a);
    assert.equal((await fetch(`${a.url}/enqueue?n=7`, { method: 'POST', headers: { 'x-request-id': 'req-claim' } })).status, 202);
    const [id] = (await redis.client.keys(`${QUEUE}:*`)).filter((k) => /^[0-9a-f-]{36}$/.test(k.slice(QUEUE.length + 1))).map((k) => k.slice(QUEUE.length + 1));
    const { token } = JSON.parse((await redis.client.hget(`${QUEUE}:${id}`, 'data'))!) as { token: string };
    await redis.client.lpush(`${QUEUE}:keel-fate:${token}`, 'not a claim');

    const b = await startInstance({ REDIS_URL: redis.url, INSTANCE: 'B', MODE: 'worker', KEEL_LOG_LEVEL: 'warn' });
    started.push(b);
    for (let i = 0; i < 600 && !b.output().includes('did not answer its claim'); i++) await sleep(50);
    assert.match(b.output(), /background job taken while Redis did not answer its claim; handed back to the queue/);
    assert.equal(await redis.client.zscore(`${QUEUE}:failed`, id!), null, 'the job was failed');
    assert.deepEqual(await redis.client.lrange('test:done', 0, -1), []);

    await redis.client.del(`${QUEUE}:keel-fate:${token}`);
    let rows: string[] = [];
    for (let i = 0; i < 600 && rows.length === 0; i++) {
      rows = await redis.client.lrange('test:done', 0, -1);
      if (rows.length === 0) await sleep(50);
    }
    assert.deepEqual(rows.map((r) => JSON.parse(r) as unknown), [{ instance: 'B', payload: { n: 7 }, request_id: 'req-claim', attempt: 1 }]);
    assert.equal(await redis.client.zscore(`${QUEUE}:failed`, id!), null);
  });
});
