import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http, { IncomingMessage, ServerResponse } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type express from 'express';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import request from 'supertest';
import { ConfigError } from '../../lib/http/errors.js';
import { IPV6_KEY_MEMO_SIZE, MemoryStore, rateLimit, type RateLimitExtensions, type RateLimitOptions } from './index.js';
import { describeOnReject, describeOnRejectConfig } from '../../test/helpers/on-reject.js';

// Every test in this block runs under Express 4 and under Express 5 (test/helpers/express-versions.ts).
for (const { name: expressVersion, express } of EXPRESS_VERSIONS) describe(`under ${expressVersion}`, () => {
function appWith(options: RateLimitOptions, extensions?: RateLimitExtensions): express.Express {
  const app = express();
  app.use(rateLimit(options, extensions));
  app.get('/', (_req, res) => {
    res.json({ ok: true });
  });
  return app;
}

/** GET / from a chosen loopback source address (127.0.0.0/8 is all loopback on Linux). */
function getFrom(port: number, localAddress: string): Promise<{ status: number; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/', localAddress, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
      })
      .on('error', reject);
  });
}

/** Run the middleware in-process for a request from `remoteAddress`; resolves with the status. */
function statusFor(mw: ReturnType<typeof rateLimit>, remoteAddress: string): Promise<number> {
  const socket = new Socket();
  Object.defineProperty(socket, 'remoteAddress', { value: remoteAddress });
  const req = new IncomingMessage(socket);
  req.method = 'GET';
  req.url = '/';
  const res = new ServerResponse(req);
  return new Promise((resolve) => {
    mw(req, res, () => resolve(200));
    // Without a socket the response never emits 'finish'; the memory store answers synchronously.
    setImmediate(() => resolve(res.writableEnded ? res.statusCode : -1));
  });
}

describe('rateLimit', () => {
  describe('when the record says enabled: false', () => {
    it('should let every request through without rate-limit headers', async () => {
      assert.equal(rateLimit({ enabled: false, per_second: 1, burst: 1 }).name, 'rateLimitDisabled');
      const app = appWith({ enabled: false, per_second: 1, burst: 1 });
      for (let i = 0; i < 3; i++) {
        const res = await request(app).get('/');
        assert.equal(res.status, 200);
        assert.equal(res.headers['ratelimit'], undefined);
      }
    });
  });

  describe('when the configuration is invalid', () => {
    const cases: Array<[string, unknown, unknown, RegExp]> = [
      ['per_second 0', { per_second: 0 }, {}, /per_second/],
      ['a per_second below one per day', { per_second: 1 / 86_401 }, {}, /per_second/],
      ['burst 0', { burst: 0 }, {}, /burst/],
      ['a burst given as a string', { burst: '10' }, {}, /burst/],
      ['ip_based that is not a boolean', { ip_based: 'yes' }, {}, /ip_based/],
      ['an unknown key', { windowSize: 1000 }, {}, /Unknown key "windowSize"/],
      ['burst given twice', { burst: 1, burst_: 2 }, {}, /burst_/],
      ['a store without take()', {}, { store: {} }, /store/],
      ['a key that is not a function', {}, { key: 'ip' }, /key/],
      ['ipv6Subnet 0', {}, { ipv6Subnet: 0 }, /ipv6Subnet/],
      ['ipv6Subnet 129', {}, { ipv6Subnet: 129 }, /ipv6Subnet/],
      ['passOnStoreError that is not a boolean', {}, { passOnStoreError: 1 }, /passOnStoreError/],
      ['an unknown extension', {}, { windowMs: 5 }, /windowMs/],
    ];
    for (const [name, options, ext, message] of cases) {
      it(`should throw a ConfigError for ${name}`, () => {
        assert.throws(() => rateLimit(options as RateLimitOptions, ext as RateLimitExtensions), (err: unknown) => err instanceof ConfigError && message.test(err.message));
      });
    }
  });

  describe('when used with the defaults (100 per second, burst 200, per IP)', () => {
    it('should announce the policy and the remaining quota', async () => {
      const res = await request(appWith({})).get('/');
      assert.equal(res.status, 200);
      assert.equal(res.headers['ratelimit-policy'], '200;w=2');
      assert.equal(res.headers['ratelimit'], 'limit=200, remaining=199, reset=1');
    });
  });

  describe('when a client exceeds its burst', () => {
    const app = appWith({ perSecond: 1, burst: 2 });
    it('should serve the burst, then answer 429 problems with Retry-After', async () => {
      const agent = request(app);
      assert.equal((await agent.get('/')).headers['ratelimit'], 'limit=2, remaining=1, reset=1');
      assert.equal((await agent.get('/')).headers['ratelimit'], 'limit=2, remaining=0, reset=2');
      const res = await agent.get('/');
      assert.equal(res.status, 429);
      assert.match(res.headers['content-type']!, /^application\/problem\+json/);
      assert.equal(res.headers['retry-after'], '1');
      assert.equal(res.headers['ratelimit'], 'limit=2, remaining=0, reset=2');
      assert.deepEqual(res.body, {
        type: 'https://keel.dev/errors/rate-limit-exceeded',
        title: 'Too Many Requests',
        status: 429,
        detail: 'Rate limit exceeded: 2 requests at once, refilled at 1 per second; retry in 1 s',
      });
    });
  });

  describe('when time passes', () => {
    it('should let the client in again once a token is back', async () => {
      // One token a second: the refusal holds however slow a loaded machine is between the first two
      // requests (at 20/s a 50 ms stall let the second one through).
      const app = appWith({ per_second: 1, burst: 1 });
      assert.equal((await request(app).get('/')).status, 200);
      assert.equal((await request(app).get('/')).status, 429);
      await sleep(1100);
      assert.equal((await request(app).get('/')).status, 200);
    });
  });

  describe('when clients come from different addresses', () => {
    let server: http.Server;
    let globalServer: http.Server;
    const port = (s: http.Server) => (s.address() as AddressInfo).port;
    before(async () => {
      server = appWith({ per_second: 1, burst: 1 }).listen(0, '127.0.0.1');
      globalServer = appWith({ per_second: 1, burst: 1, ip_based: false }).listen(0, '127.0.0.1');
      await Promise.all([server, globalServer].map((s) => new Promise((r) => s.once('listening', r))));
    });
    after(() => {
      server.close();
      globalServer.close();
    });
    it('should give each IP its own bucket', async () => {
      assert.equal((await getFrom(port(server), '127.0.0.1')).status, 200);
      assert.equal((await getFrom(port(server), '127.0.0.1')).status, 429);
      assert.equal((await getFrom(port(server), '127.0.0.2')).status, 200);
    });
    it('should share one bucket between all IPs when ip_based is false', async () => {
      assert.equal((await getFrom(port(globalServer), '127.0.0.1')).status, 200);
      const res = await getFrom(port(globalServer), '127.0.0.2');
      assert.equal(res.status, 429);
      assert.equal(res.headers['retry-after'], '1');
    });
  });

  describe('when the client address is IPv6', () => {
    it('should count one /56 as one client by default', async () => {
      const mw = rateLimit({ per_second: 1, burst: 1 });
      assert.equal(await statusFor(mw, '2001:db8:0:1::1'), 200);
      assert.equal(await statusFor(mw, '2001:db8:0:2::99'), 429, 'same /56');
      assert.equal(await statusFor(mw, '2001:db8:0:100::1'), 200, 'another /56');
    });
    it('should count whole addresses with ipv6Subnet false', async () => {
      const mw = rateLimit({ per_second: 1, burst: 1 }, { ipv6Subnet: false });
      assert.equal(await statusFor(mw, '2001:db8::1'), 200);
      assert.equal(await statusFor(mw, '2001:db8::2'), 200);
    });
    it('should keep counting an address it has seen before, also after its memo of keys starts over', async () => {
      // A clock that stands still: no token comes back while the memo fills.
      const mw = rateLimit({ per_second: 1, burst: 2 }, { store: new MemoryStore({ now: () => 0 }) });
      assert.equal(await statusFor(mw, '2001:db8:0:1::1'), 200);
      assert.equal(await statusFor(mw, '2001:db8:0:1::1'), 200);
      for (let i = 0; i < IPV6_KEY_MEMO_SIZE; i++) await statusFor(mw, `2001:db8:${(i + 2).toString(16)}::1`);
      assert.equal(await statusFor(mw, '2001:db8:0:1::1'), 429);
    });
    it('should treat an IPv4-mapped address as the IPv4 client', async () => {
      const mw = rateLimit({ per_second: 1, burst: 1 });
      assert.equal(await statusFor(mw, '203.0.113.9'), 200);
      assert.equal(await statusFor(mw, '::ffff:203.0.113.9'), 429);
    });
  });

  describe('when a key function is given', () => {
    it('should bucket by its result', async () => {
      const app = appWith({ per_second: 1, burst: 1 }, { key: (req) => String(req.headers['x-tenant']) });
      assert.equal((await request(app).get('/').set('X-Tenant', 'a')).status, 200);
      assert.equal((await request(app).get('/').set('X-Tenant', 'a')).status, 429);
      assert.equal((await request(app).get('/').set('X-Tenant', 'b')).status, 200);
    });
    it('should answer a 500 problem without internals when it throws', async () => {
      const app = appWith({}, { key: () => { throw new Error('secret internals'); } });
      const res = await request(app).get('/');
      assert.equal(res.status, 500);
      assert.match(res.headers['content-type']!, /^application\/problem\+json/);
      assert.doesNotMatch(res.text, /secret internals/);
    });
  });

  describe('when the store fails', () => {
    const broken = { take: () => Promise.reject(new Error('ECONNREFUSED 10.0.0.5:6379')) };
    const throwing = { take: () => { throw new Error('boom'); } };
    it('should answer 503 without internals by default', async () => {
      for (const store of [broken, throwing]) {
        const res = await request(appWith({}, { store })).get('/');
        assert.equal(res.status, 503);
        assert.equal(res.body.detail, 'The rate limiter is unavailable');
        assert.doesNotMatch(res.text, /ECONNREFUSED|boom/);
      }
    });
    it('should let requests through with passOnStoreError', async () => {
      const res = await request(appWith({}, { store: broken, passOnStoreError: true })).get('/');
      assert.equal(res.status, 200);
    });
  });
});

// ------------------------------------------------------------------ conformance corpus (read-only, never copied)
describe('rateLimit against the conformance corpus', () => {
  let cases: Array<{ id: string; http: { handler: { middleware: { rate_limit: Record<string, unknown> } }; request: { headers?: Record<string, string> }; expected_response: { status_code: number } } }>;
  try {
    cases = JSON.parse(readFileSync(new URL('../../../shared/conformance/fixtures/rate_limit.json', import.meta.url), 'utf8'));
  } catch {
    it('should run the corpus cases (skipped: ../shared/conformance is absent)', { skip: 'conformance corpus not found' }, () => {});
    return;
  }
  for (const c of cases) {
    it(`${c.id}: should answer ${c.http.expected_response.status_code}`, async () => {
      // warmup_* and sleep_ms_between drive the runner, not the record.
      const { warmup_requests = 0, warmup_expect_status, sleep_ms_between, ...record } = c.http.handler.middleware.rate_limit;
      void sleep_ms_between;
      const app = appWith(record as RateLimitOptions);
      const send = () => {
        let req = request(app).get('/');
        for (const [k, v] of Object.entries(c.http.request.headers ?? {})) req = req.set(k, v);
        return req;
      };
      for (let i = 0; i < (warmup_requests as number); i++) assert.equal((await send()).status, warmup_expect_status);
      assert.equal((await send()).status, c.http.expected_response.status_code);
    });
  }
});

/** A limiter whose one global bucket is already empty: the next request is refused. */
});
function exhausted(onReject: RateLimitOptions['onReject']) {
  const store = new MemoryStore();
  store.take('global', { burst: 1, perSecond: 1 });
  return rateLimit({ per_second: 1, burst: 1, ip_based: false, onReject }, { store });
}

describeOnReject('rateLimit, an empty bucket', {
  make: exhausted,
  send: (agent) => agent.get('/'),
  status: 429,
  headers: ['Retry-After', 'RateLimit', 'RateLimit-Policy'],
});
describeOnReject('rateLimit, a failed store', {
  make: (onReject) => rateLimit({ onReject }, { store: { take: () => Promise.reject(new Error('redis down')) } }),
  send: (agent) => agent.get('/'),
  status: 503,
});
describeOnRejectConfig('rateLimit', (o) => rateLimit(o), /RateLimitConfig/);

for (const { name: expressVersion, express } of EXPRESS_VERSIONS) {
  describe(`rateLimit: when onReject is 'next' and the key function throws under ${expressVersion}`, () => {
    it('should hand the thrown error itself to next(err)', async () => {
      const app = express();
      const bug = new Error('key bug');
      let seen: unknown;
      app.use(rateLimit({ onReject: 'next' }, { key: () => { throw bug; } }));
      app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
        seen = err;
        res.status(500).end();
      });
      await request(app).get('/');
      assert.equal(seen, bug);
    });
  });
}

describe('when the 429 detail puts a limit into words', () => {
  it('should say "1 request per minute" and "100 requests per 15 minutes", never "requests(s)"', async () => {
    const { requestsPerWindow, refillRate } = await import('./phrases.js');
    assert.equal(requestsPerWindow(1, 60_000), '1 request per minute');
    assert.equal(requestsPerWindow(100, 900_000), '100 requests per 15 minutes');
    assert.equal(requestsPerWindow(5, 1000), '5 requests per second');
    assert.equal(requestsPerWindow(2, 7_200_000), '2 requests per 2 hours');
    assert.equal(requestsPerWindow(3, 1500), '3 requests per 1500 ms');
    assert.equal(refillRate(2), '2 per second');
    assert.equal(refillRate(1 / 300), '1 per 5 minutes');
    assert.equal(refillRate(1 / 60), '1 per minute');
    assert.equal(refillRate(1 / 2.5), '1 per 2.5 seconds');
  });
});
