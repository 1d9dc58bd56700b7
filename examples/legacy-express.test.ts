import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Writable } from 'node:stream';
import request from 'supertest';
import { pino } from 'pino';
import { buildLegacyApp } from './legacy-express.js';

const SHOP = 'https://shop.example.com';

function quietApp() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _e, cb) {
      lines.push(JSON.parse(chunk.toString()));
      cb();
    },
  });
  return { app: buildLegacyApp({ logger: pino({ level: 'info' }, stream) }), lines };
}

describe('examples/legacy-express: the legacy routes keep working', () => {
  const { app } = quietApp();

  it('should list and create orders as before', async () => {
    assert.deepEqual((await request(app).get('/api/orders')).body, [{ id: 1, item: 'keel' }]);
    const created = await request(app).post('/api/orders').send({ item: 'sail' });
    assert.equal(created.status, 201);
    assert.deepEqual(created.body, { id: 2, item: 'sail' });
    assert.equal((await request(app).post('/api/orders').send({})).status, 400);
  });
});

describe('examples/legacy-express: keel request ids and tracing', () => {
  it('should generate a request id, echo a valid one, and trace every request', async () => {
    const { app, lines } = quietApp();
    const generated = await request(app).get('/api/whoami');
    assert.match(generated.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(generated.body.requestId, generated.headers['x-request-id']);
    assert.match(generated.body.traceId, /^[0-9a-f]{32}$/);

    const echoed = await request(app).get('/api/whoami').set('X-Request-ID', 'order-42');
    assert.equal(echoed.headers['x-request-id'], 'order-42');
    assert.equal(echoed.body.requestId, 'order-42');
    // The record is written on the response's 'close', which may follow the client's read.
    while (lines.length < 2) await new Promise((r) => setImmediate(r));
    const last = lines.at(-1)!;
    assert.equal(last.request_id, 'order-42');
    assert.equal(last.route, '/api/whoami');
  });
});

describe('examples/legacy-express: keel CORS', () => {
  const { app } = quietApp();

  it('should answer a preflight from the shop with 204', async () => {
    const res = await request(app).options('/api/orders').set({ Origin: SHOP, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], SHOP);
    assert.equal(res.headers['access-control-allow-methods'], 'GET, POST');
    assert.equal(res.headers['access-control-max-age'], '600');
  });

  it('should refuse a preflight from another origin with a 403 problem', async () => {
    const res = await request(app).options('/api/orders').set({ Origin: 'https://evil.test', 'Access-Control-Request-Method': 'POST' });
    assert.equal(res.status, 403);
    assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
  });

  it('should expose X-Request-ID to the shop on actual responses', async () => {
    const res = await request(app).get('/api/orders').set('Origin', SHOP);
    assert.equal(res.headers['access-control-allow-origin'], SHOP);
    assert.equal(res.headers['access-control-expose-headers'], 'X-Request-ID');
  });
});

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
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});
