import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import request from 'supertest';
import { pino } from 'pino';
import { SignJWT } from 'jose';
import { EXPRESS_VERSIONS } from '../test/helpers/express-versions.js';
import { buildLegacyApp, EXAMPLE_JWT_SECRET, type LegacyAppOptions } from './legacy-express.js';

const SHOP = 'https://shop.example.com';

function quietApp(options: LegacyAppOptions = {}) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _e, cb) {
      lines.push(JSON.parse(chunk.toString()));
      cb();
    },
  });
  return { app: buildLegacyApp({ logger: pino({ level: 'info' }, stream), ...options }), lines };
}

let TOKEN = '';
before(async () => {
  TOKEN = await new SignJWT({ sub: 'ann' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('5m').sign(new TextEncoder().encode(EXAMPLE_JWT_SECRET));
});

for (const { name, express } of EXPRESS_VERSIONS) {
  const on = (options: LegacyAppOptions = {}) => quietApp({ express: express as LegacyAppOptions['express'], ...options });

  describe(`examples/legacy-express under ${name}: the legacy routes keep working`, () => {
    it('should list orders, and create one with a token', async () => {
      const { app } = on();
      assert.deepEqual((await request(app).get('/api/orders')).body, [{ id: 1, item: 'keel' }]);
      const created = await request(app).post('/api/orders').set('Authorization', `Bearer ${TOKEN}`).send({ item: 'sail' });
      assert.equal(created.status, 201);
      assert.deepEqual(created.body, { id: 2, item: 'sail', by: 'ann' });
      assert.equal((await request(app).post('/api/orders').set('Authorization', `Bearer ${TOKEN}`).send({})).status, 400);
    });
  });

  describe(`examples/legacy-express under ${name}: keel request ids and tracing`, () => {
    it('should generate a request id, echo a valid one, and trace every request', async () => {
      const { app, lines } = on();
      const generated = await request(app).get('/api/whoami');
      assert.match(generated.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);
      assert.equal(generated.body.requestId, generated.headers['x-request-id']);
      assert.match(generated.body.traceId, /^[0-9a-f]{32}$/);

      const echoed = await request(app).get('/api/whoami').set('X-Request-ID', 'order-42');
      assert.equal(echoed.headers['x-request-id'], 'order-42');
      assert.equal(echoed.body.requestId, 'order-42');
      // The record is written on the response's 'close', which may follow the client's read.
      while (lines.filter((l) => l.route).length < 2) await new Promise((r) => setImmediate(r));
      const last = lines.filter((l) => l.route).at(-1)!;
      assert.equal(last.request_id, 'order-42');
      assert.equal(last.route, '/api/whoami');
    });
  });

  describe(`examples/legacy-express under ${name}: keel CORS`, () => {
    it('should answer a preflight from the shop with 204', async () => {
      const { app } = on();
      const res = await request(app).options('/api/orders').set({ Origin: SHOP, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' });
      assert.equal(res.status, 204);
      assert.equal(res.headers['access-control-allow-origin'], SHOP);
      assert.equal(res.headers['access-control-allow-methods'], 'GET, POST');
      assert.equal(res.headers['access-control-max-age'], '600');
    });

    it('should refuse a preflight from another origin with a 403 problem', async () => {
      const { app } = on();
      const res = await request(app).options('/api/orders').set({ Origin: 'https://evil.test', 'Access-Control-Request-Method': 'POST' });
      assert.equal(res.status, 403);
      assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
    });
  });

  describe(`examples/legacy-express under ${name}: refusals go through the app's error handlers to problemHandler()`, () => {
    it('should answer a request without a token with a 401 problem, after the express-jwt-era handler saw it', async () => {
      const { app, lines } = on();
      const res = await request(app).post('/api/orders').send({ item: 'sail' });
      assert.equal(res.status, 401);
      assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
      assert.equal(res.headers['www-authenticate'], 'Bearer');
      assert.equal(res.body.type, 'https://keel.dev/errors/unauthorized');
      const refused = lines.find((l) => l.msg === 'refused token');
      assert.equal(refused?.code, 'credentials_required');
      assert.equal(refused?.requestId, res.headers['x-request-id']);
    });

    it('should answer an oversized body with a 413 problem', async () => {
      const { app } = on({ maxBodySize: 64 });
      const res = await request(app).post('/api/orders').set('Authorization', `Bearer ${TOKEN}`).send({ item: 'x'.repeat(200) });
      assert.equal(res.status, 413);
      assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
      assert.equal(res.body.limit, 64);
    });

    it('should answer a client over its rate with a 429 problem, Retry-After and RateLimit headers', async () => {
      const { app } = on({ rate: { perSecond: 1, burst: 2 } });
      const agent = request(app);
      assert.equal((await agent.get('/api/orders')).status, 200);
      assert.equal((await agent.get('/api/orders')).status, 200);
      const res = await agent.get('/api/orders');
      assert.equal(res.status, 429);
      assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
      assert.match(res.headers['retry-after'] ?? '', /^\d+$/);
      assert.match(res.headers['ratelimit'] ?? '', /remaining=0/);
    });

    it("should answer express.json()'s 400 for a malformed body as a problem", async () => {
      const { app } = on();
      const res = await request(app).post('/api/orders').set('Authorization', `Bearer ${TOKEN}`).set('Content-Type', 'application/json').send('{"item":');
      assert.equal(res.status, 400);
      assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
    });
  });
}

describe('examples/legacy-express: run directly', () => {
  it('should listen on PORT and serve requests', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/legacy-express.ts'], {
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      child.stdout.setEncoding('utf8');
      let url: string | undefined;
      while (!url) {
        const [chunk] = (await once(child.stdout, 'data')) as [string];
        out += chunk;
        url = /listening on (http:\/\/[\d.]+:\d+)/.exec(out)?.[1];
      }
      const res = await fetch(`${url}/api/orders`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), [{ id: 1, item: 'keel' }]);
      const refused = await fetch(`${url}/api/orders`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"item":"sail"}' });
      assert.equal(refused.status, 401);
      assert.equal(refused.headers.get('content-type'), 'application/problem+json');
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});
