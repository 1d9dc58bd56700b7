import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';
import WebSocket from 'ws';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { ServerHandle } from '../lib/index.js';
import { buildExampleApp, EXAMPLE_API_KEY } from './server.js';
import { GREETER_PROTO_PATH } from './grpc/server.js';

describe('when the example server runs (npm start)', () => {
  let server: ServerHandle;
  let base: string;
  before(async () => {
    server = await buildExampleApp({ port: 0 }).listen({ handleSignals: false });
    base = server.url;
  });
  after(() => server.close());

  it('should answer /health with a request id and security headers', async () => {
    const res = await fetch(`${base}/health`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.deepEqual(await res.json(), { status: 'ok' });
  });

  it('should reject an out-of-range query parameter with a 422 problem naming it', async () => {
    const res = await fetch(`${base}/items?limit=500`);
    assert.equal(res.status, 422);
    assert.equal(res.headers.get('content-type'), 'application/problem+json');
    const body = (await res.json()) as { errors: { loc: string[] }[] };
    assert.deepEqual(body.errors[0]!.loc, ['query', 'limit']);
  });

  it('should delete an item with 204, and answer 404 problem+json for one that does not exist', async () => {
    const made = (await (await fetch(`${base}/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Gone","price":1}' })).json()) as { id: number };
    assert.equal((await fetch(`${base}/items/${made.id}`, { method: 'DELETE' })).status, 204);
    const again = await fetch(`${base}/items/${made.id}`);
    assert.equal(again.status, 404);
    assert.equal(again.headers.get('content-type'), 'application/problem+json');
  });

  it('should refuse a request target over max_uri_length with a 414 problem before routing', async () => {
    const res = await fetch(`${base}/items?limit=${'9'.repeat(8192)}`);
    assert.equal(res.status, 414);
    assert.equal(res.headers.get('content-type'), 'application/problem+json');
    assert.equal(((await res.json()) as { limit: number }).limit, 8192);
  });

  it('should create an item and reject a malformed body', async () => {
    const ok = await fetch(`${base}/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Buoy","price":9.5}' });
    assert.equal(ok.status, 201);
    assert.match(ok.headers.get('location') ?? '', /^\/items\/\d+$/);
    const bad = await fetch(`${base}/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":' });
    assert.equal(bad.status, 400);
  });

  it('should gzip the large report when asked', async () => {
    const res = await fetch(`${base}/report`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(res.status, 200);
    // fetch decodes transparently; the header proves the wire form was compressed.
    assert.equal(res.headers.get('content-encoding'), 'gzip');
    assert.equal(((await res.json()) as { rows: unknown[] }).rows.length, 200);
  });

  it('should answer CORS preflights on /public/info from its record', async () => {
    const preflight = (headers: Record<string, string>) =>
      fetch(`${base}/public/info`, { method: 'OPTIONS', headers: { origin: 'https://example.com', 'access-control-request-method': 'GET', ...headers } });
    const ok = await preflight({ 'access-control-request-headers': 'authorization' });
    assert.equal(ok.status, 204);
    assert.equal(ok.headers.get('access-control-allow-origin'), 'https://example.com');
    assert.equal(ok.headers.get('access-control-allow-headers'), 'Authorization');
    assert.equal(ok.headers.get('access-control-max-age'), '600');
    const header = await preflight({ 'access-control-request-headers': 'x-debug' });
    assert.equal(header.status, 403);
    assert.equal(header.headers.get('content-type'), 'application/problem+json');
    const origin = await preflight({ origin: 'https://evil.example' });
    assert.equal(origin.status, 403);
    assert.equal(((await origin.json()) as { detail: string }).detail, "CORS request from origin 'https://evil.example' not allowed");
  });

  it("should serve /public/info to a request from the server's own origin (curl -H 'Origin: http://127.0.0.1:8000'), without CORS headers", async () => {
    // Browsers send Origin on same-origin requests too; a same-origin request is not a CORS request (Fetch).
    const own = await fetch(`${base}/public/info`, { headers: { origin: new URL(base).origin } });
    assert.equal(own.status, 200);
    assert.deepEqual(await own.json(), { name: 'keel example' });
    assert.equal(own.headers.get('access-control-allow-origin'), null);
    const other = await fetch(`${base}/public/info`, { headers: { origin: 'http://127.0.0.1:1' } });
    assert.equal(other.status, 403);
  });

  it('should guard /admin/stats with the API key', async () => {
    assert.equal((await fetch(`${base}/admin/stats`)).status, 401);
    assert.equal((await fetch(`${base}/admin/stats`, { headers: { 'x-api-key': EXAMPLE_API_KEY } })).status, 200);
  });

  it('should answer every error it produces as problem+json, the maintenance hook included', async () => {
    const maintenance = await fetch(`${base}/hooked`, { headers: { 'x-maintenance': '1' } });
    assert.equal(maintenance.status, 503);
    assert.equal(maintenance.headers.get('content-type'), 'application/problem+json');
    assert.equal(maintenance.headers.get('retry-after'), '120');
    const body = (await maintenance.json()) as { status: number; title: string; detail: string };
    assert.equal(body.status, 503);
    assert.match(body.detail, /maintenance/);
    const answers = await Promise.all([
      fetch(`${base}/no-such-route`),
      fetch(`${base}/admin/stats`),
      fetch(`${base}/items?limit=500`),
      fetch(`${base}/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":' }),
      fetch(`${base}/me`),
    ]);
    for (const res of answers) {
      assert.ok(res.status >= 400, `${res.url} answered ${res.status}`);
      assert.equal(res.headers.get('content-type'), 'application/problem+json', res.url);
      assert.equal(((await res.json()) as { status: number }).status, res.status);
    }
  });

  it('should serve the OpenAPI document, JSON-RPC and GraphQL', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown> };
    assert.equal(doc.openapi, '3.1.0');
    assert.ok(doc.paths['/items/{id}']);
    // Each route's `responses` lists the statuses it answers: 201 for a create, 204 for a delete.
    const paths = doc.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
    assert.deepEqual(Object.keys(paths['/items']!.post!.responses).filter((s) => s < '300'), ['201']);
    assert.deepEqual(Object.keys(paths['/items/{id}']!.delete!.responses).filter((s) => s < '300'), ['204']);
    assert.deepEqual(Object.keys(paths['/jobs']!.post!.responses).filter((s) => s < '300'), ['202']);
    const valid = await new Validator().validate(doc as never);
    assert.equal(valid.valid, true, JSON.stringify(valid.errors, null, 2));
    const rpc = await fetch(`${base}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"math.add","params":{"a":1,"b":2}}' });
    assert.deepEqual(await rpc.json(), { jsonrpc: '2.0', result: 3, id: 1 });
    const gql = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
    assert.deepEqual(await gql.json(), { data: { __typename: 'Query' } });
  });

  it('should answer JSON messages on /ws/json, with keel\'s errors for bad ones', async () => {
    const ws = new WebSocket(`${base.replace('http', 'ws')}/ws/json`);
    const replies: unknown[] = [];
    const three = new Promise<void>((resolve) => ws.on('message', (d: Buffer) => replies.push(JSON.parse(d.toString())) === 3 && resolve()));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send('not json');
    ws.send('{"type":"subscribe"}');
    ws.send('{"type":"subscribe","channel":"news"}');
    await three;
    assert.deepEqual(replies, [{ type: 'error', message: 'Invalid JSON' }, { error: 'Message validation failed' }, { type: 'subscribed', channel: 'news', status: 'ok' }]);
    ws.close();
  });

  it('should serve gRPC on the same port', async () => {
    const def = grpc.loadPackageDefinition(protoLoader.loadSync(GREETER_PROTO_PATH)) as unknown as {
      keel: { examples: { v1: { Greeter: grpc.ServiceClientConstructor } } };
    };
    const client = new def.keel.examples.v1.Greeter(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    try {
      const reply = await new Promise<{ message: string }>((resolve, reject) =>
        client.SayHello({ name: 'Ada' }, (err: Error | null, r: { message: string }) => (err ? reject(err) : resolve(r))),
      );
      assert.equal(reply.message, 'Hello, Ada!');
    } finally {
      client.close();
    }
  });

  it('should fall through to the merged Express router', async () => {
    assert.deepEqual(await (await fetch(`${base}/legacy/hello`)).json(), { from: 'express' });
  });

  it('should answer /ready (in-process executor: ready) and serve Prometheus metrics by route pattern', async () => {
    const ready = await fetch(`${base}/ready`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready', checks: { background: { status: 'up' } } });
    await fetch(`${base}/items/1`);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, /^keel_http_requests_total\{method="GET",route="\/items\/\{id:int\}",status="200"\} \d+$/m);
  });
});

describe('when the example app is tested in-process with app.inject() (docs/testing.md)', () => {
  it('should create an item and read it back, with no port', async () => {
    const app = buildExampleApp({ port: 0 });
    const created = await app.inject({ method: 'POST', url: '/items', payload: { name: 'Buoy', price: 9.5 } });
    assert.equal(created.statusCode, 201);
    const location = String(created.headers.location);
    assert.match(location, /^\/items\/\d+$/);
    const read = await app.inject(location);
    assert.deepEqual(read.json(), { id: Number(location.split('/')[2]), name: 'Buoy', price: 9.5, tags: [] });
  });

  it('should answer an invalid query with the same 422 problem as over the socket', async () => {
    const res = await buildExampleApp({ port: 0 }).inject({ url: '/items', query: { limit: '500' } });
    assert.equal(res.statusCode, 422);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.deepEqual(res.json<{ errors: { loc: string[] }[] }>().errors[0]!.loc, ['query', 'limit']);
  });
});

describe('when the example server starts', () => {
  it("should name the documentation pages' URLs in its start-up line", async () => {
    const { captureLogs } = await import('../test/helpers/log-capture.js');
    const logs = captureLogs((r) => r.msg === 'listening');
    const server = await buildExampleApp({ port: 0 }, { logger: logs.logger }).listen({ handleSignals: false });
    try {
      const line = await logs.next();
      assert.equal(line.url, server.url);
      const pages = line.pages as Record<string, string>;
      assert.equal(pages['Swagger UI'], `${server.url}/docs`);
      assert.equal(pages['Redoc'], `${server.url}/redoc`);
      assert.equal(pages['OpenAPI document'], `${server.url}/openapi.json`);
      assert.match(pages['GraphiQL'] ?? pages['GraphQL'] ?? '', /\/graphql$/);
      // Each page the line names answers 200.
      for (const url of Object.values(pages)) assert.equal((await fetch(url, { headers: { accept: 'text/html' } })).status, 200, url);
    } finally {
      await server.close();
    }
  });
});
