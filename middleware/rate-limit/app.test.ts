import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import request from 'supertest';
import { pino } from 'pino';
import { createApp, type App } from '../../lib/index.js';

const silent = { logger: pino({ level: 'silent' }) };

/** GET from a chosen loopback source address; resolves with status, headers and body text. */
function getFrom(url: string, localAddress: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { localAddress, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      })
      .on('error', reject);
  });
}

describe('rateLimit inside createApp', () => {
  describe('when ServerConfig.rate_limit is set (per IP)', () => {
    let app: App;
    let server: { url: string; close(): Promise<void> };
    before(async () => {
      app = createApp({ port: 0, host: '127.0.0.1', rate_limit: { per_second: 1, burst: 2 } }, (a) => {
        a.get('/a', () => ({ route: 'a' }));
        a.get('/b', () => ({ route: 'b' }));
      }, silent);
      server = await app.listen({ handleSignals: false });
    });
    after(() => server.close());

    it('should share one bucket per client across routes and answer 429 problems', async () => {
      const first = await getFrom(`${server.url}/a`, '127.0.0.1');
      assert.equal(first.status, 200);
      assert.equal(first.headers['ratelimit-policy'], '2;w=2');
      assert.equal((await getFrom(`${server.url}/b`, '127.0.0.1')).status, 200);
      const refused = await getFrom(`${server.url}/a`, '127.0.0.1');
      assert.equal(refused.status, 429);
      assert.equal(refused.headers['retry-after'], '1');
      assert.match(refused.headers['content-type']!, /^application\/problem\+json/);
      assert.equal(JSON.parse(refused.body).type, 'https://keel.dev/errors/rate-limit-exceeded');
    });
    it('should give another address its own bucket', async () => {
      assert.equal((await getFrom(`${server.url}/a`, '127.0.0.2')).status, 200);
    });
  });

  describe('when AppOptions.rateLimit gives a key function (behind a reverse proxy)', () => {
    let server: { url: string; close(): Promise<void> };
    before(async () => {
      const app = createApp({ port: 0, host: '127.0.0.1', rate_limit: { per_second: 1, burst: 1 } }, (a) => a.get('/a', () => ({ ok: true })), {
        ...silent,
        // The proxy's address is everyone's socket address; the client is named by the proxy's header.
        rateLimit: { key: (req) => String(req.headers['x-client'] ?? 'anonymous') },
      });
      server = await app.listen({ handleSignals: false });
    });
    after(() => server.close());

    it('should keep a bucket per key, not per socket address', async () => {
      const get = (client: string) => fetch(`${server.url}/a`, { headers: { 'x-client': client } });
      assert.equal((await get('alice')).status, 200);
      assert.equal((await get('alice')).status, 429);
      assert.equal((await get('bob')).status, 200);
    });
  });

  describe('when a route carries its own rate_limit', () => {
    it('should limit that route with its own bucket, leaving the server limit alone', async () => {
      const router = createApp({ rate_limit: { per_second: 100, burst: 100, ip_based: false } }, (a) => {
        a.get('/tight', () => ({ ok: true }), { rate_limit: { per_second: 1, burst: 1, ip_based: false } });
        a.get('/loose', () => ({ ok: true }));
      }, silent).intoRouter();
      assert.equal((await request(router).get('/tight')).status, 200);
      assert.equal((await request(router).get('/tight')).status, 429);
      const loose = await request(router).get('/loose');
      assert.equal(loose.status, 200);
      assert.equal(loose.headers['ratelimit'], 'limit=100, remaining=99, reset=1');
    });
  });

  describe('when a route turns the limit off with enabled: false', () => {
    it('should not limit that route, while the server limit holds elsewhere', async () => {
      const router = createApp({ rate_limit: { per_second: 1, burst: 1, ip_based: false } }, (a) => {
        a.get('/open', () => ({ ok: true }), { rate_limit: { enabled: false } });
        a.get('/limited', () => ({ ok: true }));
      }, silent).intoRouter();
      for (let i = 0; i < 3; i++) assert.equal((await request(router).get('/open')).status, 200);
      assert.equal((await request(router).get('/open')).headers['ratelimit'], undefined);
      assert.equal((await request(router).get('/limited')).status, 200);
      assert.equal((await request(router).get('/limited')).status, 429);
    });
    it('should turn the server limit off with ServerConfig.rate_limit.enabled: false', async () => {
      const router = createApp({ rate_limit: { enabled: false, per_second: 1, burst: 1 } }, (a) => a.get('/a', () => ({ ok: true })), silent).intoRouter();
      for (let i = 0; i < 3; i++) assert.equal((await request(router).get('/a')).status, 200);
    });
  });

  describe('when ip_based is false', () => {
    it('should refuse every client once the global bucket is empty', async () => {
      const router = createApp({ rate_limit: { per_second: 1, burst: 1, ip_based: false } }, (a) => {
        a.get('/', () => ({ ok: true }));
      }, silent).intoRouter();
      assert.equal((await request(router).get('/')).status, 200);
      assert.equal((await request(router).get('/')).status, 429);
    });
  });
});
