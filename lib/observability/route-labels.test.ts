/**
 * The `route` label's cardinality is bounded in every case: merged Express routers mounted on a
 * parameterised path (real Express 4 and 5) cannot grow it past MetricsConfig `max_route_labels`.
 * The limit is per process, so this file runs one counting App, and its tests run in order.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { createApp, type App, type ServerHandle } from '../index.js';
import { DEFAULT_MAX_ROUTE_LABELS, MetricsConfig } from '../records/observability.js';
import { MAX_ROUTE_LABEL_LENGTH } from './observe.js';
import { samples, sampleSum } from '../../test/helpers/exposition.js';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';

const routes = (text: string, name: string): Set<string> => new Set(samples(text, name).map(([l]) => l.route!));

describe('when a merged Express router is mounted on a parameterised path', () => {
  let app: App;
  let server: ServerHandle;
  const logged: { level: number; msg: string; max_route_labels?: number }[] = [];

  before(async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
    app = createApp({ port: 0, metrics: { default_metrics: false }, rate_limit: { per_second: 10_000, burst: 100_000 } }, (a) => {
      a.get('/users/{id:int}', (d) => ({ id: d.pathParams.id }));
      a.get('/late', () => ({ ok: true }));
      for (const { major, express } of EXPRESS_VERSIONS) {
        // `/v4/t/:tenant`: no mergeParams, the tenant's value is only in req.baseUrl.
        const plain = express();
        const items = express.Router();
        items.get('/items/:id', (req, res) => void res.json({ id: req.params.id }));
        plain.use(`/v${major}/t/:tenant`, items);
        a.mergeRouter(plain, { express });
        // `/m4/t/:tenant`: mergeParams, so the tenant's name can be written back.
        const merging = express();
        const mine = express.Router({ mergeParams: true });
        mine.get('/items/:id', (req, res) => void res.json({ id: req.params.id }));
        merging.use(`/m${major}/t/:tenant`, mine);
        a.mergeRouter(merging, { express });
      }
    }, { logger });
    server = await app.listen({ handleSignals: false });
  });
  after(() => server?.close());

  const get = async (path: string): Promise<number> => {
    const res = await fetch(`${server.url}${path}`);
    await res.arrayBuffer();
    return res.status;
  };
  const scrape = async () => (await fetch(`${server.url}/metrics`)).text();

  it('should write a mount parameter back as its name when the router has mergeParams', async () => {
    for (const major of [4, 5]) {
      for (const tenant of ['acme', 'globex', 'in%20itech']) assert.equal(await get(`/m${major}/t/${tenant}/items/1`), 200);
      const text = await scrape();
      assert.equal(sampleSum(text, 'keel_http_requests_total', { route: `/m${major}/t/:tenant/items/:id`, status: '200' }), 3);
      assert.equal([...routes(text, 'keel_http_requests_total')].filter((r) => r.includes('acme') || r.includes('globex')).length, 0);
    }
  });

  it(`should count a value longer than ${MAX_ROUTE_LABEL_LENGTH} characters as (other)`, async () => {
    const long = 'x'.repeat(MAX_ROUTE_LABEL_LENGTH);
    assert.equal(await get(`/v4/t/${long}/items/1`), 200);
    const text = await scrape();
    assert.equal([...routes(text, 'keel_http_requests_total')].filter((r) => r.includes(long)).length, 0);
    assert.equal(sampleSum(text, 'keel_http_requests_total', { route: '(other)', status: '200' }), 1);
  });

  it('should leave a segment as it is when two segments hold the value (and the limit bounds it)', async () => {
    assert.equal(await get('/m5/t/t/items/1'), 200);
    assert.equal(sampleSum(await scrape(), 'keel_http_requests_total', { route: '/m5/t/t/items/:id' }), 1);
  });

  it(`should count past ${DEFAULT_MAX_ROUTE_LABELS} values as (other): 3000 random tenants add at most the limit`, async () => {
    assert.equal(await get('/users/1'), 200);
    const n = 3000;
    for (let i = 0; i < n; i += 50) {
      const batch = Array.from({ length: 50 }, (_, j) => get(`/v${(i + j) % 2 ? 4 : 5}/t/${randomBytes(6).toString('hex')}/items/1`));
      for (const status of await Promise.all(batch)) assert.equal(status, 200);
    }
    const text = await scrape();
    for (const metric of ['keel_http_requests_total', 'keel_rate_limit_decisions_total']) {
      const seen = routes(text, metric);
      // The limit, plus keel's own patterns and (unmatched)/(other): a few.
      assert.ok(seen.size <= DEFAULT_MAX_ROUTE_LABELS + 5, `${metric}: ${seen.size} route values`);
      assert.ok(seen.has('(other)'), `${metric}: no (other)`);
    }
    // Every request is counted once, under its own value or (other).
    const tenants = [...routes(text, 'keel_http_requests_total')].filter((r) => /^\/v[45]\/t\/[0-9a-f]{12}\/items\/:id$/.test(r));
    // One (other) before this test: the over-long value.
    const other = sampleSum(text, 'keel_http_requests_total', { route: '(other)' }) - 1;
    assert.ok(other >= n - DEFAULT_MAX_ROUTE_LABELS, `(other): ${other}`);
    assert.equal(tenants.length + other, n);
  });

  it("should keep keel's own route patterns, and values seen before the limit, once it is reached", async () => {
    assert.equal(await get('/users/2'), 200);
    assert.equal(await get('/late'), 200);
    assert.equal(await get('/m4/t/initech/items/9'), 200);
    const text = await scrape();
    assert.equal(sampleSum(text, 'keel_http_requests_total', { route: '/users/{id:int}', status: '200' }), 2);
    assert.equal(sampleSum(text, 'keel_http_requests_total', { route: '/late', status: '200' }), 1);
    assert.equal(sampleSum(text, 'keel_rate_limit_decisions_total', { route: '/late', decision: 'allowed' }), 1);
    assert.equal(sampleSum(text, 'keel_http_requests_total', { route: '/m4/t/:tenant/items/:id', status: '200' }), 4);
  });

  it('should log the limit once, not per request', async () => {
    assert.equal(await get(`/v5/t/${randomBytes(6).toString('hex')}/items/1`), 200);
    const warnings = logged.filter((l) => l.level === 40 && /route label/.test(l.msg));
    assert.equal(warnings.length, 1, JSON.stringify(warnings));
    assert.equal(warnings[0]!.max_route_labels, DEFAULT_MAX_ROUTE_LABELS);
    assert.match(warnings[0]!.msg, /\(other\)/);
  });
});

describe('when MetricsConfig.max_route_labels is given', () => {
  it(`should default to ${DEFAULT_MAX_ROUTE_LABELS}`, () => {
    assert.equal(MetricsConfig.parse({}).max_route_labels, DEFAULT_MAX_ROUTE_LABELS);
    assert.equal(MetricsConfig.parse({ max_route_labels: 50 }).max_route_labels, 50);
  });

  for (const bad of [0, -1, 2.5, '100', null]) {
    it(`should refuse ${JSON.stringify(bad)}, naming the record, the key and the value`, () => {
      assert.throws(
        () => createApp({ metrics: { max_route_labels: bad as number } }),
        (err: Error) => err.message.includes('MetricsConfig') && err.message.includes('max_route_labels') && err.message.includes(`got ${JSON.stringify(bad)}`),
      );
    });
  }
});
