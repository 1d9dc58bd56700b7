// keel:integration
/**
 * Issue 36, item 4: a Redis command that timed out because this process was starved (its event loop
 * blocked by a synchronous stall, as a CPU-heavy route or a busy CI machine does) is not a Redis
 * outage. A real hang (SIGSTOP, test/scale-out/outage.test.ts) still is.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { Redis } from 'ioredis';
import { createApp } from '../../lib/index.js';
import { backgroundOf, bullmqBackground } from '../../lib/background/index.js';
import { RedisPubSub } from '../../lib/pubsub/index.js';
import { RedisStore, RedisCommandTimeoutError } from '../../middleware/rate-limit/index.js';
import { loopStalledSince, watchLoop } from '../../lib/ops/loop-stall.js';
import { NO_REDIS, useRedis } from '../helpers/redis-server.js';

/** Block the event loop for `ms` (a CPU stall: nothing else in this process runs meanwhile). */
function stall(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** 4 × the 500 ms command bound: a stall no timeout can survive by luck. */
const STALL_MS = 2000;

describe('when the event loop is stalled while a Redis command is in flight', { skip: NO_REDIS }, () => {
  const redis = useRedis();

  it('should measure the stall', async () => {
    const unwatch = watchLoop();
    try {
      await new Promise((r) => setTimeout(r, 120));
      const t0 = performance.now();
      stall(300);
      assert.ok(loopStalledSince(t0) >= 250, `measured ${loopStalledSince(t0)} ms`);
    } finally {
      unwatch();
    }
  });

  it('should let the rate-limit RedisStore answer, not time out, with the client docs/scaling.md shows', async () => {
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1, commandTimeout: 500 });
    redis.closeAtEnd(async () => client.disconnect());
    const store = new RedisStore({ sendCommand: (c, ...a) => client.call(c, ...a) });
    await store.ping();
    const taken = store.take('k', { perSecond: 1, burst: 5 });
    stall(STALL_MS);
    const result = await taken;
    assert.equal(result.allowed, true);
  });

  it('should store a BullMQ job and keep the store up', async () => {
    const app = createApp({ background_tasks: { enabled: true } }, (a) => a.job('j', () => undefined), {
      logger: pino({ level: 'silent' }),
      background: bullmqBackground({ connection: redis.url, queueName: 'starved', worker: false }),
    });
    (await app.ready()).intoRouter();
    const bg = backgroundOf(app)!;
    redis.closeAtEnd(() => bg.shutdown());
    await bg.enqueue('j'); // connected
    const queued = bg.enqueue('j');
    stall(STALL_MS);
    assert.equal(typeof (await queued), 'string');
    assert.equal(bg.status?.().redis, 'up');
  });

  it('should deliver a published event to the other instance and keep the store up', async () => {
    const logger = pino({ level: 'silent' });
    const a = new RedisPubSub({ connection: redis.url, logger, passOnStoreError: false });
    const b = new RedisPubSub({ connection: redis.url, logger });
    redis.closeAtEnd(() => a.close(), () => b.close());
    const events = b.subscribe('t');
    await b.subscribed('t');
    await a.publish('t', 0);
    assert.deepEqual(await events.next(), { value: 0, done: false });
    const published = a.publish('t', 1);
    stall(STALL_MS);
    await published;
    assert.deepEqual(await events.next(), { value: 1, done: false });
    assert.equal(a.status().redis, 'up');
  });

  describe('when redis-server hangs (SIGSTOP) and the loop runs on time', () => {
    it('should still time out the rate-limit store', async () => {
      const client = new Redis(redis.url);
      redis.closeAtEnd(async () => client.disconnect());
      const store = new RedisStore({ sendCommand: (c, ...a) => client.call(c, ...a) });
      await store.ping();
      redis.pause();
      try {
        await assert.rejects(store.take('h', { perSecond: 1, burst: 5 }), RedisCommandTimeoutError);
      } finally {
        redis.resume();
      }
    });
  });
});
