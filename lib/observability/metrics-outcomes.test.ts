/**
 * Issue 36, item 3: rate-limit decisions by route, and events by what happened to each publish.
 * The process registry is shared by every App of this process: each assertion reads a difference.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import express from 'express';
import request from 'supertest';
import { pino } from 'pino';
import { createApp, RedisPubSub, PubSubUnavailableError, type App, type ServerHandle } from '../index.js';
import { rateLimit } from '../../middleware/rate-limit/index.js';
import { NO_REDIS, startRedis, type RedisServer } from '../../test/helpers/redis-server.js';
import { samples, sample as firstSample } from '../../test/helpers/exposition.js';

/** The first sample of `name` carrying `labels`, 0 when there is none. */
const sample = (text: string, name: string, labels: Record<string, string>): number => firstSample(text, name, labels) ?? 0;

describe('when rate-limit decisions are counted', () => {
  let app: App;
  let server: ServerHandle;
  before(async () => {
    app = createApp({ port: 0, metrics: { default_metrics: false }, rate_limit: { per_second: 1000, burst: 10_000 } }, (a) => {
      a.get('/users/{id:int}', (d) => ({ id: d.pathParams.id }));
      a.get('/tight', () => ({ ok: true }), { rate_limit: { per_second: 0.001, burst: 1 } });
      const legacy = express.Router();
      legacy.get('/legacy/:id', (req, res) => void res.json({ id: req.params.id }));
      a.mergeRouter(legacy);
    });
    server = await app.listen({ handleSignals: false });
  });
  after(() => server?.close());
  const scrape = async () => (await fetch(`${server.url}/metrics`)).text();

  it('should label each decision with the route pattern keel_http_requests_total uses', async () => {
    const before = await scrape();
    for (const id of [1, 2, 3]) assert.equal((await fetch(`${server.url}/users/${id}`)).status, 200);
    assert.equal((await fetch(`${server.url}/tight`)).status, 200);
    assert.equal((await fetch(`${server.url}/tight`)).status, 429);
    assert.equal((await fetch(`${server.url}/legacy/a`)).status, 200);
    const text = await scrape();
    const grew = (labels: Record<string, string>) => sample(text, 'keel_rate_limit_decisions_total', labels) - sample(before, 'keel_rate_limit_decisions_total', labels);
    assert.equal(grew({ route: '/users/{id:int}', decision: 'allowed' }), 3);
    assert.equal(grew({ route: '/tight', decision: 'allowed' }), 1);
    assert.equal(grew({ route: '/tight', decision: 'limited' }), 1);
    // The server-wide limit runs before a merged Express router matches: counted by the route that answered.
    assert.equal(grew({ route: '/legacy/:id', decision: 'allowed' }), 1);
    assert.equal(sample(text, 'keel_http_requests_total', { route: '/legacy/:id', status: '200' }) >= 1, true);
  });

  it('should give every URL no route matched one label value, (unmatched)', async () => {
    const before = await scrape();
    const n = 300;
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${server.url}/${randomBytes(6).toString('hex')}/${i}?q=${i}`);
      assert.equal(res.status, 404);
      await res.arrayBuffer();
    }
    const text = await scrape();
    const routes = new Set(samples(text, 'keel_rate_limit_decisions_total').map(([l]) => l.route));
    // Only route patterns (this file's other Apps add theirs): none of the 300 URLs.
    for (const route of routes) assert.ok(['(unmatched)', '/legacy/:id', '/tight', '/users/{id:int}', '/items/:id'].includes(route!), `a label value from a URL: ${route}`);
    assert.equal(sample(text, 'keel_rate_limit_decisions_total', { route: '(unmatched)', decision: 'allowed' }) - sample(before, 'keel_rate_limit_decisions_total', { route: '(unmatched)', decision: 'allowed' }), n);
  });
});

describe('when the rate limiter runs as Express middleware, outside keel\'s pipeline', () => {
  it('should label a decision with the Express route that answered, and (unmatched) when none did', async () => {
    // The counting App: its metrics turn the process-wide counters on.
    const keel = createApp({ metrics: { default_metrics: false } });
    keel.intoRouter();
    const scrape = async () => (await keel.inject({ method: 'GET', url: '/metrics' })).body;
    const ex = express();
    ex.use(rateLimit({ per_second: 1000, burst: 10_000 }));
    ex.get('/items/:id', (req, res) => void res.json({ id: req.params.id }));
    const before = await scrape();
    for (let i = 0; i < 50; i++) await request(ex).get(`/items/${randomBytes(4).toString('hex')}`).expect(200);
    for (let i = 0; i < 50; i++) await request(ex).get(`/${randomBytes(4).toString('hex')}`).expect(404);
    const text = await scrape();
    const grew = (route: string) => sample(text, 'keel_rate_limit_decisions_total', { route, decision: 'allowed' }) - sample(before, 'keel_rate_limit_decisions_total', { route, decision: 'allowed' });
    assert.equal(grew('/items/:id'), 50);
    assert.equal(grew('(unmatched)'), 50);
    assert.equal(samples(text, 'keel_rate_limit_decisions_total').filter(([l]) => /^\/[0-9a-f]{8}$/.test(l.route!)).length, 0, 'no raw URL as a label value');
  });
});

describe('when events are published through Redis and metrics are on', { skip: NO_REDIS }, () => {
  let redis: RedisServer;
  let failOpen: RedisPubSub;
  let failClosed: RedisPubSub;
  let app: App;
  before(async () => {
    redis = await startRedis();
    const logger = pino({ level: 'silent' });
    failOpen = new RedisPubSub({ connection: redis.url, logger });
    failClosed = new RedisPubSub({ connection: redis.url, passOnStoreError: false, logger });
    app = createApp({ metrics: { default_metrics: false } }, undefined, { pubsub: failOpen });
    app.intoRouter();
  });
  after(async () => {
    redis?.resume();
    await failOpen?.close();
    await failClosed?.close();
    await redis?.stop();
  });

  it('should count published, local_only (Redis away, fail open) and refused (Redis away, fail closed)', { timeout: 30_000 }, async () => {
    const scrape = async () => (await app.inject({ method: 'GET', url: '/metrics' })).body;
    const before = await scrape();
    const events = failOpen.subscribe('news');
    await failOpen.subscribed('news');
    await failOpen.publish('news', 1);
    await failClosed.publish('news', 2);
    redis.pause();
    try {
      await failOpen.publish('news', 3);
      await assert.rejects(failClosed.publish('news', 4), PubSubUnavailableError);
    } finally {
      redis.resume();
    }
    const got: unknown[] = [];
    for (let i = 0; i < 3; i++) got.push((await events.next()).value);
    assert.deepEqual(got.sort(), [1, 2, 3]);
    await events.return!();
    const text = await scrape();
    const grew = (outcome: string) => sample(text, 'keel_events_total', { outcome }) - sample(before, 'keel_events_total', { outcome });
    assert.equal(grew('published'), 2);
    assert.equal(grew('local_only'), 1);
    assert.equal(grew('refused'), 1);
    assert.equal(grew('delivered'), 3);
    assert.equal(samples(text, 'keel_events_total').some(([l]) => l.outcome === 'publish_failed'), false, 'the old name is gone');
  });
});
