import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import express4 from './express4.js';
import express5 from './index.js';

describe('when an app uses keel/express4 (Express 4 semantics)', () => {
  it('should take path-to-regexp 0.1 syntax: optional params and a bare *', async () => {
    const app = express4();
    app.get('/user/:id?', (req: any, res: any) => res.send(req.params.id || 'all'));
    app.get('/files/*', (req: any, res: any) => res.send(req.params[0]));
    await request(app).get('/user').expect(200, 'all');
    await request(app).get('/user/4').expect(200, '4');
    await request(app).get('/files/a/b.txt').expect(200, 'a/b.txt');
  });

  it('should parse req.query with the extended parser by default (5 uses the simple one)', async () => {
    const handler = (req: any, res: any) => res.json(req.query);
    const app4 = express4().get('/', handler);
    const app5 = express5().get('/', handler);
    await request(app4).get('/?user[name]=tj').expect(200, { user: { name: 'tj' } });
    await request(app5).get('/?user[name]=tj').expect(200, { 'user[name]': 'tj' });
  });

  it('should offer app.del and router.param(fn) customizers', async () => {
    const app = express4();
    app.param((name: string, re: RegExp) => (req: any, _res: any, next: any, val: string) => {
      if (re.test(val)) { req.params[name] = val; next(); } else next('route');
    });
    app.param('id', /^\d+$/);
    app.del('/items/:id', (req: any, res: any) => res.send('deleted ' + req.params.id));
    app.del('/items/*', (_req: any, res: any) => res.status(400).send('bad id'));
    await request(app).delete('/items/12').expect(200, 'deleted 12');
    await request(app).delete('/items/ab').expect(400, 'bad id');
  });

  it("should catch only synchronous errors: a returned promise is not awaited (5 awaits it)", async () => {
    const awaited = { 4: false, 5: false };
    for (const [major, express] of [[4, express4], [5, express5]] as const) {
      const app = express();
      app.get('/', (_req: any, res: any) => {
        res.send('ok');
        // a thenable whose then() says whether the router subscribed to it
        return { then() { awaited[major] = true; } };
      });
      await request(app).get('/').expect(200, 'ok');
    }
    assert.deepEqual(awaited, { 4: false, 5: true });
    const app = express4();
    app.get('/throw', () => { throw new Error('sync'); });
    app.use((err: any, _req: any, res: any, _next: any) => res.status(500).send(err.message));
    await request(app).get('/throw').expect(500, 'sync');
  });

  it('should list the methods of an automatic OPTIONS answer as Express 4 does', async () => {
    const app = express4();
    app.get('/a', (_req: any, res: any) => res.send('a'));
    app.post('/a', (_req: any, res: any) => res.send('a'));
    await request(app).options('/a').expect('Allow', 'GET,HEAD,POST').expect(200, 'GET,HEAD,POST');
  });

  it('should throw a pointer to the separate package when removed Connect middleware is read', () => {
    assert.throws(() => (express4 as any).bodyParser, /no longer bundled with Express/);
    assert.equal(typeof (express4 as any).query, 'function');
  });
});
