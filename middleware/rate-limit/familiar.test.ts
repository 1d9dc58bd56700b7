/**
 * rateLimit with express-rate-limit's options, against express-rate-limit itself on the same
 * requests, under Express 4 and 5: same statuses, same headers, same bodies when the options ask for
 * express-rate-limit's answer. The one intended difference, asserted below: with none of `message`,
 * `handler`, `statusCode`, a limited request gets keel's 429 application/problem+json (RFC 9457).
 * The Store API, validations and configuration errors: window.test.ts; a shared Redis: window-redis.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rateLimit as packageRateLimit } from 'express-rate-limit';
import request from 'supertest';
import { pino } from 'pino';
import { ConfigError } from '../../lib/http/errors.js';
import { createApp } from '../../lib/index.js';
import { EXPRESS_VERSIONS, type ExpressFactory } from '../../test/helpers/express-versions.js';
import { rateLimit } from './index.js';

type Mw = (req: any, res: any, next: any) => void;
interface Answer { status: number; headers: Record<string, string | undefined>; body: string; type: string | undefined }

/** An app with the limiter, a route that fails (400), and an error handler that shows what reached it. */
function appWith(express: ExpressFactory, mw: Mw, setup?: (app: ReturnType<ExpressFactory>) => void) {
  const app = express();
  setup?.(app);
  app.use(mw);
  app.get('/', (_req, res) => void res.json({ ok: true }));
  app.get('/info', (req, res) => void res.json((req as unknown as Record<string, unknown>)[String(req.query.property ?? 'rateLimit')] ?? null));
  app.get('/fail', (_req, res) => void res.status(400).json({ ok: false }));
  app.use((err: Error, _req: unknown, res: { status(n: number): { json(b: unknown): void } }, _next: unknown) => {
    res.status(500).json({ caught: err.message });
  });
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
const pick = (a: Answer, names: string[]) => Object.fromEntries(names.map((n) => [n, a.headers[n]]));
/**
 * The same headers on both answers, except that values counting seconds until the window ends (or, for
 * X-RateLimit-Reset, the instant it ends) may differ by 1: the two limiters' windows start a few ms
 * apart and a loaded machine can put a second boundary between them.
 */
function sameHeaders(keel: Answer, pkg: Answer, names: string[]): void {
  const split = (name: string, v: string | undefined): [string | undefined, number[]] => {
    if (v === undefined) return [v, []];
    const seconds: number[] = [];
    const whole = ['retry-after', 'ratelimit-reset', 'x-ratelimit-reset'].includes(name);
    const masked = whole ? '#' : v.replace(/(reset=|t=)(\d+)/g, (_m, k: string, n: string) => (seconds.push(Number(n)), `${k}#`));
    if (whole) seconds.push(Number(v));
    return [masked, seconds];
  };
  for (const name of names) {
    const [k, ks] = split(name, keel.headers[name]);
    const [p, ps] = split(name, pkg.headers[name]);
    assert.equal(k, p, name);
    ks.forEach((n, i) => assert.ok(Math.abs(n - ps[i]!) <= 1, `${name}: ${keel.headers[name]} vs ${pkg.headers[name]}`));
  }
}
const LEGACY = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
const DRAFT6 = ['ratelimit-policy', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];
const DRAFT7 = ['ratelimit-policy', 'ratelimit'];
/** Compare both limiters built from the same options (a function, so each gets its own store). */
const compare = (express: ExpressFactory, options: () => Record<string, unknown>, requests: { path?: string; headers?: Record<string, string> }[]) =>
  both(appWith(express, packageRateLimit(options() as never)), appWith(express, rateLimit(options() as never)), requests);

for (const { name, express } of EXPRESS_VERSIONS) {
  describe(`rateLimit with express-rate-limit options under ${name}`, () => {
    describe('when the policy is 3 per 15 minutes with the default headers', () => {
      it('should allow exactly 3, refuse the 4th and send the same X-RateLimit-* headers and Retry-After as express-rate-limit', async () => {
        const [pkg, keel] = await compare(express, () => ({ windowMs: 15 * 60_000, limit: 3 }), times(4));
        assert.deepEqual(statuses(keel), [200, 200, 200, 429]);
        assert.deepEqual(statuses(keel), statuses(pkg));
        for (let i = 0; i < 4; i++) sameHeaders(keel[i]!, pkg[i]!, [...LEGACY, 'retry-after', 'ratelimit']);
        assert.match(keel[3]!.headers['retry-after'] ?? '', /^(899|900)$/);
      });
      it('should answer the refusal with a 429 problem where express-rate-limit sends its text (intended difference)', async () => {
        const [pkg, keel] = await compare(express, () => ({ windowMs: 60_000, limit: 1 }), times(2));
        assert.equal(pkg[1]!.body, 'Too many requests, please try again later.');
        assert.match(keel[1]!.type ?? '', /^application\/problem\+json/);
        const problem = JSON.parse(keel[1]!.body);
        assert.equal(problem.status, 429);
        assert.equal(problem.detail, 'Rate limit exceeded: 1 request per minute; retry in 60 s');
      });
    });

    describe('when message, statusCode or handler ask for express-rate-limit\'s answer', () => {
      const cases: [string, () => Record<string, unknown>][] = [
        ['a string message', () => ({ limit: 1, message: 'Too many login attempts' })],
        ['an object message (JSON)', () => ({ limit: 1, message: { error: 'slow down' } })],
        ['a message function', () => ({ limit: 1, message: (req: { path: string }) => `no more ${req.path}` })],
        ['an async message function', () => ({ limit: 1, message: async () => 'later' })],
        ['a statusCode', () => ({ limit: 1, statusCode: 503 })],
        ['a handler', () => ({ limit: 1, handler: (_req: unknown, res: { status(n: number): { end(b: string): void } }) => res.status(420).end('Enhance your calm') })],
      ];
      for (const [what, options] of cases) {
        it(`should answer exactly as express-rate-limit does for ${what}`, async () => {
          const [pkg, keel] = await compare(express, options, times(2));
          assert.notEqual(keel[1]!.status, 200);
          assert.deepEqual(keel.map((a) => [a.status, a.type, a.body]), pkg.map((a) => [a.status, a.type, a.body]));
        });
      }
    });

    describe('when the limit is 0, a function or an async function', () => {
      for (const [what, limit] of [['max: 0', 0], ['a function', () => 2], ['an async function', async () => 2]] as const) {
        it(`should refuse as express-rate-limit does with ${what}`, async () => {
          const key = what === 'max: 0' ? 'max' : 'limit';
          const [pkg, keel] = await compare(express, () => ({ [key]: limit, validate: false }), times(3));
          assert.deepEqual(statuses(keel), statuses(pkg));
          assert.deepEqual(statuses(keel), what === 'max: 0' ? [429, 429, 429] : [200, 200, 429]);
        });
      }
    });

    describe('when standardHeaders picks a draft', () => {
      const drafts: [string, unknown, string[]][] = [
        ['true (draft-6)', true, DRAFT6], ['draft-6', 'draft-6', DRAFT6], ['draft-7', 'draft-7', DRAFT7], ['draft-8', 'draft-8', DRAFT7],
      ];
      for (const [what, standardHeaders, names] of drafts) {
        it(`should write the ${what} headers exactly as express-rate-limit does`, async () => {
          const [pkg, keel] = await compare(express, () => ({ windowMs: 2 * 3_600_000, limit: 2, standardHeaders, legacyHeaders: false }), times(3));
          for (let i = 0; i < 3; i++) {
            assert.ok(keel[i]!.headers[names[0]!], `${names[0]} is sent`);
            sameHeaders(keel[i]!, pkg[i]!, [...names, ...LEGACY, 'retry-after']);
          }
        });
      }
      it('should name the draft-8 policy after identifier, as express-rate-limit does', async () => {
        const [pkg, keel] = await compare(express, () => ({ limit: 5, standardHeaders: 'draft-8', identifier: 'keep-calm' }), times(1));
        assert.match(keel[0]!.headers.ratelimit ?? '', /^"keep-calm"; r=4; t=60$/);
        sameHeaders(keel[0]!, pkg[0]!, DRAFT7);
      });
    });

    describe('when skipSuccessfulRequests or skipFailedRequests is set', () => {
      const seq = [{ path: '/' }, { path: '/fail' }, { path: '/' }, { path: '/fail' }, { path: '/' }, { path: '/fail' }, { path: '/' }];
      for (const option of ['skipSuccessfulRequests', 'skipFailedRequests']) {
        it(`should take back the hits ${option} names after the response, as express-rate-limit does`, async () => {
          const [pkg, keel] = await compare(express, () => ({ limit: 2, [option]: true }), seq);
          assert.deepEqual(statuses(keel), statuses(pkg));
          assert.ok(statuses(keel).includes(429), 'the hits that count still reach the limit');
        });
      }
      it('should use requestWasSuccessful to decide, as express-rate-limit does', async () => {
        const options = () => ({ limit: 2, skipSuccessfulRequests: true, requestWasSuccessful: (_req: unknown, res: { statusCode: number }) => res.statusCode === 400 });
        const [pkg, keel] = await compare(express, options, seq);
        assert.deepEqual(statuses(keel), statuses(pkg));
      });
    });

    describe('when the next handler reads req.rateLimit', () => {
      it('should see limit, used, remaining and resetTime as express-rate-limit sets them', async () => {
        const [pkg, keel] = await compare(express, () => ({ limit: 4 }), times(2, { path: '/info' }));
        const info = (a: Answer) => { const { limit, used, remaining, resetTime } = JSON.parse(a.body); return { limit, used, remaining, resetTime: typeof resetTime }; };
        assert.deepEqual(info(keel[1]!), { limit: 4, used: 2, remaining: 2, resetTime: 'string' });
        assert.deepEqual(keel.map(info), pkg.map(info));
      });
      it('should use requestPropertyName', async () => {
        const app = appWith(express, rateLimit({ limit: 4, requestPropertyName: 'quota' }));
        const body = JSON.parse((await send(app, '/info?property=quota')).body);
        assert.deepEqual([body.limit, body.used, body.remaining], [4, 1, 3]);
        // The loopback client, IPv4 or IPv4-mapped IPv6 depending on the socket: keyed as IPv4 (ipKeyGenerator).
        assert.equal(body.key, '127.0.0.1');
      });
    });

    describe('when a keyGenerator is given', () => {
      for (const kind of ['sync', 'async'] as const) {
        it(`should keep one window per key (${kind}), as express-rate-limit does`, async () => {
          const keyGenerator = kind === 'sync' ? (req: { headers: Record<string, string> }) => req.headers['x-user'] ?? 'anon' : async (req: { headers: Record<string, string> }) => req.headers['x-user'] ?? 'anon';
          const seq = ['a', 'a', 'b', 'a', 'b', 'b'].map((u) => ({ headers: { 'x-user': u } }));
          const [pkg, keel] = await compare(express, () => ({ limit: 2, keyGenerator }), seq);
          assert.deepEqual(statuses(keel), statuses(pkg));
          assert.deepEqual(statuses(keel), [200, 200, 200, 429, 200, 429]);
        });
      }
    });

    describe('when skip is given', () => {
      it('should neither count nor limit skipped requests, as express-rate-limit does', async () => {
        const seq = [{ path: '/' }, { path: '/fail' }, { path: '/fail' }, { path: '/' }, { path: '/' }];
        const [pkg, keel] = await compare(express, () => ({ limit: 2, skip: (req: { path: string }) => req.path === '/fail' }), seq);
        assert.deepEqual(statuses(keel), statuses(pkg));
        assert.deepEqual(statuses(keel), [200, 400, 400, 200, 429]);
      });
    });

    describe('when skip, keyGenerator or handler throws or rejects', () => {
      const boom = () => { throw new Error('boom'); };
      const cases: [string, () => Record<string, unknown>][] = [
        ['skip throws', () => ({ skip: boom })],
        ['keyGenerator rejects', () => ({ keyGenerator: async () => boom() })],
        ['handler throws', () => ({ limit: 0, validate: false, handler: boom })],
      ];
      for (const [what, options] of cases) {
        it(`should hand the error to next(err) as express-rate-limit does when ${what}`, async () => {
          const [pkg, keel] = await compare(express, options, times(1));
          assert.deepEqual(JSON.parse(keel[0]!.body), { caught: 'boom' });
          assert.deepEqual(keel.map((a) => [a.status, a.body]), pkg.map((a) => [a.status, a.body]));
        });
      }
    });

    describe("when the app sets 'trust proxy'", () => {
      it('should key clients by req.ip, so each forwarded client has its own window, as express-rate-limit does', async () => {
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

describe('RateLimitConfig per_second', () => {
  it('should accept a fractional rate (3 per 15 minutes) and announce the 900 s window', async () => {
    const app = appWith(EXPRESS_VERSIONS[1]!.express, rateLimit({ per_second: 3 / 900, burst: 3 }));
    const first = await send(app);
    assert.equal(first.headers['ratelimit-policy'], '3;w=900');
    for (let i = 0; i < 2; i++) assert.equal((await send(app)).status, 200);
    const refused = await send(app);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers['retry-after'], '300');
    assert.match(JSON.parse(refused.body).detail, /refilled at 1 per 5 minutes; retry in 300 s/);
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
