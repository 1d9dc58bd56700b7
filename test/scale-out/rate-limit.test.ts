// keel:integration
/**
 * Two keel processes, one Redis: a per-route rate limit is one limit across both (the GCRA step is a
 * Lua script, atomic in Redis), each route has its own bucket, and a Redis outage follows
 * `passOnStoreError` (503 by default, requests let through when true). docs/scaling.md.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { NO_REDIS, startRedis, type RedisServer } from '../helpers/redis-server.js';
import { startInstance, type Instance } from './instances.js';

describe('when two instances share a per-route rate limit through Redis', { skip: NO_REDIS }, () => {
  let redis: RedisServer;
  let a: Instance;
  let b: Instance;

  before(async () => {
    redis = await startRedis();
    [a, b] = await Promise.all([
      startInstance({ REDIS_URL: redis.url, INSTANCE: 'A' }),
      startInstance({ REDIS_URL: redis.url, INSTANCE: 'B', PASS_ON_STORE_ERROR: '1' }),
    ]);
  });
  after(async () => {
    await Promise.all([a?.kill(), b?.kill()]);
    await redis?.stop();
  });

  it('should allow the limit in total, not the limit per instance', async () => {
    // 30 requests to each instance at once; the route allows a burst of 20, refilled at 1 per second.
    const started = performance.now();
    const statuses = await Promise.all(
      Array.from({ length: 60 }, (_, i) => fetch(`${(i % 2 ? a : b).url}/limited`).then((r) => r.status)),
    );
    const elapsedS = (performance.now() - started) / 1000;
    const allowed = statuses.filter((s) => s === 200).length;
    assert.deepEqual([...new Set(statuses)].sort(), [200, 429]);
    // One token comes back per second: a run slower than a second may see one more per second.
    assert.ok(allowed >= 20 && allowed <= 20 + Math.floor(elapsedS), `allowed ${allowed} of 60 in ${elapsedS.toFixed(2)} s (limit 20)`);
  });

  it('should keep each route in its own bucket', async () => {
    // /limited was drained by the test before, but a token comes back each second and a loaded machine
    // can take that long between the two tests: drain it again (21 requests against a burst of 20).
    const drained = await Promise.all(Array.from({ length: 21 }, () => fetch(`${a.url}/limited`).then((r) => r.status)));
    assert.ok(drained.includes(429), `no 429 among ${drained.join(',')}`);
    const res = await fetch(`${b.url}/limited-too`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('ratelimit') ?? '', /remaining=19/);
    const keys = (await redis.client.keys('test:rl:*')).sort();
    assert.deepEqual(keys, ['test:rl:route:GET /limited-too:global', 'test:rl:route:GET /limited:global']);
  });

  describe('when Redis goes down', () => {
    before(() => redis.kill());

    it('should answer 503 on the instance that fails closed (the default)', async () => {
      const res = await fetch(`${a.url}/limited-too`);
      assert.equal(res.status, 503);
      assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
    });
    it('should let requests through on the instance with passOnStoreError: true', async () => {
      const res = await fetch(`${b.url}/limited-too`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { instance: 'B' });
    });
  });
});
