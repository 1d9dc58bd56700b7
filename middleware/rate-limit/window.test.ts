/**
 * rateLimit with express-rate-limit's options: fixed-window semantics, the Store API contract (any
 * object implementing it, promise or legacy callback style), express-rate-limit's validation warnings
 * through `logger`, and the configuration keel refuses when the factory runs.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import express from 'express';
import request from 'supertest';
import { ipKeyGenerator as packageIpKeyGenerator } from 'express-rate-limit';
import { ConfigError } from '../../lib/http/errors.js';
import { FixedWindowMemoryStore, ipKeyGenerator, MemoryStore, rateLimit, type ClientRateLimitInfo, type RateLimitLogger } from './index.js';

function appWith(mw: unknown) {
  const app = express();
  app.use(mw as express.RequestHandler);
  app.get('/', (_req, res) => void res.send('ok'));
  return app;
}
const statuses = async (app: unknown, n: number): Promise<number[]> => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await request(app as never).get('/')).status);
  return out;
};
const recorder = () => {
  const seen: { level: 'error' | 'warn'; error: unknown; message?: string }[] = [];
  const logger: RateLimitLogger = {
    error: (error, message) => void seen.push({ level: 'error', error, message }),
    warn: (error, message) => void seen.push({ level: 'warn', error, message }),
  };
  return { seen, logger, codes: () => seen.map((s) => (s.error as { code?: string }).code) };
};

/** A Store written the way rate-limit-redis & co. are: a class, with its own counter. */
class CountingStore {
  options: Record<string, unknown> | undefined;
  hits = new Map<string, number>();
  decrements = 0;
  init(options: Record<string, unknown>): void {
    this.options = options;
  }
  async increment(key: string): Promise<ClientRateLimitInfo> {
    const n = (this.hits.get(key) ?? 0) + 1;
    this.hits.set(key, n);
    return { totalHits: n, resetTime: new Date(Date.now() + 30_000) };
  }
  async decrement(key: string): Promise<void> {
    this.decrements++;
    this.hits.set(key, (this.hits.get(key) ?? 1) - 1);
  }
  async resetKey(key: string): Promise<void> {
    this.hits.delete(key);
  }
  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const n = this.hits.get(key);
    return n === undefined ? undefined : { totalHits: n, resetTime: undefined };
  }
}

describe('rateLimit with express-rate-limit options: windows', () => {
  // The store reads the clock through Date.now(): a stub of it moves the window without waiting a minute
  // (node:test's MockTimers would do the same, but prints an ExperimentalWarning on Node 20).
  const realNow = Date.now;
  let clock = 0;
  afterEach(() => {
    Date.now = realNow;
  });

  describe('when a client uses up its window', () => {
    it('should allow at most limit requests per window, and all of them again when the window ends', async () => {
      clock = 1_000_000;
      Date.now = () => clock;
      const app = appWith(rateLimit({ windowMs: 60_000, limit: 2 }));
      assert.deepEqual(await statuses(app, 3), [200, 200, 429]);
      clock += 59_000;
      assert.deepEqual(await statuses(app, 1), [429], 'still the same window');
      clock += 1_001;
      assert.deepEqual(await statuses(app, 3), [200, 200, 429], 'a new window: the whole limit again (no token trickle)');
    });
  });
});

describe('rateLimit with express-rate-limit options outside Express (node:http)', () => {
  /** A bare node:http server: no res.send, no req.ip, no req.app. */
  const bare = (mw: unknown) => createServer((req: IncomingMessage, res: ServerResponse) => {
    (mw as (q: IncomingMessage, s: ServerResponse, n: () => void) => void)(req, res, () => void res.end('ok'));
  });
  for (const [what, message, type, body] of [
    ['a text message', 'slow down', /^text\/html; charset=utf-8$/, 'slow down'],
    ['an object message', { error: 'slow down' }, /^application\/json; charset=utf-8$/, '{"error":"slow down"}'],
  ] as const) {
    it(`should send ${what} as Express's res.send would, keyed by the socket's address`, async () => {
      const server = bare(rateLimit({ limit: 1, message }));
      const first = await request(server).get('/');
      const refused = await request(server).get('/');
      assert.deepEqual([first.status, first.text, first.headers['x-ratelimit-remaining']], [200, 'ok', '0']);
      assert.equal(refused.status, 429);
      assert.match(refused.headers['content-type'] ?? '', type);
      assert.equal(refused.text, body);
    });
  }
  it('should refuse with the 429 problem when no message is given', async () => {
    const server = bare(rateLimit({ limit: 1 }));
    await request(server).get('/');
    const refused = await request(server).get('/');
    assert.equal(refused.status, 429);
    assert.match(refused.headers['content-type'] ?? '', /^application\/problem\+json/);
    assert.match(refused.headers['retry-after'] ?? '', /^(59|60)$/, 'seconds until the window ends');
  });
});

describe('rateLimit with express-rate-limit options: the Store API', () => {
  describe('when a store object is given', () => {
    it("should call init with the limiter's settings, count in the store and answer from its totals", async () => {
      const store = new CountingStore();
      const app = appWith(rateLimit({ windowMs: 30_000, max: 2, headers: false, store }));
      assert.equal(store.options?.windowMs, 30_000);
      assert.equal(store.options?.limit, 2, 'max is handed on as limit');
      assert.equal(store.options?.headers, false, 'options keel does not use pass through, as express-rate-limit passes them');
      assert.deepEqual(await statuses(app, 3), [200, 200, 429]);
      assert.deepEqual([...store.hits.values()], [3]);
    });
    it('should expose the store as resetKey and getKey on the middleware', async () => {
      const store = new CountingStore();
      const limiter = rateLimit({ limit: 1, store });
      const app = appWith(limiter);
      await statuses(app, 1);
      assert.deepEqual((await limiter.getKey('127.0.0.1'))?.totalHits, 1);
      await limiter.resetKey('127.0.0.1');
      assert.deepEqual(await statuses(app, 1), [200]);
    });
    it('should throw from getKey when the store has no get', () => {
      const { get: _omit, ...withoutGet } = Object.fromEntries(['increment', 'decrement', 'resetKey', 'get'].map((k) => [k, async () => ({ totalHits: 1, resetTime: undefined })]));
      const limiter = rateLimit({ store: withoutGet as never });
      assert.throws(() => limiter.getKey('x'), /does not support the get\/getKey method/);
    });
    it('should accept a pre-v7 store with a callback incr', async () => {
      let hits = 0;
      const legacy = { incr: (_key: string, cb: (e: undefined, n: number, r: undefined) => void) => cb(undefined, ++hits, undefined), decrement() {}, resetKey() {} };
      assert.deepEqual(await statuses(appWith(rateLimit({ limit: 1, store: legacy })), 2), [200, 429]);
    });
    it('should log an async init failure without throwing', async () => {
      const { logger, seen } = recorder();
      const store = Object.assign(new CountingStore(), { init: async () => Promise.reject(new Error('no connection')) });
      rateLimit({ store, logger });
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(seen.map((s) => [s.level, (s.error as Error).message, s.message]), [['error', 'no connection', 'express-rate-limit: async error during store initialization.']]);
    });
    it('should answer 503 problem when increment fails, or let the request through with passOnStoreError', async () => {
      const failing = () => Object.assign(new CountingStore(), { increment: async () => Promise.reject(new Error('down')) });
      const refused = await request(appWith(rateLimit({ store: failing() }))).get('/');
      assert.equal(refused.status, 503);
      assert.match(refused.headers['content-type'] ?? '', /^application\/problem\+json/);
      const { logger, seen } = recorder();
      assert.deepEqual(await statuses(appWith(rateLimit({ store: failing(), passOnStoreError: true, logger })), 1), [200]);
      assert.match(seen[0]?.message ?? '', /allowing request without rate-limiting/);
    });
  });

  describe('when FixedWindowMemoryStore is used directly', () => {
    it('should count, take back, reset and report hits per key', async () => {
      const store = new FixedWindowMemoryStore();
      store.init({ windowMs: 1000 });
      try {
        assert.equal((await store.increment('a')).totalHits, 1);
        assert.equal((await store.increment('a')).totalHits, 2);
        await store.decrement('a');
        assert.equal((await store.get('a'))?.totalHits, 1);
        await store.resetKey('a');
        assert.equal(await store.get('a'), undefined);
        await store.increment('b');
        await store.resetAll();
        assert.equal(await store.get('b'), undefined);
      } finally {
        store.shutdown();
      }
    });
  });
});

describe('rateLimit with express-rate-limit options: validations', () => {
  it("should report express-rate-limit's warnings through logger, once each, without throwing", async () => {
    const { logger, codes } = recorder();
    const limiter = rateLimit({ limit: 0, ipv6Subnet: 48.5, standardHeaders: 'draft-9' as never, windowSize: 3, logger } as never);
    assert.deepEqual(codes(), ['ERR_ERL_UNKNOWN_OPTION', 'ERR_ERL_IPV6_SUBNET']);
    const app = appWith(limiter);
    await statuses(app, 2);
    assert.deepEqual(codes(), ['ERR_ERL_UNKNOWN_OPTION', 'ERR_ERL_IPV6_SUBNET', 'WRN_ERL_MAX_ZERO', 'ERR_ERL_HEADERS_UNSUPPORTED_DRAFT_VERSION']);
  });
  it('should report a store shared by two limiters', () => {
    const { logger, codes } = recorder();
    const store = new CountingStore();
    rateLimit({ store, logger });
    rateLimit({ store, logger });
    assert.deepEqual(codes(), ['ERR_ERL_STORE_REUSE']);
  });
  it('should stay silent with validate: false', async () => {
    const { logger, seen } = recorder();
    await statuses(appWith(rateLimit({ limit: 0, ipv6Subnet: 48.5, validate: false, logger })), 1);
    assert.deepEqual(seen, []);
  });
});

describe('rateLimit with express-rate-limit options: refused configuration', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["keel's and express-rate-limit's keys in one call", { windowMs: 1000, burst: 5 }, /not both.*windowMs is express-rate-limit's, burst is keel's/],
    ['a store without increment', { windowMs: 1000, store: {} }, /store.*increment\(key\), decrement\(key\) and resetKey\(key\)/],
    ['a negative limit', { limit: -1 }, /limit.*integer >= 0/],
    ['limit and max together', { limit: 1, max: 2 }, /only one of limit and max/],
    ['a status outside 100–599', { limit: 1, statusCode: 999 }, /statusCode.*100 to 599/],
    ['a negative window', { windowMs: -1 }, /windowMs/],
    ['a handler that is not a function', { handler: 'no' }, /handler.*a function/],
    ['an empty requestPropertyName', { requestPropertyName: '' }, /requestPropertyName/],
  ];
  for (const [what, options, message] of cases) {
    it(`should throw a ConfigError for ${what}`, () => {
      assert.throws(() => rateLimit(options as never), (err: unknown) => err instanceof ConfigError && message.test(err.message));
    });
  }
  it('should throw a TypeError, as express-rate-limit does, for a logger without error and warn', () => {
    assert.throws(() => rateLimit({ logger: { error: 'no' } as never }), (err: unknown) => err instanceof TypeError && /logger/.test((err as Error).message));
  });
  it("should refuse keel's token-bucket MemoryStore as the store of express-rate-limit options", () => {
    assert.throws(() => rateLimit({ limit: 1 }, { store: new MemoryStore() }), (err: unknown) => err instanceof ConfigError && /RedisStore, which implements both/.test(err.message));
  });
});

describe('ipKeyGenerator', () => {
  const cases: [string, number | false | undefined][] = [
    ['203.0.113.7', undefined], ['::ffff:203.0.113.7', undefined], ['::203.0.113.7', undefined], ['::1', undefined],
    ['2001:db8:1234:5678:9abc::1', undefined], ['2001:db8:1234:5678:9abc::1', 64], ['2001:db8:1234:5678:9abc::1', 48], ['2001:db8:1234:5678:9abc::1', false],
  ];
  for (const [ip, subnet] of cases) {
    it(`should give ${ip} (subnet ${String(subnet)}) the key express-rate-limit gives it`, () => {
      const expected = subnet === undefined ? packageIpKeyGenerator(ip) : packageIpKeyGenerator(ip, subnet);
      assert.equal(subnet === undefined ? ipKeyGenerator(ip) : ipKeyGenerator(ip, subnet), expected);
    });
  }
  it('should group a /56 by default', () => {
    assert.equal(ipKeyGenerator('2001:db8:1234:56ff:1::1'), '2001:db8:1234:5600::/56');
  });
});
