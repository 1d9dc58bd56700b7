import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import express from 'express';
import { createApp, MemoryPubSub, type App, type ServerHandle } from '../index.js';
import { RedisStore } from '../../middleware/rate-limit/index.js';
import { freePort } from '../../test/helpers/redis-server.js';
import { sample } from '../../test/helpers/exposition.js';


describe('when ServerConfig.metrics is on', () => {
  let app: App;
  let server: ServerHandle;

  before(async () => {
    app = createApp({ port: 0, metrics: {}, readiness: {}, background_tasks: { enabled: true } }, (a) => {
      a.get('/users/{id:int}', (d) => ({ id: d.pathParams.id }));
      a.get('/limited', () => ({ ok: true }), { rate_limit: { per_second: 0.001, burst: 1 } });
      a.get('/boom', () => {
        throw new Error('boom');
      });
      const legacy = express.Router();
      legacy.get('/legacy/:id', (req, res) => void res.json({ id: req.params.id }));
      a.mergeRouter(legacy);
    });
    server = await app.listen({ handleSignals: false });
  });
  after(() => server?.close());

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.url}${path}`, { headers });

  it('should count requests by method, route pattern (not the raw URL) and status, with a latency histogram', async () => {
    for (const id of [1, 2, 3]) assert.equal((await get(`/users/${id}`)).status, 200);
    assert.equal((await get('/nowhere/7')).status, 404);
    assert.equal((await get('/boom')).status, 500);
    const res = await get('/metrics');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    assert.equal(sample(text, 'keel_http_requests_total', { method: 'GET', route: '/users/{id:int}', status: '200' }), 3);
    assert.equal(sample(text, 'keel_http_request_duration_seconds_count', { method: 'GET', route: '/users/{id:int}', status: '200' }), 3);
    assert.equal(sample(text, 'keel_http_request_duration_seconds_bucket', { route: '/users/{id:int}', le: '+Inf' }), 3);
    assert.equal(sample(text, 'keel_http_requests_total', { route: '(unmatched)', status: '404' }), 1);
    assert.equal(sample(text, 'keel_http_requests_total', { route: '/boom', status: '500' }), 1);
    assert.ok(!text.includes('/users/1"'), 'no raw URL as a label value');
    assert.equal(text.match(/route="\/users\/1"/g), null);
    assert.ok(!text.includes('route="/metrics"'), 'scrapes are not counted as requests');
  });

  it('should label a merged Express router\'s requests with its route path, not the URL', async () => {
    for (const id of ['a', 'b']) assert.equal((await get(`/legacy/${id}`)).status, 200);
    const text = await (await get('/metrics')).text();
    assert.equal(sample(text, 'keel_http_requests_total', { method: 'GET', route: '/legacy/:id', status: '200' }), 2);
  });

  it('should count rate-limit decisions, the 429 included', async () => {
    const before = sample(await (await get('/metrics')).text(), 'keel_rate_limit_decisions_total', { decision: 'limited' }) ?? 0;
    assert.equal((await get('/limited')).status, 200);
    assert.equal((await get('/limited')).status, 429);
    const text = await (await get('/metrics')).text();
    assert.equal(sample(text, 'keel_rate_limit_decisions_total', { decision: 'limited' }), before + 1);
    assert.ok((sample(text, 'keel_rate_limit_decisions_total', { decision: 'allowed' }) ?? 0) >= 1);
    assert.equal(sample(text, 'keel_http_requests_total', { route: '/limited', status: '429' }), 1);
  });

  it('should expose the in-process executor, dependency state and the process metrics', async () => {
    const text = await (await get('/metrics')).text();
    assert.equal(sample(text, 'keel_background_jobs', { queue: 'memory', state: 'waiting' }), 0);
    assert.equal(sample(text, 'keel_background_jobs_processed_total', { outcome: 'succeeded' }), 0);
    assert.equal(sample(text, 'keel_dependency_up', { dependency: 'background' }), 1);
    assert.ok(sample(text, 'process_cpu_user_seconds_total') !== undefined, 'collectDefaultMetrics');
    assert.ok(sample(text, 'nodejs_eventloop_lag_seconds') !== undefined, 'collectDefaultMetrics');
    assert.match(text, /# TYPE keel_http_request_duration_seconds histogram/);
  });

  it('should answer HEAD on the metrics path without a body, and other methods as any unknown route', async () => {
    const head = await fetch(`${server.url}/metrics`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal((await head.text()).length, 0);
    assert.equal((await fetch(`${server.url}/metrics`, { method: 'POST' })).status, 404);
  });
});

describe('when the rate-limit store fails and metrics are on', () => {
  let app: App;
  let server: ServerHandle;
  let client: Redis;

  before(async () => {
    // A real ioredis client to a port nothing listens on: every command fails at once.
    client = new Redis({ host: '127.0.0.1', port: await freePort(), lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    const store = new RedisStore({ sendCommand: (cmd, ...args) => client.call(cmd!, ...args) as Promise<unknown> });
    app = createApp({ port: 0, metrics: { default_metrics: false }, rate_limit: { per_second: 10, burst: 10 } }, (a) => {
      a.get('/hello', () => ({ hello: 'world' }));
    }, { rateLimit: { store } });
    server = await app.listen({ handleSignals: false });
  });
  after(async () => {
    await server?.close();
    client?.disconnect();
  });

  it('should count the store error and the fail-closed decision, and still answer the scrape', async () => {
    const scrape = async () => (await fetch(`${server.url}/metrics`)).text();
    const before = await scrape();
    const errorsBefore = sample(before, 'keel_store_errors_total', { store: 'rate_limit', kind: 'error' }) ?? 0;
    const refusedBefore = sample(before, 'keel_rate_limit_decisions_total', { decision: 'store_error_refused' }) ?? 0;
    const res = await fetch(`${server.url}/hello`);
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '1');
    const text = await scrape();
    assert.equal(sample(text, 'keel_store_errors_total', { store: 'rate_limit', kind: 'error' }), errorsBefore + 1);
    assert.equal(sample(text, 'keel_rate_limit_decisions_total', { decision: 'store_error_refused' }), refusedBefore + 1);
    assert.equal(sample(text, 'keel_http_requests_total', { route: '/hello', status: '503' }), 1);
    assert.equal(sample(text, 'keel_dependency_up', { dependency: 'rate_limit_store' }), 0);
  });
});

describe('when events are published and metrics are on', () => {
  it('should count events delivered to local subscribers and dropped for one too far behind', async () => {
    const pubsub = new MemoryPubSub({ maxQueued: 1 });
    const app = createApp({ metrics: { default_metrics: false } }, undefined, { pubsub });
    app.intoRouter();
    const scrape = async () => (await app.inject({ method: 'GET', url: '/metrics' })).body;
    const before = await scrape();
    const delivered = sample(before, 'keel_events_total', { outcome: 'delivered' }) ?? 0;
    const dropped = sample(before, 'keel_events_total', { outcome: 'dropped' }) ?? 0;
    const reader = pubsub.subscribe('news');
    const next = reader.next();
    const idle = pubsub.subscribe('news'); // never reads: holds 1 event, then is dropped
    await app.publish('news', { n: 1 }); // reader (waiting) and idle (queued)
    assert.deepEqual(await next, { value: { n: 1 }, done: false });
    await app.publish('news', { n: 2 }); // reader (queued); idle is full: dropped
    const text = await scrape();
    assert.equal(sample(text, 'keel_events_total', { outcome: 'delivered' }), delivered + 3);
    assert.equal(sample(text, 'keel_events_total', { outcome: 'dropped' }), dropped + 1);
    await reader.return!();
    await idle.return!();
  });
});

describe('when metrics are off', () => {
  it('should serve no metrics path and leave the router unwrapped', async () => {
    const app = createApp({ port: 0 }, (a) => a.get('/hello', () => ({ hello: 'world' })));
    const router = app.intoRouter();
    assert.equal(router.name, 'keelRouter', 'the router itself: nothing added per request');
    const res = await app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 404);
  });
});

describe('when MetricsConfig is invalid', () => {
  it('should refuse buckets out of order, naming the key', () => {
    assert.throws(() => createApp({ metrics: { latency_buckets: [1, 0.5] } }), /latency_buckets[\s\S]*ascending/);
  });
  it('should refuse one path for readiness and metrics', () => {
    const app = createApp({ metrics: { path: '/ops' }, readiness: { path: '/ops' } });
    assert.throws(() => app.intoRouter(), /metrics\.path and ServerConfig\.readiness\.path/);
  });
});
