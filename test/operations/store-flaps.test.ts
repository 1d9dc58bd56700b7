/**
 * Issue 47, item 4: down / back lines are throttled per component. A cluster failover logged 21 down/back
 * pairs in 3 s; now the first line of each kind (lost, back) is written at once and repeats within a second
 * as one line each with `changes` and `interval_ms`, the line of the state now last. Real redis-server, a real ioredis client whose connection the
 * server drops again and again (CLIENT KILL), keel's StoreHealth following it.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { StoreHealth } from '../../lib/ops/store-health.js';
import { NO_REDIS, startRedis, type RedisServer } from '../helpers/redis-server.js';

describe('when a Redis connection flaps (dropped ten times in a row)', { skip: NO_REDIS, timeout: 60_000 }, () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedis();
  });
  after(() => redis?.stop());

  it('should log the first down and back lines at once and the repeats as one line each per second, ending with the state now', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, new Writable({
      write(chunk: Buffer, _e, done) {
        for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    }));
    const client = new Redis(redis.url, { retryStrategy: () => 20, connectionName: 'flapping' });
    client.on('error', () => {});
    const admin = new Redis(redis.url);
    const health = new StoreHealth(logger, 'pubsub');
    health.attach(client);
    try {
      await new Promise<void>((r) => (client.status === 'ready' ? r() : client.once('ready', () => r())));
      let drops = 0;
      for (let i = 0; i < 10; i++) {
        const closed = once(client, 'close');
        drops += Number(await admin.call('CLIENT', 'KILL', 'USER', 'default', 'SKIPME', 'yes') ?? 0);
        await closed;
        await once(client, 'ready');
      }
      assert.ok(drops >= 10, `connections dropped: ${drops}`);
      await new Promise((r) => setTimeout(r, 2500));
      const changes = lines.filter((l) => /^redis (store|connection)/.test(String(l.msg)));
      assert.ok(changes.length < 8, `${changes.length} lines for 20 changes: ${changes.map((l) => l.msg).join(' | ')}`);
      assert.equal(changes[0]!.msg, 'redis connection lost; reconnecting');
      const last = changes.at(-1)!;
      assert.equal(last.msg, 'redis store back', 'the last line says the state now');
      assert.ok(Number(last.changes) > 1, JSON.stringify(last));
      assert.equal(health.state, 'up');
    } finally {
      health.close();
      client.disconnect();
      admin.disconnect();
    }
  });
});
