import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
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
    pubsub = new RedisPubSub({ connection: redis.url, passOnStoreError: false, logger: pino({ level: 'silent' }) });
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

  describe('when a publish is refused during a hang', () => {
    it('should deliver it nowhere after Redis resumes, while the next publish arrives', async () => {
      const other = new RedisPubSub({ connection: redis.url, logger: pino({ level: 'silent' }) });
      try {
        const events = other.subscribe('late');
        await other.subscribed('late');
        await within(pubsub.publish('late', { n: 1 }), ANSWER_BOUND_MS);
        redis.pause();
        try {
          await assert.rejects(within(pubsub.publish('late', { n: 2 }), ANSWER_BOUND_MS), PubSubUnavailableError);
        } finally {
          redis.resume();
        }
        for (let i = 0; i < 100 && pubsub.status().redis !== 'up'; i++) await new Promise((r) => setTimeout(r, 50));
        await within(pubsub.publish('late', { n: 3 }), ANSWER_BOUND_MS);
        // Redis runs commands in order: had the refused publish gone out late, it would come before n: 3.
        assert.deepEqual((await within(events.next(), ANSWER_BOUND_MS)).value, { n: 1 });
        assert.deepEqual((await within(events.next(), ANSWER_BOUND_MS)).value, { n: 3 });
        await events.return!();
      } finally {
        await other.close();
      }
    });
  });

  describe('when the publisher fails open and Redis hangs', () => {
    it('should deliver each event to local subscribers once, without waiting on Redis for each', async () => {
      const open = new RedisPubSub({ connection: redis.url, logger: pino({ level: 'silent' }) });
      try {
        const events = open.subscribe('chat');
        await open.subscribed('chat');
        await within(open.publish('chat', 0), ANSWER_BOUND_MS);
        redis.pause();
        const answered: number[] = [];
        try {
          // A chat loop awaiting each publish, as in docs/scaling.md: all 20 answered while Redis still hangs.
          for (let i = 1; i <= 20; i++) {
            await within(open.publish('chat', i), ANSWER_BOUND_MS);
            answered.push(i);
          }
        } finally {
          redis.resume();
        }
        assert.equal(answered.length, 20);
        for (let i = 0; i < 100 && open.status().redis !== 'up'; i++) await new Promise((r) => setTimeout(r, 50));
        await within(open.publish('chat', 21), ANSWER_BOUND_MS);
        const got: unknown[] = [];
        for (let i = 0; i <= 21; i++) got.push((await within(events.next(), ANSWER_BOUND_MS)).value);
        assert.deepEqual(got, Array.from({ length: 22 }, (_, i) => i));
        // Nothing more: a late copy of an event published during the hang would be a duplicate.
        await new Promise((r) => setTimeout(r, 300));
        const extra = await Promise.race([events.next(), new Promise((r) => setTimeout(() => r('none'), 200))]);
        assert.equal(extra, 'none');
        await events.return!();
      } finally {
        await open.close();
      }
    });
  });

  describe('when a readiness check asks a RedisPubSub that never published', () => {
    it('should report reconnecting until its connections are up, then up', async () => {
      const fresh = new RedisPubSub({ connection: redis.url, logger: pino({ level: 'silent' }) });
      try {
        assert.equal(fresh.status().redis, 'reconnecting');
        for (let i = 0; i < 100 && fresh.status().redis !== 'up'; i++) await new Promise((r) => setTimeout(r, 50));
        assert.equal(fresh.status().redis, 'up');
      } finally {
        await fresh.close();
      }
    });
  });
});
