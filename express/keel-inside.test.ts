/**
 * keel inside keel/express: the factories an Express app adopts one at a time and an embedded keel App
 * (`intoRouter()`) work on keel's Express engines as they do on Express (issue 24, item 5).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import express5 from './index.js';
import express4 from './express4.js';
import { createApp } from '../lib/index.js';
import { cors } from '../middleware/cors/index.js';
import { rateLimit } from '../middleware/rate-limit/index.js';
import { requestId } from '../middleware/request-id/index.js';
import { problemHandler } from '../middleware/problem-handler/index.js';

const ENGINES = [
  { name: 'keel/express', express: express5 },
  { name: 'keel/express4', express: express4 },
] as const;

function build(express: (typeof ENGINES)[number]['express']) {
  const legacy = express();
  legacy.use(requestId());
  legacy.use(cors({ origin: 'https://shop.example' }));
  legacy.use('/limited', rateLimit({ windowMs: 60_000, limit: 2 }));
  legacy.get('/limited', (_req: unknown, res: { send(body: string): void }) => res.send('ok'));
  const api = createApp({}, (app) => {
    app.get('/v2/items/{id:int}', (data) => ({ id: data.pathParams.id }));
  });
  legacy.use(api.intoRouter());
  legacy.get('/legacy', (_req: unknown, res: { json(body: unknown): void }) => res.json({ from: 'express' }));
  legacy.use(problemHandler());
  return legacy;
}

for (const { name, express } of ENGINES) {
  describe(`when an app on ${name} adopts keel's factories and embeds a keel App`, () => {
    it("should answer keel's routes with typed parameters and fall through to the app's own routes", async () => {
      const app = build(express);
      const typed = await request(app).get('/v2/items/7').expect(200);
      assert.deepEqual(typed.body, { id: 7 });
      const legacy = await request(app).get('/legacy').expect(200);
      assert.deepEqual(legacy.body, { from: 'express' });
    });

    it("should refuse a keel route's bad parameter with a 422 problem", async () => {
      const res = await request(build(express)).get('/v2/items/seven').expect(422);
      assert.match(res.headers['content-type'] ?? '', /application\/problem\+json/);
    });

    it('should run the factories: request id, CORS for the allowed origin only, the rate limit', async () => {
      const app = build(express);
      const allowed = await request(app).get('/legacy').set('Origin', 'https://shop.example').expect(200);
      assert.equal(allowed.headers['access-control-allow-origin'], 'https://shop.example');
      assert.match(allowed.headers['x-request-id'] ?? '', /\S/);
      const other = await request(app).get('/legacy').set('Origin', 'https://evil.example').expect(200);
      assert.equal(other.headers['access-control-allow-origin'], 'https://shop.example', 'the cors package sends its one origin; the browser refuses the mismatch');
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await request(app).get('/limited')).status);
      assert.deepEqual(statuses, [200, 200, 429]);
    });
  });
}
