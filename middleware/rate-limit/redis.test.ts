import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import express from 'express';
import request from 'supertest';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { rateLimit, RedisStore } from './index.js';
import { freePort, NO_REDIS, startRedis, type RedisServer } from '../../test/helpers/redis-server.js';

describe('RedisStore', { skip: NO_REDIS }, () => {
  let redis: RedisServer;
  let client: Redis;
  let storeFor: (prefix: string) => RedisStore;

  before(async () => {
    redis = await startRedis();
    client = redis.client;
    storeFor = (prefix) => new RedisStore({ prefix, sendCommand: (command, ...args) => client.call(command!, ...args) as Promise<unknown> });
  });
  after(() => redis?.stop());

  describe('when a client spends its bucket', () => {
    it('should allow the burst, then refuse with the time until the next token', async () => {
      const store = storeFor('t1:');
      const policy = { burst: 2, perSecond: 1 };
      const a = await store.take('ip', policy);
      const b = await store.take('ip', policy);
      const c = await store.take('ip', policy);
      assert.deepEqual([a.allowed, a.remaining, b.allowed, b.remaining, c.allowed, c.remaining], [true, 1, true, 0, false, 0]);
      // At most one interval (1 s) from the first take; how much less depends on how slow the machine was between takes.
      assert.ok(c.retryAfterMs > 0 && c.retryAfterMs <= 1000, `retryAfterMs ${c.retryAfterMs}`);
    });
    it('should let the client in again once a token is back', async () => {
      const store = storeFor('t2:');
      // One token a second: the refusal holds however slow a loaded machine is between the two takes
      // (at 20/s a 50 ms stall let the second take through), and the wait is past the token's return.
      const policy = { burst: 1, perSecond: 1 };
      assert.equal((await store.take('ip', policy)).allowed, true);
      assert.equal((await store.take('ip', policy)).allowed, false);
      await sleep(1100);
      assert.equal((await store.take('ip', policy)).allowed, true);
    });
    it('should let the key expire when the bucket is full again', async () => {
      const store = storeFor('t3:');
      // One token spent at 2/s: the key lives until the bucket is full again, 500 ms, not longer
      // (at 10/s the 100 ms could pass before PTTL was read on a loaded machine).
      await store.take('ip', { burst: 5, perSecond: 2 });
      const ttl = await client.pttl('t3:ip');
      assert.ok(ttl > 0 && ttl <= 500, `PTTL ${ttl}`);
    });
  });

  describe('when the script is not cached on the server', () => {
    it('should send it again after SCRIPT FLUSH', async () => {
      const store = storeFor('t4:');
      await client.call('SCRIPT', 'FLUSH');
      assert.equal((await store.take('ip', { burst: 1, perSecond: 1 })).allowed, true);
      assert.equal((await store.take('ip', { burst: 1, perSecond: 1 })).allowed, false);
    });
  });

  describe('when two instances share one Redis', () => {
    it('should enforce one limit across both', async () => {
      const instance = () => {
        const app = express();
        app.use(rateLimit({ per_second: 1, burst: 2, ip_based: false }, { store: storeFor('shared:') }));
        app.get('/', (_req, res) => {
          res.send('ok');
        });
        return app;
      };
      const [one, two] = [instance(), instance()];
      assert.equal((await request(one).get('/')).status, 200);
      assert.equal((await request(two).get('/')).status, 200);
      const refused = await request(one).get('/');
      assert.equal(refused.status, 429);
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal((await request(two).get('/')).status, 429);
    });
  });

  describe('when Redis is unreachable', () => {
    it('should answer 503 problems (the middleware decides, the store only reports)', async () => {
      const port = await freePort();
      const dead = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
      dead.on('error', () => {}); // the refused connection is the point of this test
      const app = express();
      app.use(rateLimit({}, { store: new RedisStore({ sendCommand: (command, ...args) => dead.call(command!, ...args) as Promise<unknown> }) }));
      app.get('/', (_req, res) => {
        res.send('ok');
      });
      const res = await request(app).get('/');
      assert.equal(res.status, 503);
      dead.disconnect();
    });
  });
});

describe('RedisStore construction', () => {
  it('should throw without a sendCommand function', () => {
    assert.throws(() => new RedisStore({} as never), TypeError);
  });
});
