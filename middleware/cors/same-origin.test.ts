/**
 * Same-origin requests and the server-level CORS setting under createApp (issue: a route's `cors`
 * record refused the app's own pages, because browsers send `Origin` on same-origin POSTs). Real
 * sockets: the request's own origin is its scheme and Host, which supertest sets from the address.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createApp, type ServerHandle } from '../../lib/index.js';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import { cors } from './index.js';

const silent = { logger: pino({ level: 'silent' }) };
const EXAMPLE = 'https://example.com';

async function listen(config: Record<string, unknown>, routes: (a: ReturnType<typeof createApp>) => void): Promise<ServerHandle> {
  return createApp({ port: 0, ...config }, routes, silent).listen({ port: 0, host: '127.0.0.1', handleSignals: false });
}

describe('when a route with a cors record gets a request from its own origin', () => {
  let handle: ServerHandle;
  let own: string;
  before(async () => {
    handle = await listen({}, (a) => {
      a.post('/api/notes', () => ({ saved: true }), { cors: { allowed_origins: [EXAMPLE], allowed_methods: ['POST'], allowed_headers: ['Content-Type'] } });
    });
    own = new URL(handle.url).origin;
  });
  after(() => handle.close());

  const post = (headers: Record<string, string>) =>
    fetch(`${handle.url}/api/notes`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"title":"x"}' });

  it('should serve it, with no CORS headers but Vary: Origin', async () => {
    const res = await post({ origin: own });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { saved: true });
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    assert.equal(res.headers.get('access-control-allow-credentials'), null);
    assert.match(res.headers.get('vary') ?? '', /\bOrigin\b/);
  });

  it('should still refuse another port on the same host (a different origin, RFC 6454)', async () => {
    const res = await post({ origin: 'http://127.0.0.1:1' });
    assert.equal(res.status, 403);
    assert.equal(res.headers.get('content-type'), 'application/problem+json');
  });

  it('should still refuse the same host and port over the other scheme', async () => {
    const res = await post({ origin: own.replace('http:', 'https:') });
    assert.equal(res.status, 403);
  });

  it('should not believe X-Forwarded-Proto / -Host without trust_proxy', async () => {
    const res = await post({ origin: 'https://notes.example', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'notes.example' });
    assert.equal(res.status, 403);
  });

  it('should still serve the listed origin with its CORS headers', async () => {
    const res = await post({ origin: EXAMPLE });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), EXAMPLE);
  });
});

describe('when trust_proxy is set and the proxy says what the browser used', () => {
  let handle: ServerHandle;
  before(async () => {
    handle = await listen({ trust_proxy: 'loopback' }, (a) => {
      a.post('/api/notes', () => ({ saved: true }), { cors: { allowed_origins: [EXAMPLE] } });
    });
  });
  after(() => handle.close());

  it('should read the own origin from X-Forwarded-Proto and X-Forwarded-Host', async () => {
    const res = await fetch(`${handle.url}/api/notes`, {
      method: 'POST', body: '{}', headers: { 'content-type': 'application/json', origin: 'https://notes.example', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'notes.example' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
  });

  it('should refuse an origin the forwarded headers do not name', async () => {
    const res = await fetch(`${handle.url}/api/notes`, {
      method: 'POST', body: '{}', headers: { 'content-type': 'application/json', origin: 'https://evil.example', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'notes.example' },
    });
    assert.equal(res.status, 403);
  });
});

describe('when ServerConfig.cors sets CORS for every route', () => {
  let handle: ServerHandle;
  before(async () => {
    handle = await listen({ cors: { allowed_origins: [EXAMPLE], allowed_methods: ['GET', 'POST'], max_age: 600 } }, (a) => {
      a.get('/a', () => ({ route: 'a' }));
      a.post('/b', () => ({ route: 'b' }));
      a.get('/own', () => ({ route: 'own' }), { cors: { allowed_origins: ['https://partner.example'] } });
    });
  });
  after(() => handle.close());

  const preflight = (path: string, origin: string, method = 'GET') =>
    fetch(`${handle.url}${path}`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method } });

  it('should answer preflights of routes without their own record from the server-level one', async () => {
    for (const [path, method] of [['/a', 'GET'], ['/b', 'POST']] as const) {
      const res = await preflight(path, EXAMPLE, method);
      assert.equal(res.status, 204, path);
      assert.equal(res.headers.get('access-control-allow-origin'), EXAMPLE);
      assert.equal(res.headers.get('access-control-max-age'), '600');
    }
  });

  it('should decorate actual responses and refuse other origins', async () => {
    const ok = await fetch(`${handle.url}/a`, { headers: { origin: EXAMPLE } });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('access-control-allow-origin'), EXAMPLE);
    const refused = await fetch(`${handle.url}/b`, { method: 'POST', headers: { origin: 'https://evil.example' } });
    assert.equal(refused.status, 403);
  });

  it("should let a route's own record replace the server-level one", async () => {
    const partner = await preflight('/own', 'https://partner.example');
    assert.equal(partner.status, 204);
    assert.equal(partner.headers.get('access-control-allow-origin'), 'https://partner.example');
    assert.equal((await preflight('/own', EXAMPLE)).status, 403);
  });

  it('should serve requests without Origin as before', async () => {
    const res = await fetch(`${handle.url}/a`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { route: 'a' });
  });
});

describe('when ServerConfig.cors is not a CorsConfig', () => {
  it('should refuse it when the App is created, naming the key', () => {
    assert.throws(() => createApp({ cors: { allowed_origins: 'https://example.com' } as never }, () => undefined, silent), /cors\.allowed_origins/);
  });
});

for (const { name, express } of EXPRESS_VERSIONS) {
  describe(`when app.use(cors({ …, rejectDisallowedOrigins: true })) under ${name} gets a request from the app's own origin`, () => {
    let server: Server;
    let base: string;
    before(async () => {
      const app = express();
      app.use(cors({ origin: 'https://app.example.com', rejectDisallowedOrigins: true }));
      app.post('/api', (_req, res) => void res.json({ ok: true }));
      server = app.listen(0, '127.0.0.1');
      await once(server, 'listening');
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise((resolve) => server.close(resolve)));

    it('should serve it and refuse another origin with a 403 problem', async () => {
      const own = await fetch(`${base}/api`, { method: 'POST', headers: { origin: base } });
      assert.equal(own.status, 200);
      const other = await fetch(`${base}/api`, { method: 'POST', headers: { origin: 'https://evil.example' } });
      assert.equal(other.status, 403);
      assert.equal(other.headers.get('content-type'), 'application/problem+json');
    });
  });
}
