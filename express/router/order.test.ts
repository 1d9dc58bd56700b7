import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import express from '../index.js';
import express4 from '../express4.js';

// The order and the params a router pass gives its layers, which its shortcuts must keep: the first-segment index
// (layer-index.ts), `use(fn)` layers matched without a match object, and a mounted router's pathname handed on by
// its mount (url.ts) instead of scanned again.
for (const [engine, create] of [['keel/express', express], ['keel/express4', express4]] as const) {
  describe(`when a router runs layers of several kinds in order (${engine})`, () => {
    it('should run a middleware registered between two routes of the same path between them', async () => {
      const app = create();
      const seen: string[] = [];
      app.get('/a/:id', (_req: any, _res: any, next: any) => { seen.push('route1'); next(); });
      app.use((_req: any, _res: any, next: any) => { seen.push('mw'); next(); });
      app.use('/b', (_req: any, _res: any, next: any) => { seen.push('b'); next(); });
      app.get('/a/:id', (req: any, res: any) => { seen.push('route2'); res.send(req.params.id); });
      await request(app).get('/a/7').expect(200, '7');
      assert.deepEqual(seen, ['route1', 'mw', 'route2']);
    });

    it('should let a regexp route registered first answer before a string route', async () => {
      const app = create();
      app.get(/^\/r\/(\d+)$/, (req: any, res: any) => res.send('regexp ' + req.params[0]));
      app.get('/r/:n', (req: any, res: any) => res.send('string ' + req.params.n));
      await request(app).get('/r/5').expect(200, 'regexp 5');
      await request(app).get('/r/x').expect(200, 'string x');
    });

    it("should skip to the next matching layer on next('route'), middleware included", async () => {
      const app = create();
      const seen: string[] = [];
      app.get('/x', (_req: any, _res: any, next: any) => next('route'), () => { seen.push('never'); });
      app.use((_req: any, _res: any, next: any) => { seen.push('mw'); next(); });
      app.get('/x', (_req: any, res: any) => res.send('second'));
      await request(app).get('/x').expect(200, 'second');
      assert.deepEqual(seen, ['mw']);
    });

    it('should give each use(fn) layer a fresh params object, and the parent params under mergeParams', async () => {
      const app = create();
      const router = create.Router({ mergeParams: true });
      const plain = create.Router();
      const seen: unknown[] = [];
      router.use((req: any, _res: any, next: any) => { seen.push({ ...req.params }); req.params.leak = 1; next(); });
      router.use((req: any, _res: any, next: any) => { seen.push({ ...req.params }); next(); });
      router.get('/items/:id', (req: any, res: any) => res.json({ ...req.params }));
      plain.use((req: any, _res: any, next: any) => { seen.push({ ...req.params }); next(); });
      plain.get('/p', (req: any, res: any) => res.json({ ...req.params }));
      app.use('/v/:version', router);
      app.use('/w/:version', plain);
      const res = await request(app).get('/v/2/items/9').expect(200);
      assert.deepEqual(res.body, { version: '2', id: '9' });
      assert.deepEqual(seen, [{ version: '2' }, { version: '2' }]);
      seen.length = 0;
      await request(app).get('/w/3/p').expect(200, {});
      assert.deepEqual(seen, [{}]);
    });

    it('should run app.param and router.param callbacks once per value across a mount', async () => {
      const app = create();
      const router = create.Router();
      const calls: string[] = [];
      app.param('version', (_req: any, _res: any, next: any, v: string) => { calls.push('version=' + v); next(); });
      router.param('id', (req: any, _res: any, next: any, id: string) => { calls.push('id=' + id); req.n = Number(id); next(); });
      router.get('/r/:id', (_req: any, _res: any, next: any) => next());
      router.get('/r/:id', (req: any, res: any) => res.send(String(req.n)));
      app.use('/api/:version', router);
      await request(app).get('/api/v1/r/42').expect(200, '42');
      assert.deepEqual(calls, ['version=v1', 'id=42']);
    });

    it('should route with routes and middleware added after the first request', async () => {
      const app = create();
      const router = create.Router();
      router.get('/one', (_req: any, res: any) => res.send('one'));
      app.use('/m', router);
      await request(app).get('/m/one').expect(200, 'one');
      await request(app).get('/m/two').expect(404);
      router.use('/two', (_req: any, res: any, next: any) => { res.set('X-Mw', 'yes'); next(); });
      router.get('/two', (_req: any, res: any) => res.send('two'));
      app.get('/late', (_req: any, res: any) => res.send('late'));
      const res = await request(app).get('/m/two').expect(200, 'two');
      assert.equal(res.headers['x-mw'], 'yes');
      await request(app).get('/late').expect(200, 'late');
    });

    it("should give a mounted router the pathname of the url its mount left, query, escapes and all", async () => {
      const app = create();
      const router = create.Router();
      router.use((req: any, res: any) => res.json({ url: req.url, path: req.path, baseUrl: req.baseUrl }));
      app.use('/api', router);
      const cases: Array<[string, { url: string; path: string; baseUrl: string }]> = [
        ['/api/a/b?q=1', { url: '/a/b?q=1', path: '/a/b', baseUrl: '/api' }],
        ['/api?q=/x', { url: '/?q=/x', path: '/', baseUrl: '/api' }],
        ['/api/', { url: '/', path: '/', baseUrl: '/api' }],
        ['/API/a%20b', { url: '/a%20b', path: '/a%20b', baseUrl: '/API' }],
        ['/api/a%7Cb#frag', { url: '/a%7Cb', path: '/a%7Cb', baseUrl: '/api' }],
      ];
      for (const [target, body] of cases) await request(app).get(target).expect(200, body);
    });

    it('should route a mounted router on a url rewritten by its own middleware', async () => {
      const app = create();
      const router = create.Router();
      router.use((req: any, _res: any, next: any) => { if (req.url === '/old') req.url = '/new?x=1'; next(); });
      router.get('/new', (req: any, res: any) => res.send(req.path + ' ' + req.url));
      app.use('/r', router);
      await request(app).get('/r/old').expect(200, '/new /new?x=1');
    });
  });
}
