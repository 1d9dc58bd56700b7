import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { RedisPubSub, PubSubUnavailableError } from './index.js';
import { NO_REDIS, startRedis, type RedisServer } from '../../test/helpers/redis-server.js';

// A generous bound, far above the 500 ms command timeout: proof the publish did not wait for Redis to
// resume, not a timing figure (that is `npm run bench`).
const ANSWER_BOUND_MS = 3000;

function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

describe('RedisPubSub during a Redis outage', { skip: NO_REDIS }, () => {
  let redis: RedisServer;
  let pubsub: RedisPubSub;

  before(async () => {
    redis = await startRedis();
    pubsub = new RedisPubSub({ connection: redis.url, passOnStoreError: false });
  });
  after(async () => {
    redis?.resume();
    await pubsub?.close();
    await redis?.stop();
  });

  describe('when redis-server is stopped (SIGSTOP) and then continued', () => {
    it('should reject a fail-closed publish with a 503 carrying Retry-After and the code, then publish again', async () => {
      await within(pubsub.publish('news', { n: 1 }), ANSWER_BOUND_MS);
      redis.pause();
      let refused: unknown;
      try {
        await within(pubsub.publish('news', { n: 2 }), ANSWER_BOUND_MS).catch((err: unknown) => (refused = err));
      } finally {
        redis.resume();
      }
      assert.ok(refused instanceof PubSubUnavailableError, `expected PubSubUnavailableError, got ${String(refused)}`);
      assert.equal(refused.status, 503);
      assert.equal(refused.headers['Retry-After'], '1');
      assert.equal((refused.extensions as Record<string, unknown>).code, 'KEEL_SERVICE_UNAVAILABLE');
      // Until Redis answers again (a probe every 200 ms), publishes fail at once rather than wait.
      for (let i = 0; i < 100 && pubsub.status().redis !== 'up'; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(pubsub.status().redis, 'up');
      await within(pubsub.publish('news', { n: 3 }), ANSWER_BOUND_MS);
    });
  });
});
