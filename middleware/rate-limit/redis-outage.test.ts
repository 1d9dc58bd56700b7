import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import express from 'express';
import request from 'supertest';
import { Redis } from 'ioredis';
import { rateLimit, RedisStore, DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from './index.js';
import { NO_REDIS, startRedis, type RedisServer } from '../../test/helpers/redis-server.js';

// A generous bound on "answered", far above the 500 ms command timeout: not a timing figure (that is
// `npm run bench`), only proof the request did not wait for Redis to resume.
const ANSWER_BOUND_MS = 3000;

describe('RedisStore during a Redis outage', { skip: NO_REDIS }, () => {
  let redis: RedisServer;
  let client: Redis;

  before(async () => {
    redis = await startRedis();
    // The client as docs/scaling.md shows it: an error listener and a command timeout of its own.
    client = new Redis({ host: '127.0.0.1', port: redis.port, commandTimeout: DEFAULT_REDIS_COMMAND_TIMEOUT_MS, maxRetriesPerRequest: 1 });
    client.on('error', () => {});
  });
  after(async () => {
    redis?.resume();
    client?.disconnect();
    await redis?.stop();
  });

  function appWith(options: { timeoutMs?: number; passOnStoreError?: boolean } = {}) {
    const app = express();
    const store = new RedisStore({ prefix: `outage${Math.random()}:`, timeoutMs: options.timeoutMs, sendCommand: (command, ...args) => client.call(command!, ...args) as Promise<unknown> });
    app.use(rateLimit({ per_second: 100, burst: 100 }, { store, passOnStoreError: options.passOnStoreError }));
    app.get('/', (_req, res) => res.send('ok'));
    return app;
  }

  /** The response, or a rejection once ANSWER_BOUND_MS have passed without one. */
  async function answered(app: express.Express, path = '/') {
    return request(app).get(path).timeout({ response: ANSWER_BOUND_MS });
  }

  /** 200, then a 503 problem with Retry-After and the code while redis-server hangs, then 200 once it continues. */
  async function assertRefusedWhileHung(app: express.Express) {
    assert.equal((await answered(app)).status, 200);
    redis.pause();
    try {
      const res = await answered(app);
      assert.equal(res.status, 503);
      assert.equal(res.headers['retry-after'], '1');
      assert.match(res.headers['content-type'], /application\/problem\+json/);
      assert.equal(res.body.code, 'KEEL_SERVICE_UNAVAILABLE');
    } finally {
      redis.resume();
    }
    assert.equal((await answered(app)).status, 200);
  }

  describe('when redis-server is stopped (SIGSTOP) and then continued', () => {
    it('should answer 503 problem+json with Retry-After while it hangs, and 200 once it is back', async () => {
      const app = appWith();
      await assertRefusedWhileHung(app);
    });
  });

  describe('when an express-rate-limit style limiter ({ windowMs, limit }) meets a hung Redis', () => {
    it('should answer 503 with Retry-After and the code, then 200 once Redis continues', async () => {
      const app = express();
      const store = new RedisStore({ prefix: 'outage-window:', sendCommand: (command, ...args) => client.call(command!, ...args) as Promise<unknown> });
      app.use(rateLimit({ windowMs: 60_000, limit: 100, store }));
      app.get('/', (_req, res) => res.send('ok'));
      await assertRefusedWhileHung(app);
    });
  });

  describe('when the store hangs under passOnStoreError', () => {
    it('should let the request through instead of waiting', async () => {
      const app = appWith({ passOnStoreError: true });
      redis.pause();
      try {
        assert.equal((await answered(app)).status, 200);
      } finally {
        redis.resume();
      }
    });
  });

  describe('when the user-given client has no timeout of its own', () => {
    it('should still answer 503 within the store timeoutMs', async () => {
      const bare = new Redis({ host: '127.0.0.1', port: redis.port });
      bare.on('error', () => {});
      try {
        await bare.ping();
        const app = express();
        app.use(rateLimit({ per_second: 100, burst: 100 }, { store: new RedisStore({ prefix: 'bare:', timeoutMs: 200, sendCommand: (c, ...a) => bare.call(c!, ...a) as Promise<unknown> }) }));
        app.get('/', (_req, res) => res.send('ok'));
        redis.pause();
        try {
          const res = await answered(app);
          assert.equal(res.status, 503);
          assert.equal(res.headers['retry-after'], '1');
        } finally {
          redis.resume();
        }
      } finally {
        bare.disconnect();
      }
    });
  });

  describe('when timeoutMs is not a number of ms', () => {
    it('should refuse it when the store is made, naming the option', () => {
      assert.throws(() => new RedisStore({ sendCommand: async () => null, timeoutMs: -1 }), /timeoutMs.*-1/);
    });
  });
});
