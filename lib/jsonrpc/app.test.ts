import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import request from 'supertest';
import { App, ConfigError, AppError, handlerError, type ServerHandle } from '../index.js';

const silent = { logger: pino({ level: 'silent' }) };
const call = (url: string, path: string, body: unknown) => request(url).post(path).set('Content-Type', 'application/json').send(JSON.stringify(body));

async function withServer(app: App, fn: (h: ServerHandle) => Promise<void>): Promise<void> {
  const h = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

function rpcApp(config: Record<string, unknown>): App {
  return new App({ port: 0, ...config }, silent)
    .rpc({ method_name: 'greet', params_schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } }, ({ name }: { name: string }) => `hello ${name}`)
    .rpc('whoami', (_p, ctx) => ({ requestId: ctx.request?.requestId ?? null }));
}

describe('app.rpc() in a running App', () => {
  it('should serve registered methods at JsonRpcConfig.endpoint_path', async () => {
    await withServer(rpcApp({ jsonrpc: { endpoint_path: '/api/rpc' } }), async (h) => {
      const res = await call(h.url, '/api/rpc', { jsonrpc: '2.0', method: 'greet', params: { name: 'Ada' }, id: 1 }).expect(200);
      assert.deepEqual(res.body, { jsonrpc: '2.0', result: 'hello Ada', id: 1 });
      await call(h.url, '/rpc', { jsonrpc: '2.0', method: 'greet', id: 1 }).expect(404);
    });
  });
  it('should serve methods with the default config when jsonrpc is null', async () => {
    await withServer(rpcApp({}), async (h) => {
      assert.equal((await call(h.url, '/rpc', { jsonrpc: '2.0', method: 'greet', params: { name: 'B' }, id: 1 })).body.result, 'hello B');
    });
  });
  it('should mount nothing when jsonrpc.enabled is false', async () => {
    await withServer(rpcApp({ jsonrpc: { enabled: false } }), async (h) => {
      await call(h.url, '/rpc', { jsonrpc: '2.0', method: 'greet', id: 1 }).expect(404);
    });
  });
  it('should run the server-level middleware: request id and authentication', async () => {
    await withServer(rpcApp({ enable_request_id: true, api_key_auth: { keys: ['k-123'] } }), async (h) => {
      const denied = await call(h.url, '/rpc', { jsonrpc: '2.0', method: 'whoami', id: 1 }).expect(401);
      assert.match(String(denied.headers['content-type']), /problem\+json/);
      const ok = await call(h.url, '/rpc', { jsonrpc: '2.0', method: 'whoami', id: 1 }).set('X-API-Key', 'k-123').set('X-Request-ID', 'rid-7').expect(200);
      assert.equal(ok.body.result.requestId, 'rid-7');
    });
  });
  it('should cap the body at max_body_size with a 413 problem', async () => {
    await withServer(rpcApp({ max_body_size: 64 }), async (h) => {
      await call(h.url, '/rpc', { jsonrpc: '2.0', method: 'greet', params: { name: 'x'.repeat(200) }, id: 1 }).expect(413);
    });
  });
});

describe('when app.rpc() is misused', () => {
  // Checked when the router is built, after app.ready() loaded keel/jsonrpc.
  const built = async (app: App) => (await app.ready()).intoRouter();
  it('should throw ConfigError for a reserved name', () => assert.rejects(() => built(new App({}, silent).rpc('rpc.ping', () => 1)), ConfigError));
  it('should throw ConfigError for a duplicate name', () => assert.rejects(() => built(new App({}, silent).rpc('a', () => 1).rpc('a', () => 2)), ConfigError));
  it('should throw AppError once the router is built', () => {
    const app = new App({}, silent);
    app.intoRouter();
    assert.throws(() => app.rpc('late', () => 1), AppError);
  });
});

describe('when a route carries jsonrpc metadata', () => {
  function routeApp(): App {
    const app = new App({ port: 0 }, silent);
    app.post('/users', (data) => ({ created: (data.body as { name: string }).name }), {
      body: { type: 'object' },
      jsonrpc: { method_name: 'user.create', params_schema: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } }, tags: ['users'] },
    });
    app.get('/users/{id:int}', () => handlerError(404, 'No such user'), { jsonrpc: { method_name: 'user.get' } });
    return app;
  }
  it('should serve the route handler as the RPC method, params as the body', async () => {
    await withServer(routeApp(), async (h) => {
      const ok = await call(h.url, '/rpc', { jsonrpc: '2.0', method: 'user.create', params: { name: 'Ada' }, id: 1 }).expect(200);
      assert.deepEqual(ok.body.result, { created: 'Ada' });
      const bad = await call(h.url, '/rpc', { jsonrpc: '2.0', method: 'user.create', params: {}, id: 2 });
      assert.equal(bad.body.error.code, -32602);
      const missing = await call(h.url, '/rpc', { jsonrpc: '2.0', method: 'user.get', id: 3 });
      assert.deepEqual(missing.body.error, { code: -32000, message: 'No such user', data: { status: 404 } });
      const doc = (await call(h.url, '/rpc', { jsonrpc: '2.0', method: 'rpc.discover', id: 4 })).body.result;
      assert.deepEqual(doc.methods.map((m: { name: string }) => m.name), ['user.create', 'user.get']);
      // The HTTP route still works as before.
      assert.deepEqual((await call(h.url, '/users', { name: 'Bo' }).expect(200)).body, { created: 'Bo' });
    });
  });
  for (const [what, records] of [
    ['its own jwt_auth', { jwt_auth: { secret: 'route-secret-route-secret-route-secret!' } }],
    ['its own api_key_auth', { api_key_auth: { keys: ['k'] } }],
    ['an authorization record', { authorization: { required_roles: ['admin'] } }],
  ] as const) {
    it(`should refuse at start-up a route with ${what}, whose check would not run over RPC`, () => {
      const app = new App({ port: 0 }, silent);
      app.post('/x', () => null, { ...records, jsonrpc: { method_name: 'x' } } as never);
      assert.throws(() => app.intoRouter(), ConfigError);
    });
  }
});
