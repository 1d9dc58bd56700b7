/**
 * The always-present headers (docs/middleware.md, "Headers on every answer"): every answer keel writes
 * for a request carries the request id (when `enable_request_id` is on and the route does not turn it
 * off), the security headers (unless `securityHeaders: false`) and, with a server-level `rate_limit`,
 * the RateLimit headers: routes, CORS preflights, 404/405, problem answers, static files, merged
 * Express routers and every mounted protocol page. One App, real sockets, one row per answer kind.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { pino } from 'pino';
import { createApp, HttpError, type ServerHandle } from '../lib/index.js';

const examples = fileURLToPath(new URL('../examples/', import.meta.url));
const API_KEY = 'always-present-headers-key';
const ORIGIN = 'https://app.example';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
}

/** One request on a fresh connection; the answer's status and headers (the body is drained). */
function send(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(base + path, { method, headers: body === undefined ? headers : { 'content-length': String(Buffer.byteLength(body)), ...headers }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
    });
    // A 413 may be answered before the whole body was sent: what matters is the answer.
    req.on('error', reject);
    req.end(body);
  });
}

interface Row {
  kind: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  status: number;
  /** false: the route's own `request_id: {enabled: false}` turns the id off (its preflight follows it). */
  requestId?: boolean;
  /** Requests sent first (e.g. to use up a bucket). */
  warmUp?: number;
}

const json = { 'content-type': 'application/json' };
const preflight = (method: string) => ({ origin: ORIGIN, 'access-control-request-method': method });
const big = JSON.stringify({ name: 'x'.repeat(4096), price: 1 });

const ROWS: Row[] = [
  { kind: 'a route answer', method: 'GET', path: '/items', status: 200 },
  { kind: 'a HEAD answer', method: 'HEAD', path: '/items', status: 200 },
  { kind: 'a CORS preflight', method: 'OPTIONS', path: '/shared', headers: preflight('GET'), status: 204 },
  { kind: 'a refused CORS preflight (403)', method: 'OPTIONS', path: '/shared', headers: { ...preflight('GET'), origin: 'https://evil.example' }, status: 403 },
  { kind: 'a preflight of a route without request ids', method: 'OPTIONS', path: '/public/info', headers: preflight('GET'), status: 204, requestId: false },
  { kind: 'a route without request ids', method: 'GET', path: '/public/info', headers: { origin: ORIGIN }, status: 200, requestId: false },
  { kind: 'OPTIONS that is not a preflight (405)', method: 'OPTIONS', path: '/items', status: 405 },
  { kind: 'a 404', method: 'GET', path: '/nowhere', status: 404 },
  { kind: 'a 405', method: 'DELETE', path: '/items', status: 405 },
  { kind: 'a 401 problem', method: 'GET', path: '/admin', status: 401 },
  { kind: 'a 413 problem', method: 'POST', path: '/items', headers: json, body: big, status: 413 },
  { kind: 'a 422 problem', method: 'POST', path: '/items', headers: json, body: '{"price":-1}', status: 422 },
  { kind: 'a 429 problem', method: 'GET', path: '/limited', status: 429, warmUp: 1 },
  { kind: 'a 500 problem', method: 'GET', path: '/boom', status: 500 },
  { kind: 'a 503 problem from a hook', method: 'GET', path: '/hooked', headers: { 'x-maintenance': '1' }, status: 503 },
  { kind: 'a 408 problem (request_timeout)', method: 'GET', path: '/slow', status: 408 },
  { kind: 'a static file', method: 'GET', path: '/static/index.html', status: 200 },
  { kind: 'a missing static file', method: 'GET', path: '/static/missing.html', status: 404 },
  { kind: 'a merged Express router', method: 'GET', path: '/legacy/hello', status: 200 },
  { kind: 'the OpenAPI document', method: 'GET', path: '/openapi.json', status: 200 },
  { kind: 'Swagger UI', method: 'GET', path: '/docs', status: 200 },
  { kind: 'a Swagger UI asset', method: 'GET', path: '/docs/swagger-ui.css', status: 200 },
  { kind: 'Redoc', method: 'GET', path: '/redoc', status: 200 },
  { kind: 'a JSON-RPC call', method: 'POST', path: '/rpc', headers: json, body: '{"jsonrpc":"2.0","method":"ping","id":1}', status: 200 },
  { kind: 'a JSON-RPC notification (204)', method: 'POST', path: '/rpc', headers: json, body: '{"jsonrpc":"2.0","method":"ping"}', status: 204 },
  { kind: 'a JSON-RPC 415 problem', method: 'POST', path: '/rpc', headers: { 'content-type': 'text/plain' }, body: 'x', status: 415 },
  { kind: 'a JSON-RPC 413 problem', method: 'POST', path: '/rpc', headers: json, body: big, status: 413 },
  { kind: 'a GraphQL POST', method: 'POST', path: '/graphql', headers: json, body: '{"query":"{ hello }"}', status: 200 },
  { kind: 'a GraphQL GET', method: 'GET', path: '/graphql?query=%7Bhello%7D', headers: { accept: 'application/json' }, status: 200 },
  { kind: 'a GraphQL error', method: 'POST', path: '/graphql', headers: json, body: '{"query":"{ nope }"}', status: 400 },
  { kind: 'the AsyncAPI document', method: 'GET', path: '/asyncapi.json', status: 200 },
  { kind: 'an AsyncAPI parse problem (422)', method: 'POST', path: '/asyncapi/parse', headers: json, body: '{}', status: 422 },
];

describe('when an App answers requests of every kind', () => {
  let handle: ServerHandle;
  before(async () => {
    const legacy = express.Router();
    legacy.get('/legacy/hello', (_req, res) => { res.json({ from: 'express' }); });
    const app = createApp({
      port: 0,
      enable_request_id: true,
      max_body_size: 1024,
      rate_limit: { per_second: 1000, burst: 10_000 },
      static_files: [{ directory: `${examples}public`, route_prefix: '/static' }],
      openapi: { enabled: true, title: 'Headers', version: '1.0.0' },
      asyncapi: { enabled: true, spec: JSON.parse(readFileSync(`${examples}asyncapi.json`, 'utf8')) },
      jsonrpc: { endpoint_path: '/rpc' },
    }, (app) => {
      const itemBody = { type: 'object', required: ['name', 'price'], properties: { name: { type: 'string' }, price: { type: 'number', minimum: 0 } } } as const;
      app.get('/items', () => []);
      app.post('/items', (d) => d.body, { body: itemBody });
      app.get('/shared', () => ({ ok: true }), { cors: { allowed_origins: [ORIGIN], allowed_methods: ['GET'] } });
      app.get('/public/info', () => ({ ok: true }), { cors: { allowed_origins: [ORIGIN], allowed_methods: ['GET'] }, request_id: { enabled: false } });
      app.get('/admin', () => ({}), { api_key_auth: { keys: [API_KEY] } });
      app.get('/limited', () => ({}), { rate_limit: { per_second: 1, burst: 1 } });
      app.get('/boom', () => { throw new Error('internal detail'); });
      app.hook('on_request', 'maintenance', (ctx) => {
        if (ctx.req.headers['x-maintenance']) throw new HttpError(503, 'Down for maintenance', { headers: { 'Retry-After': '120' } });
      });
      app.get('/hooked', () => ({}), { lifecycle_hooks: { on_request: [{ name: 'maintenance', handler: 'maintenance' }] } });
      app.get('/slow', () => new Promise((resolve) => setTimeout(() => resolve({}), 1500)), { request_timeout: 1 });
      app.rpc('ping', () => 'pong');
      app.registerGraphqlRoute('/graphql', 'POST', 'query_only');
      app.mergeRouter(legacy);
    }, { logger: pino({ level: 'silent' }) });
    handle = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
  });
  after(() => handle?.close());

  ROWS.forEach((row, i) => {
    const id = `row-${i}`;
    const ids = row.requestId !== false;
    it(`should put ${ids ? 'the request id, ' : ''}the security headers and the RateLimit headers on ${row.kind} (${row.method} ${row.path})`, async () => {
      for (let n = 0; n < (row.warmUp ?? 0); n++) await send(handle.url, row.method, row.path, row.headers, row.body);
      const { status, headers } = await send(handle.url, row.method, row.path, { 'x-request-id': id, ...row.headers }, row.body);
      assert.equal(status, row.status);
      if (ids) assert.equal(headers['x-request-id'], id, 'the request id is echoed');
      else assert.equal(headers['x-request-id'], undefined, "the route's request_id record turns the id off");
      assert.ok(headers['content-security-policy'], 'Content-Security-Policy');
      assert.equal(headers['x-content-type-options'], 'nosniff');
      assert.equal(headers['x-frame-options'], 'DENY');
      assert.equal(headers['referrer-policy'], 'no-referrer');
      assert.ok(headers['cross-origin-resource-policy'], 'Cross-Origin-Resource-Policy');
      assert.equal(headers['x-powered-by'], undefined);
      assert.match(String(headers.ratelimit), /^limit=\d+, remaining=\d+, reset=\d+$/);
      assert.match(String(headers['ratelimit-policy']), /^\d+;w=\d+$/);
    });
  });
});

describe('when CORS preflights meet a rate limit', () => {
  let handle: ServerHandle;
  before(async () => {
    const app = createApp({ port: 0, rate_limit: { per_second: 1, burst: 2 } }, (app) => {
      app.get('/server-bucket', () => ({}), { cors: { allowed_origins: [ORIGIN] } });
      app.get('/route-bucket', () => ({}), { cors: { allowed_origins: [ORIGIN] }, rate_limit: { per_second: 1, burst: 1 } });
    }, { logger: pino({ level: 'silent' }) });
    handle = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
  });
  after(() => handle?.close());

  it('should count preflights against the server-level bucket and answer a flood with 429', async () => {
    const statuses = [];
    for (let n = 0; n < 3; n++) statuses.push((await send(handle.url, 'OPTIONS', '/server-bucket', preflight('GET'))).status);
    assert.deepEqual(statuses, [204, 204, 429]);
    const refused = await send(handle.url, 'GET', '/server-bucket', { origin: ORIGIN });
    assert.equal(refused.status, 429, 'the same bucket as the route');
    assert.ok(refused.headers['retry-after']);
  });

  it("should draw a route's preflights from the route's own bucket", async () => {
    assert.equal((await send(handle.url, 'OPTIONS', '/route-bucket', preflight('GET'))).status, 204);
    const after = await send(handle.url, 'GET', '/route-bucket', { origin: ORIGIN });
    assert.equal(after.status, 429);
    assert.equal(after.headers['access-control-allow-origin'], ORIGIN, 'a refused cross-origin request stays readable by the page');
  });
});
