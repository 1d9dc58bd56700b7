/**
 * keel and Express together: Express routers merged into a keel App (mergeRouter / attachRouter),
 * and a keel App mounted inside a legacy Express app (legacy.use(keel.intoRouter())).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import express from 'express';
import request from 'supertest';
import { App } from '../lib/app/app.js';
import { AppError } from '../lib/http/errors.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express4 from 'express4';
import { EXPRESS_VERSIONS } from './helpers/express-versions.js';
import { captureLogs } from './helpers/log-capture.js';

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

const SECRET = 'a-test-secret-that-is-32-bytes!!';

for (const { name, express: expressOf } of EXPRESS_VERSIONS) {
  describe(`when a keel App with server features is embedded in a legacy ${name} app`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-embed-'));
    writeFileSync(join(dir, 'hello.txt'), 'hello');
    const keel = new App({
      port: 0,
      enable_request_id: true,
      jwt_auth: { secret: SECRET },
      rate_limit: { per_second: 1, burst: 100 },
      static_files: [{ directory: dir, route_prefix: '/assets' }],
    });
    keel.get('/api/me', () => ({ me: true }));
    // The merged router is of the legacy app's version, with a sub-router of its own.
    const merged = expressOf.Router();
    merged.get('/merged', (_req, res) => void res.json({ from: 'merged' }));
    const nested = expressOf.Router();
    nested.get('/deep/:id', (_req, res) => void res.json({ from: 'nested' }));
    merged.use('/nested', nested);
    keel.mergeRouter(merged, { express: expressOf });
    const legacy = expressOf();
    legacy.use(keel.intoRouter());
    legacy.get('/legacy', (_req, res) => void res.json({ from: 'legacy' }));
    legacy.get('/assets/legacy.txt', (_req, res) => void res.send('legacy asset'));
    legacy.get('/nested/legacy', (_req, res) => void res.send('legacy nested'));
    legacy.use((_req: express.Request, res: express.Response) => void res.status(404).json({ from: 'legacy-404' }));

    it("should leave the legacy app's routes untouched: no 401, no rate limit, no request id, no CSP", async () => {
      for (let i = 0; i < 3; i++) {
        const res = await request(legacy).get('/legacy');
        assert.equal(res.status, 200);
        assert.deepEqual(res.body, { from: 'legacy' });
        for (const h of ['x-request-id', 'content-security-policy', 'ratelimit', 'ratelimit-policy', 'www-authenticate']) assert.equal(res.headers[h], undefined, h);
      }
    });

    it("should leave the legacy app's 404 untouched", async () => {
      const res = await request(legacy).get('/nowhere');
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, { from: 'legacy-404' });
      assert.equal(res.headers['x-request-id'], undefined);
    });

    it("should leave a legacy route under a merged sub-router's prefix untouched", async () => {
      const res = await request(legacy).get('/nested/legacy');
      assert.equal(res.text, 'legacy nested');
      assert.equal(res.headers['x-request-id'], undefined);
    });

    it("should leave a legacy route under a static prefix untouched when no file is there", async () => {
      const res = await request(legacy).get('/assets/legacy.txt');
      assert.equal(res.text, 'legacy asset');
      assert.equal(res.headers['x-request-id'], undefined);
    });

    it('should treat a path that escapes the static directory as no file (no existence oracle outside it)', async () => {
      // hello.txt exists one level up from a sibling directory's point of view: <tmp>/keel-embed-…/hello.txt.
      const outside = join(dir, '..', 'keel-embed-outside.txt');
      writeFileSync(outside, 'secret');
      try {
        for (const path of [`/assets/..%2fkeel-embed-outside.txt`, `/assets/%2e%2e/keel-embed-outside.txt`, '/assets/hello.txt%00.png']) {
          const res = await request(legacy).get(path);
          assert.equal(res.status, 404, path);
          assert.deepEqual(res.body, { from: 'legacy-404' }, path);
          assert.equal(res.headers['x-request-id'], undefined, path);
        }
      } finally {
        rmSync(outside, { force: true });
      }
    });

    it("should apply keel's server features to keel's routes", async () => {
      const res = await request(legacy).get('/api/me');
      assert.equal(res.status, 401);
      assert.match(res.headers['content-type']!, /^application\/problem\+json/);
      assert.ok(res.headers['x-request-id']);
    });

    it("should apply keel's server features to the merged router's routes and to static files", async () => {
      for (const path of ['/merged', '/nested/deep/1', '/assets/hello.txt']) {
        const res = await request(legacy).get(path);
        assert.equal(res.status, 401, path);
        assert.ok(res.headers['x-request-id'], path);
      }
    });
  });

  describe(`when a legacy ${name} app embeds a keel App without server features`, () => {
    it('should pass unmatched requests on with the same req and res prototypes', async () => {
      const keel = new App({ port: 0 });
      keel.get('/k', () => ({ k: 1 }));
      const legacy = expressOf();
      legacy.use(keel.intoRouter());
      legacy.get('/q', (req, res) => void res.json(req.query));
      const res = await request(legacy).get('/q?a[b]=1');
      assert.deepEqual(res.body, name === 'express@4' ? { a: { b: '1' } } : { 'a[b]': '1' });
    });
  });
}

/** An Express 4 router using what Express 5 removed or changed. */
function express4Router() {
  const r = express4.Router();
  r.get('/v4/users/:id', (req: { param(n: string): string }, res: { json(b: unknown): void }) => res.json({ id: req.param('id') }));
  r.post('/v4/items', (_req: unknown, res: { send(status: number, body: unknown): void }) => res.send(201, { created: true }));
  r.get('/v4/query', (req: { query: unknown }, res: { json(b: unknown): void }) => res.json(req.query));
  return r;
}

describe('when an Express 4 router is merged', () => {
  it('should refuse it without an Express 4 to run it, saying how to pass one', () => {
    assert.throws(
      () => new App().mergeRouter(express4Router()),
      (err: unknown) => err instanceof AppError && err.kind === 'Route' && /Express 4 Router/.test(err.message) && /\{ express \}/.test(err.message) && /req\.param\(\)/.test(err.message),
    );
  });

  describe('with { express } of version 4', () => {
    const app = new App({ port: 0 });
    app.get('/keel', () => ({ from: 'keel' }));
    app.mergeRouter(express4Router(), { express: express4 });
    const router = app.intoRouter();
    // Express 4 reports these calls through depd, which hands them to 'deprecation' listeners
    // when there are any (instead of writing them to stderr): the notices prove Express 4 ran them.
    const notices: string[] = [];
    const onDeprecation = (err: Error) => notices.push(err.message);
    before(() => process.on('deprecation', onDeprecation));
    after(() => process.off('deprecation', onDeprecation));

    it('should keep req.param()', async () => {
      const res = await request(router).get('/v4/users/7');
      assert.deepEqual(res.body, { id: '7' });
    });

    it('should keep res.send(status, body)', async () => {
      const res = await request(router).post('/v4/items');
      assert.equal(res.status, 201);
      assert.deepEqual(res.body, { created: true });
    });

    it("should give Express 4's own deprecation notices for them", () => {
      assert.deepEqual(notices.map((m) => m.split(':')[0]).sort(), ['req.param(name)', 'res.send(status, body)']);
    });

    it("should keep Express 4's extended query parsing", async () => {
      const res = await request(router).get('/v4/query?a[b]=1');
      assert.deepEqual(res.body, { a: { b: '1' } });
    });

    it('should still serve keel routes and the 404 problem', async () => {
      assert.deepEqual((await request(router).get('/keel')).body, { from: 'keel' });
      assert.equal((await request(router).get('/nowhere')).status, 404);
    });
  });

  it('should run a whole Express 4 app as itself, without options', async () => {
    const sub = express4();
    sub.use(express4Router());
    const app = new App({ port: 0 });
    app.mergeRouter(sub);
    const router = app.intoRouter();
    assert.deepEqual((await request(router).get('/v4/users/3')).body, { id: '3' });
    assert.equal((await request(router).post('/v4/items')).status, 201);
    assert.deepEqual((await request(router).get('/v4/query?a[b]=1')).body, { a: { b: '1' } });
  });

  it('should refuse an Express 5 router given { express } of version 4', () => {
    assert.throws(() => new App().mergeRouter(express.Router(), { express: express4 }), (err: unknown) => err instanceof AppError && /Express 5 Router/.test(err.message));
  });

  it('should refuse a plain middleware function, pointing to app.use()', () => {
    assert.throws(() => new App().mergeRouter((_req: unknown, _res: unknown, next: () => void) => next()), (err: unknown) => err instanceof AppError && /app\.use\(\)/.test(err.message));
  });

  it("should keep Express 5's simple query parsing for an Express 5 router", async () => {
    const r = express.Router();
    r.get('/q', (req, res) => void res.json(req.query));
    const app = new App({ port: 0 });
    app.mergeRouter(r);
    assert.deepEqual((await request(app.intoRouter()).get('/q?a[b]=1')).body, { 'a[b]': '1' });
  });
});

describe('when a merged Express router throws', () => {
  it('should log the error with the request id, and answer a 500 problem without it', async () => {
    const { logger, next } = captureLogs((rec) => rec.level === 50);
    const app = new App({ port: 0, enable_request_id: true }, { logger });
    const r = express.Router();
    r.get('/boom', () => {
      throw new Error('secret: hunter2');
    });
    app.mergeRouter(r);
    const res = await request(app.intoRouter()).get('/boom');
    assert.equal(res.status, 500);
    assert.equal(res.text.includes('hunter2'), false);
    const rec = await next();
    assert.equal(rec.request_id, res.headers['x-request-id']);
    assert.equal(rec.url, '/boom');
    assert.match(JSON.stringify(rec.err), /hunter2/);
  });

  it('should not log a 4xx a merged router hands on', async () => {
    const { logger } = captureLogs();
    const seen: unknown[] = [];
    const app = new App({ port: 0 }, { logger: Object.assign(logger, { error: (o: unknown) => void seen.push(o) }) as never });
    const r = express.Router();
    r.get('/bad', (_req, _res, next) => next(Object.assign(new Error('nope'), { status: 400, expose: true })));
    app.mergeRouter(r);
    const res = await request(app.intoRouter()).get('/bad');
    assert.equal(res.status, 400);
    assert.equal(seen.length, 0);
  });
});
