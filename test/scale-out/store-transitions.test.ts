// keel:integration
/**
 * Issue 36, item 2: every Redis-backed store (rate limit, jobs, events) logs its down and back
 * transitions once each, through the App's logger when it was made without one.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { bullmqBackground, createApp, RedisPubSub, response } from '../../lib/index.js';
import { RedisStore } from '../../middleware/rate-limit/index.js';
import { NO_REDIS, useRedis } from '../helpers/redis-server.js';
import { captureLogs, type LogRecord } from '../helpers/log-capture.js';

const COMPONENTS = ['rate_limit', 'background', 'pubsub'] as const;

describe('when redis-server hangs (SIGSTOP) and continues under three stores made without a logger', { skip: NO_REDIS }, () => {
  const redis = useRedis();

  it('should log one down line and one back line per store, through the App\'s logger', { timeout: 60_000 }, async () => {
    const logs: LogRecord[] = [];
    const { logger, next } = captureLogs();
    void (async () => { for (;;) logs.push(await next()); })();
    // The client docs/scaling.md shows for the rate-limit store.
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1, commandTimeout: 500 });
    client.on('error', () => undefined);
    redis.closeAtEnd(async () => client.disconnect());
    const store = new RedisStore({ sendCommand: (c, ...a) => client.call(c, ...a) });
    const pubsub = new RedisPubSub({ connection: redis.url });
    redis.closeAtEnd(() => pubsub.close());
    const app = createApp({ port: 0, host: '127.0.0.1', rate_limit: { per_second: 1000, burst: 1000 }, background_tasks: { enabled: true } }, (a) => {
      a.job('j', () => undefined);
      a.get('/r', () => ({ ok: true }));
      a.post('/e', async (data) => { await data.background!.enqueue('j'); return response(null, { status: 202 }); });
      a.post('/p', async () => { await a.publish('t', 1); return { ok: true }; });
    }, { logger, rateLimit: { store, passOnStoreError: true }, pubsub, background: bullmqBackground({ connection: redis.url, queueName: 'transitions', worker: false }) });
    const handle = await app.listen({ handleSignals: false });
    redis.closeAtEnd(() => handle.close());
    const hit = () => Promise.all([
      fetch(`${handle.url}/r`).then((r) => r.status),
      fetch(`${handle.url}/e`, { method: 'POST' }).then((r) => r.status),
      fetch(`${handle.url}/p`, { method: 'POST' }).then((r) => r.status),
    ]);
    assert.deepEqual(await hit(), [200, 202, 200]);

    const lines = (component: string, re: RegExp) => logs.filter((l) => l.component === component && re.test(String(l.msg)));
    const down = (c: string) => lines(c, /redis store down|connection lost/);
    const back = (c: string) => lines(c, /redis store back/);
    redis.pause();
    try {
      for (let i = 0; i < 100 && COMPONENTS.some((c) => down(c).length === 0); i++) {
        await hit();
        await sleep(50);
      }
      await hit(); // more failures while down: no more lines
    } finally {
      redis.resume();
    }
    for (let i = 0; i < 200 && COMPONENTS.some((c) => back(c).length === 0); i++) {
      await hit();
      await sleep(50);
    }
    assert.deepEqual(await hit(), [200, 202, 200]);
    const summary = JSON.stringify(logs.map((l) => [l.level, l.component, l.msg]));
    for (const c of COMPONENTS) {
      assert.equal(down(c).length, 1, `${c} down: ${summary}`);
      assert.equal(down(c)[0]!.level, 40);
      assert.equal(back(c).length, 1, `${c} back: ${summary}`);
      assert.equal(back(c)[0]!.level, 30);
    }
  });
});
