/**
 * rateLimit with express-rate-limit's options, against express-rate-limit itself on the same
 * requests, under Express 4 and 5. Intended differences, each asserted below:
 * - a limited request gets a 429 application/problem+json (express-rate-limit: text/html with its message);
 *   `message` becomes the problem's detail;
 * - tokens return one at a time (every windowMs / limit), so `RateLimit` reset= and Retry-After count
 *   the seconds until the bucket is full / the next request is allowed, not until a fixed window ends;
 * - with neither standardHeaders nor legacyHeaders given, keel sends the draft-7 `RateLimit` headers
 *   instead of express-rate-limit's default `X-RateLimit-*` headers (which keel never sends);
 * - a 429 always carries Retry-After (RFC 6585 §4), also with standardHeaders: false;
 * - keel sets no `req.rateLimit`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rateLimit as packageRateLimit } from 'express-rate-limit';
import request from 'supertest';
import { pino } from 'pino';
import { ConfigError } from '../../lib/errors.js';
import { createApp } from '../../lib/index.js';
import { EXPRESS_VERSIONS, type ExpressFactory } from '../../test/helpers/express-versions.js';
import { MemoryStore, rateLimit, type RateLimitOptions } from './index.js';

type Mw = (req: any, res: any, next: any) => void;
interface Answer { status: number; headers: Record<string, string | undefined>; body: string; type: string | undefined }

function appWith(express: ExpressFactory, mw: Mw, setup?: (app: ReturnType<ExpressFactory>) => void) {
  const app = express();
  setup?.(app);
  app.use(mw);
  app.get('/', (_req, res) => void res.json({ ok: true }));
  app.get('/health', (_req, res) => void res.json({ ok: true }));
  return app;
}

async function send(app: unknown, path = '/', headers: Record<string, string> = {}): Promise<Answer> {
  const res = await request(app as never).get(path).set(headers);
  return { status: res.status, headers: res.headers as Record<string, string>, body: res.text, type: res.headers['content-type'] };
}

/** The same requests to both apps, in order. */
async function both(pkg: unknown, keel: unknown, requests: { path?: string; headers?: Record<string, string> }[]): Promise<[Answer[], Answer[]]> {
  const a: Answer[] = [];
  const b: Answer[] = [];
  for (const r of requests) {
    a.push(await send(pkg, r.path, r.headers));
    b.push(await send(keel, r.path, r.headers));
  }
  return [a, b];
}
const times = (n: number, r: { path?: string; headers?: Record<string, string> } = {}) => Array.from({ length: n }, () => r);
const statuses = (xs: Answer[]) => xs.map((x) => x.status);

for (const { name, express } of EXPRESS_VERSIONS) {
  describe(`rateLimit with express-rate-limit options under ${name}`, () => {
    describe('when the policy is 3 per 15 minutes', () => {
      const options = { windowMs: 15 * 60_000, limit: 3, standardHeaders: 'draft-7', legacyHeaders: false } as const;

      it('should allow exactly 3 and refuse the 4th, as express-rate-limit does', async () => {
        const [pkg, keel] = await both(appWith(express, packageRateLimit(options)), appWith(express, rateLimit(options)), times(4));
        assert.deepEqual(statuses(keel), statuses(pkg));
        assert.deepEqual(statuses(keel), [200, 200, 200, 429]);
        for (let i = 0; i < 4; i++) assert.equal(keel[i]!.headers['ratelimit-policy'], pkg[i]!.headers['ratelimit-policy'], 'same policy header');
        assert.equal(keel[0]!.headers['ratelimit-policy'], '3;w=900');
        const remaining = (xs: Answer[]) => xs.map((x) => /remaining=(\d+)/.exec(x.headers.ratelimit ?? '')?.[1]);
        assert.deepEqual(remaining(keel), remaining(pkg));
      });

      it('should differ as intended: a problem+json 429 whose Retry-After is the wait for one request, not for the window', async () => {
        const [pkg, keel] = await both(appWith(express, packageRateLimit(options)), appWith(express, rateLimit(options)), times(4));
        // express-rate-limit: text/html message, Retry-After = until the fixed window ends (900 s).
        assert.match(pkg[3]!.type!, /^text\/html/);
        assert.equal(pkg[3]!.body, 'Too many requests, please try again later.');
        assert.ok(Number(pkg[3]!.headers['retry-after']) > 890);
        // keel: one token comes back every 15 min / 3 = 300 s.
        assert.match(keel[3]!.type!, /^application\/problem\+json/);
        assert.equal(JSON.parse(keel[3]!.body).status, 429);
        assert.equal(keel[3]!.headers['retry-after'], '300');
        // reset= counts to a full bucket: 300 s after the first request, 900 s after the third.
        assert.match(keel[0]!.headers.ratelimit!, /^limit=3, remaining=2, reset=300$/);
        assert.match(keel[2]!.headers.ratelimit!, /^limit=3, remaining=0, reset=900$/);
      });

      it('should allow one more request once a third of the window has passed, and no sooner', async () => {
        let now = 0;
        const app = appWith(express, rateLimit(options, { store: new MemoryStore({ now: () => now }) }));
        for (let i = 0; i < 3; i++) assert.equal((await send(app)).status, 200);
        now = 299_000;
        const early = await send(app);
        assert.equal(early.status, 429);
        assert.equal(early.headers['retry-after'], '1');
        now = 300_000;
        assert.equal((await send(app)).status, 200);
        assert.equal((await send(app)).status, 429);
        now = 300_000 + 15 * 60_000;
        for (let i = 0; i < 3; i++) assert.equal((await send(app)).status, 200, 'a full bucket again after a whole window');
        assert.equal((await send(app)).status, 429);
      });
    });

    describe('when max is used instead of limit', () => {
      it('should answer as express-rate-limit does', async () => {
        const options = { windowMs: 60_000, max: 2, standardHeaders: 'draft-7', legacyHeaders: false } as const;
        const [pkg, keel] = await both(appWith(express, packageRateLimit(options)), appWith(express, rateLimit(options)), times(3));
        assert.deepEqual(statuses(keel), statuses(pkg));
      });
    });

    describe('when only windowMs and limit are given', () => {
      it('should send draft-7 headers where express-rate-limit sends X-RateLimit-* (intended difference)', async () => {
        const options = { windowMs: 60_000, limit: 2 };
        const [pkg, keel] = await both(appWith(express, packageRateLimit(options)), appWith(express, rateLimit(options)), times(3));
        assert.deepEqual(statuses(keel), statuses(pkg));
        assert.equal(pkg[0]!.headers['x-ratelimit-limit'], '2');
        assert.equal(keel[0]!.headers['x-ratelimit-limit'], undefined);
        assert.equal(keel[0]!.headers['ratelimit-policy'], '2;w=60');
      });
    });

    describe('when standardHeaders is false and legacyHeaders false', () => {
      it('should send no RateLimit headers, and Retry-After only on the 429 (express-rate-limit sends none)', async () => {
        const options = { windowMs: 60_000, limit: 1, standardHeaders: false, legacyHeaders: false } as const;
        const [pkg, keel] = await both(appWith(express, packageRateLimit(options)), appWith(express, rateLimit(options)), times(2));
        assert.deepEqual(statuses(keel), statuses(pkg));
        for (const a of [...pkg, ...keel]) assert.equal(a.headers.ratelimit, undefined);
        assert.equal(pkg[1]!.headers['retry-after'], undefined);
        assert.equal(keel[1]!.headers['retry-after'], '60');
      });
    });

    describe('when a keyGenerator is given', () => {
      for (const kind of ['synchronous', 'asynchronous']) {
        it(`should keep one bucket per key (${kind}), as express-rate-limit does`, async () => {
          const keyGenerator = kind === 'synchronous'
            ? (req: { headers: Record<string, string> }) => req.headers['x-tenant']!
            : async (req: { headers: Record<string, string> }) => req.headers['x-tenant']!;
          const options = { windowMs: 60_000, limit: 1, keyGenerator, standardHeaders: 'draft-7', legacyHeaders: false } as const;
          const seq = [{ headers: { 'x-tenant': 'a' } }, { headers: { 'x-tenant': 'b' } }, { headers: { 'x-tenant': 'a' } }, { headers: { 'x-tenant': 'b' } }];
          const [pkg, keel] = await both(appWith(express, packageRateLimit(options as never)), appWith(express, rateLimit(options as RateLimitOptions)), seq);
          assert.deepEqual(statuses(keel), statuses(pkg));
          assert.deepEqual(statuses(keel), [200, 200, 429, 429]);
        });
      }
    });

    describe('when skip is given', () => {
      it('should neither count nor limit skipped requests, as express-rate-limit does', async () => {
        const options = { windowMs: 60_000, limit: 1, skip: (req: { path: string }) => req.path === '/health', standardHeaders: 'draft-7', legacyHeaders: false } as const;
        const seq = [{ path: '/health' }, { path: '/health' }, { path: '/' }, { path: '/health' }, { path: '/' }];
        const [pkg, keel] = await both(appWith(express, packageRateLimit(options)), appWith(express, rateLimit(options as RateLimitOptions)), seq);
        assert.deepEqual(statuses(keel), statuses(pkg));
        assert.deepEqual(statuses(keel), [200, 200, 200, 200, 429]);
        assert.equal(keel[0]!.headers.ratelimit, undefined, 'a skipped request gets no headers');
      });
    });

    describe('when skip or keyGenerator throws or rejects', () => {
      const boom = () => {
        throw new Error('secret internals');
      };
      const reject = async () => {
        throw new Error('secret internals');
      };
      for (const [what, options] of [
        ['skip throws', { skip: boom }],
        ['skip rejects', { skip: reject }],
        ['keyGenerator throws', { keyGenerator: boom }],
        ['keyGenerator rejects', { keyGenerator: reject }],
      ] as const) {
        it(`should answer a 500 problem without internals when ${what}`, async () => {
          const answer = await send(appWith(express, rateLimit({ windowMs: 60_000, limit: 5, ...options } as RateLimitOptions)));
          assert.equal(answer.status, 500);
          assert.match(answer.type!, /^application\/problem\+json/);
          assert.doesNotMatch(answer.body, /secret internals/);
        });
      }
    });

    describe('when a handler is given', () => {
      it('should let the handler answer the limited request, as express-rate-limit does', async () => {
        const handler = (_req: unknown, res: { status(n: number): { json(v: unknown): void } }, _next: unknown, opts: { limit: number }) =>
          res.status(429).json({ error: 'slow down', limit: opts.limit });
        const options = { windowMs: 60_000, limit: 1, handler, standardHeaders: 'draft-7', legacyHeaders: false } as const;
        const [pkg, keel] = await both(appWith(express, packageRateLimit(options as never)), appWith(express, rateLimit(options as RateLimitOptions)), times(2));
        assert.deepEqual(statuses(keel), statuses(pkg));
        assert.equal(keel[1]!.body, pkg[1]!.body);
        assert.deepEqual(JSON.parse(keel[1]!.body), { error: 'slow down', limit: 1 });
        assert.equal(keel[1]!.headers['retry-after'], '60');
      });
    });

    describe('when a message is given', () => {
      it('should use it as the problem detail (express-rate-limit sends it as text: intended difference)', async () => {
        const options = { windowMs: 60_000, limit: 1, message: 'Too many login attempts', standardHeaders: 'draft-7', legacyHeaders: false } as const;
        const [pkg, keel] = await both(appWith(express, packageRateLimit(options)), appWith(express, rateLimit(options)), times(2));
        assert.deepEqual(statuses(keel), statuses(pkg));
        assert.equal(pkg[1]!.body, 'Too many login attempts');
        assert.equal(JSON.parse(keel[1]!.body).detail, 'Too many login attempts');
      });
    });

    describe("when the app sets 'trust proxy'", () => {
      it('should key clients by req.ip, so each forwarded client has its own bucket, as express-rate-limit does', async () => {
        const options = { windowMs: 60_000, limit: 1, standardHeaders: 'draft-7', legacyHeaders: false } as const;
        const trust = (app: ReturnType<ExpressFactory>) => app.set('trust proxy', 'loopback');
        const seq = [{ headers: { 'x-forwarded-for': '203.0.113.1' } }, { headers: { 'x-forwarded-for': '203.0.113.2' } }, { headers: { 'x-forwarded-for': '203.0.113.1' } }];
        const [pkg, keel] = await both(appWith(express, packageRateLimit(options), trust), appWith(express, rateLimit(options), trust), seq);
        assert.deepEqual(statuses(keel), statuses(pkg));
        assert.deepEqual(statuses(keel), [200, 200, 429]);
      });
      it('should key by req.ip with keel options too', async () => {
        const app = appWith(express, rateLimit({ per_second: 1, burst: 1 }), (a) => a.set('trust proxy', true));
        assert.equal((await send(app, '/', { 'x-forwarded-for': '198.51.100.1' })).status, 200);
        assert.equal((await send(app, '/', { 'x-forwarded-for': '198.51.100.2' })).status, 200);
        assert.equal((await send(app, '/', { 'x-forwarded-for': '198.51.100.1' })).status, 429);
      });
      it("should share one bucket when 'trust proxy' is off (forwarded addresses are not believed)", async () => {
        const app = appWith(express, rateLimit({ per_second: 1, burst: 1 }));
        assert.equal((await send(app, '/', { 'x-forwarded-for': '198.51.100.1' })).status, 200);
        assert.equal((await send(app, '/', { 'x-forwarded-for': '198.51.100.2' })).status, 429);
      });
    });
  });
}

describe('rateLimit with express-rate-limit options: refused configuration', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["keel's and express-rate-limit's keys in one call", { windowMs: 1000, burst: 5 }, /not both.*windowMs is express-rate-limit's, burst is keel's/],
    ['a store of express-rate-limit', { windowMs: 1000, store: {} }, /store is not supported.*RedisStore/],
    ['skipFailedRequests', { limit: 5, skipFailedRequests: true }, /skipFailedRequests is not supported/],
    ['draft-6 headers', { limit: 5, standardHeaders: 'draft-6' }, /standardHeaders.*write standardHeaders: 'draft-7'/],
    ['standardHeaders: true (draft-6)', { limit: 5, standardHeaders: true }, /standardHeaders/],
    ['legacy headers', { limit: 5, legacyHeaders: true }, /legacyHeaders.*never sends X-RateLimit/],
    ['a limit function', { limit: () => 5 }, /limit.*once at start-up/],
    ['limit 0', { limit: 0 }, /limit: 0 \(block everyone\)/],
    ['limit and max together', { limit: 1, max: 2 }, /only one of limit and max/],
    ['a status other than 429', { limit: 1, statusCode: 503 }, /statusCode.*handler/],
    ['an object message', { limit: 1, message: { error: 'x' } }, /message.*problem\+json.*handler/],
    ['a negative window', { windowMs: -1 }, /windowMs/],
    ['an unknown express-rate-limit key next to known ones', { windowMs: 1000, windowSize: 3 }, /windowSize/],
  ];
  for (const [what, options, message] of cases) {
    it(`should throw a ConfigError for ${what}`, () => {
      assert.throws(() => rateLimit(options as RateLimitOptions), (err: unknown) => err instanceof ConfigError && message.test(err.message));
    });
  }
});

describe('RateLimitConfig per_second', () => {
  it('should accept a fractional rate (3 per 15 minutes) and announce the 900 s window', async () => {
    const app = appWith(EXPRESS_VERSIONS[1]!.express, rateLimit({ per_second: 3 / 900, burst: 3 }));
    const first = await send(app);
    assert.equal(first.headers['ratelimit-policy'], '3;w=900');
    for (let i = 0; i < 2; i++) assert.equal((await send(app)).status, 200);
    const refused = await send(app);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '300');
    assert.match(JSON.parse(refused.body).detail, /refilled at 1 per 5 minute\(s\); retry in 300 s/);
  });
});

describe('ServerConfig.trust_proxy under createApp', () => {
  const silent = { logger: pino({ level: 'silent' }) };
  const build = (trust_proxy?: unknown) => createApp({ port: 0, host: '127.0.0.1', rate_limit: { per_second: 1, burst: 1 }, ...(trust_proxy === undefined ? {} : { trust_proxy }) } as never, (a) => {
    a.get('/', () => ({ ok: true }));
  }, silent);
  async function statusesFor(trust: unknown, forwarded: string[]): Promise<number[]> {
    const server = await build(trust).listen({ handleSignals: false });
    try {
      const out: number[] = [];
      for (const f of forwarded) out.push((await request(server.url).get('/').set('X-Forwarded-For', f)).status);
      return out;
    } finally {
      await server.close();
    }
  }
  it('should ignore X-Forwarded-For by default (off)', async () => {
    assert.deepEqual(await statusesFor(undefined, ['203.0.113.1', '203.0.113.2']), [200, 429]);
  });
  it("should key by the forwarded client when the proxy is trusted ('loopback')", async () => {
    assert.deepEqual(await statusesFor('loopback', ['203.0.113.1', '203.0.113.2', '203.0.113.1']), [200, 200, 429]);
  });
  it('should trust the given number of hops, as Express does', async () => {
    // One hop: the address the loopback proxy saw, i.e. the right-most entry.
    assert.deepEqual(await statusesFor(1, ['198.51.100.9, 203.0.113.1', '198.51.100.9, 203.0.113.2', '198.51.100.7, 203.0.113.1']), [200, 200, 429]);
  });
  it('should not believe a forwarded address when the peer is not a trusted proxy', async () => {
    assert.deepEqual(await statusesFor('10.0.0.0/8', ['203.0.113.1', '203.0.113.2']), [200, 429]);
  });
  for (const [what, value] of [['a negative hop count', -1], ['a malformed subnet', '10.0.0.0/99'], ['an unknown name', 'localhost'], ['an object', { a: 1 }]] as const) {
    it(`should refuse ${what} with a ConfigError`, () => {
      assert.throws(() => build(value), (err: unknown) => err instanceof ConfigError && /trust_proxy/.test(err.message));
    });
  }
});
