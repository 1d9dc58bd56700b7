/**
 * keel and Express together: Express routers merged into a keel App (mergeRouter / attachRouter),
 * and a keel App mounted inside a legacy Express app (legacy.use(keel.intoRouter())).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import express from 'express';
import request from 'supertest';
import { App } from '../lib/app.js';
import { AppError } from '../lib/errors.js';

function expressRouter(tag: string) {
  const r = express.Router();
  r.get('/shared', (_req, res) => {
    res.json({ from: `express-${tag}` });
  });
  r.get(`/only-${tag}`, (_req, res) => {
    res.json({ from: `express-${tag}` });
  });
  r.post('/keel-get-only', (_req, res) => {
    res.status(201).json({ from: `express-${tag}` });
  });
  r.get('/express-throws', () => {
    throw new Error('express route secret: hunter2');
  });
  return r;
}

describe('when an Express router is merged with mergeRouter()', () => {
  const app = new App({ port: 0 });
  app.get('/shared', () => ({ from: 'keel' }));
  app.get('/keel-get-only', () => ({ from: 'keel' }));
  app.get('/keel', () => ({ from: 'keel' }));
  const returned = app.mergeRouter(expressRouter('a'));
  const router = app.intoRouter();

  it('should return the App for chaining', () => {
    assert.equal(returned, app);
  });

  it("should serve the Express router's routes", async () => {
    const res = await request(router).get('/only-a');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { from: 'express-a' });
  });

  it('should let keel routes win on conflicts', async () => {
    const res = await request(router).get('/shared');
    assert.deepEqual(res.body, { from: 'keel' });
  });

  it('should serve keel routes as before', async () => {
    assert.deepEqual((await request(router).get('/keel')).body, { from: 'keel' });
  });

  it('should let Express answer a method keel does not route on a keel path', async () => {
    const res = await request(router).post('/keel-get-only');
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, { from: 'express-a' });
  });

  it('should answer what neither matches with a 404 problem, not Express HTML', async () => {
    const res = await request(router).get('/nowhere');
    assert.equal(res.status, 404);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(JSON.parse(res.text).type, 'https://keel.dev/errors/not-found');
  });

  it('should answer a failing Express route with a 500 problem that leaks nothing', async () => {
    const res = await request(router).get('/express-throws');
    assert.equal(res.status, 500);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(res.text.includes('hunter2'), false);
    assert.equal(res.text.includes('<'), false, 'no HTML error page');
  });

  it('should answer a keel path under another method with a 405 problem and Allow', async () => {
    const res = await request(router).delete('/keel');
    assert.equal(res.status, 405);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.match(res.headers.allow ?? '', /\bGET\b/);
  });
});

describe('when Express routers are attached with attachRouter()', () => {
  const app = new App({ port: 0 });
  app.get('/shared', () => ({ from: 'keel' }));
  app.attachRouter(expressRouter('a'));
  app.attachRouter(expressRouter('b'));
  const router = app.intoRouter();

  it('should serve each attached router, in order', async () => {
    assert.deepEqual((await request(router).get('/only-a')).body, { from: 'express-a' });
    assert.deepEqual((await request(router).get('/only-b')).body, { from: 'express-b' });
  });

  it('should keep keel first', async () => {
    assert.deepEqual((await request(router).get('/shared')).body, { from: 'keel' });
  });

  it('should accept a whole Express app as a router', async () => {
    const app2 = new App({ port: 0 });
    const sub = express();
    sub.get('/sub', (_req, res) => {
      res.send('sub app');
    });
    app2.attachRouter(sub);
    const res = await request(app2.intoRouter()).get('/sub');
    assert.equal(res.text, 'sub app');
  });

  it('should refuse something that is not a router', () => {
    assert.throws(() => new App().mergeRouter({} as never), AppError);
  });

  it('should refuse merging after the router was built', () => {
    assert.throws(() => app.mergeRouter(express.Router()), (err: unknown) => err instanceof AppError && err.kind === 'Route');
  });
});

describe('when a keel App is used inside a legacy Express app', () => {
  const keel = new App({ port: 0 });
  keel.get('/api/users/{id:int}', (d) => ({ id: d.pathParams.id, from: 'keel' }));
  keel.post('/api/users', (d) => ({ created: d.body }), { body: { type: 'object', required: ['name'] } });
  const legacy = express();
  legacy.use(express.json());
  legacy.use(keel.intoRouter());
  legacy.get('/legacy', (_req, res) => {
    res.json({ from: 'legacy' });
  });
  legacy.use((_req: express.Request, res: express.Response) => {
    res.status(404).json({ from: 'legacy-404' });
  });

  it('should serve keel routes', async () => {
    const res = await request(legacy).get('/api/users/7');
    assert.deepEqual(res.body, { id: 7, from: 'keel' });
  });

  it('should pass unmatched requests on to later Express handlers', async () => {
    assert.deepEqual((await request(legacy).get('/legacy')).body, { from: 'legacy' });
    const miss = await request(legacy).get('/nothing');
    assert.equal(miss.status, 404);
    assert.deepEqual(miss.body, { from: 'legacy-404' });
  });

  it("should validate keel routes' bodies, even after express.json() read the stream", async () => {
    const ok = await request(legacy).post('/api/users').send({ name: 'Ann' });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body, { created: { name: 'Ann' } });
    const bad = await request(legacy).post('/api/users').send({ nom: 'Ann' });
    assert.equal(bad.status, 422);
    assert.equal(bad.headers['content-type'], 'application/problem+json');
  });

  it('should keep keel problems for keel routes', async () => {
    const res = await request(legacy).get('/api/users/abc');
    assert.equal(res.status, 422);
    assert.equal(res.headers['content-type'], 'application/problem+json');
  });
});

describe('when intoRouterAndConfig() is called', () => {
  it('should return the built router and the frozen ServerConfig', async () => {
    const app = new App({ port: 0, max_body_size: 1234, compression: {} });
    app.get('/x', () => 'x');
    const { router, config } = app.intoRouterAndConfig();
    assert.equal(router, app.intoRouter(), 'built once');
    assert.equal(config, app.config);
    assert.equal(config.max_body_size, 1234);
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.compression));
    assert.equal((await request(router).get('/x')).text, 'x');
  });

  it('should refuse adding routes once built', () => {
    const app = new App();
    app.intoRouterAndConfig();
    assert.throws(() => app.get('/late', () => ({})), (err: unknown) => err instanceof AppError && err.kind === 'Route');
  });
});
