import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import request from 'supertest';
import express from './index.js';

describe('when routes and middleware share a router (keel/express)', () => {
  it('should run matching layers in registration order across different first segments', async () => {
    const app = express();
    const seen: string[] = [];
    app.use((req: any, _res: any, next: any) => { seen.push('all'); next(); });
    app.get('/users', (_req: any, _res: any, next: any) => { seen.push('users-1'); next(); });
    app.get('/:section', (_req: any, _res: any, next: any) => { seen.push('param'); next(); });
    app.use('/users', (_req: any, _res: any, next: any) => { seen.push('use-users'); next(); });
    app.get('/orders', (_req: any, res: any) => { res.send('orders'); });
    app.get('/users', (_req: any, res: any) => { seen.push('users-2'); res.send(seen.join(',')); });
    await request(app).get('/users').expect(200, 'all,users-1,param,use-users,users-2');
  });

  it('should match a path in another case unless case sensitive routing is on', async () => {
    const app = express();
    app.get('/Users', (_req: any, res: any) => res.send('ok'));
    await request(app).get('/users').expect(200, 'ok');
    const strict = express();
    strict.enable('case sensitive routing');
    strict.get('/Users', (_req: any, res: any) => res.send('ok'));
    await request(strict).get('/users').expect(404);
    await request(strict).get('/Users').expect(200, 'ok');
  });

  it('should route on the rewritten url when a middleware changes req.url', async () => {
    const app = express();
    app.use((req: any, _res: any, next: any) => { if (req.url === '/old') req.url = '/new'; next(); });
    app.get('/old', (_req: any, res: any) => res.send('old'));
    app.get('/new', (req: any, res: any) => res.send('new from ' + req.originalUrl));
    await request(app).get('/old').expect(200, 'new from /old');
  });

  it("should skip the rest of a route on next('route') and leave a router on next('router')", async () => {
    const app = express();
    const router = express.Router();
    router.use((_req: any, _res: any, next: any) => next('router'));
    router.get('/x', (_req: any, res: any) => res.send('inside'));
    app.use(router);
    app.get('/x', (_req: any, _res: any, next: any) => next('route'), (_req: any, res: any) => res.send('skipped'));
    app.get('/x', (_req: any, res: any) => res.send('second route'));
    await request(app).get('/x').expect(200, 'second route');
  });

  it('should call a param callback once per value and give it the decoded value', async () => {
    const app = express();
    let calls = 0;
    app.param('id', (req: any, _res: any, next: any, id: string) => { calls++; req.loaded = id.toUpperCase(); next(); });
    app.get('/items/:id', (_req: any, _res: any, next: any) => next());
    app.get('/items/:id', (req: any, res: any) => res.send(req.loaded));
    await request(app).get('/items/a%20b').expect(200, 'A B');
    assert.equal(calls, 1);
  });

  it('should keep the parent params under mergeParams and set baseUrl/url under a mount path', async () => {
    const app = express();
    const child = express.Router({ mergeParams: true });
    child.get('/posts/:post', (req: any, res: any) => {
      res.json({ params: { ...req.params }, baseUrl: req.baseUrl, url: req.url, originalUrl: req.originalUrl });
    });
    app.use('/users/:user', child);
    const res = await request(app).get('/users/7/posts/9?x=1').expect(200);
    assert.deepEqual(res.body, { params: { user: '7', post: '9' }, baseUrl: '/users/7', url: '/posts/9?x=1', originalUrl: '/users/7/posts/9?x=1' });
  });

  it("should send an async handler's rejection to the error handlers", async () => {
    const app = express();
    app.get('/boom', async () => { throw Object.assign(new Error('nope'), { status: 418 }); });
    app.use((err: any, _req: any, res: any, _next: any) => res.status(err.status).send(err.message));
    await request(app).get('/boom').expect(418, 'nope');
  });

  it('should answer an unknown path with 404 and OPTIONS with the allowed methods', async () => {
    const app = express();
    app.get('/a', (_req: any, res: any) => res.send('a'));
    app.post('/a', (_req: any, res: any) => res.send('a'));
    await request(app).get('/nope').expect(404, /Cannot GET \/nope/);
    await request(app).options('/a').expect('Allow', 'GET, HEAD, POST').expect(200, 'GET, HEAD, POST');
  });

  it('should take path-to-regexp 8 syntax and reject the Express 4 optional-param syntax', async () => {
    const app = express();
    app.get('/files/*path', (req: any, res: any) => res.send(req.params.path.join('/')));
    app.get('/users{/:id}', (req: any, res: any) => res.send(req.params.id ?? 'all'));
    await request(app).get('/files/a/b.txt').expect(200, 'a/b.txt');
    await request(app).get('/users').expect(200, 'all');
    await request(app).get('/users/3').expect(200, '3');
    assert.throws(() => express().get('/user/:id?', () => {}), /Unexpected/);
  });
});

describe('when a route has a single handler (keel/express)', () => {
  it("should leave the route on next('route'), the router on next('router') and reach error handlers on next(err)", async () => {
    const app = express();
    const router = express.Router();
    router.get('/out', (_req: any, _res: any, next: any) => next('router'));
    router.get('/skip', (_req: any, _res: any, next: any) => next('route'));
    router.get('/skip', (req: any, res: any) => res.send('second ' + req.route.path + ' ' + req.baseUrl));
    router.get('/fail', (_req: any, _res: any, next: any) => next(new Error('failed')));
    router.get('/throw', () => { throw new Error('thrown'); });
    app.use('/r', router);
    app.get('/r/out', (req: any, res: any) => res.send('app after router, baseUrl "' + req.baseUrl + '"'));
    app.use((err: any, req: any, res: any, _next: any) => res.status(500).send(err.message + ' at ' + req.route?.path));
    await request(app).get('/r/skip').expect(200, 'second /skip /r');
    await request(app).get('/r/out').expect(200, 'app after router, baseUrl ""');
    await request(app).get('/r/fail').expect(500, 'failed at /fail');
    await request(app).get('/r/throw').expect(500, 'thrown at /throw');
  });

  it('should answer HEAD with the GET handler and run an all() handler for any method', async () => {
    const app = express();
    app.get('/g', (req: any, res: any) => res.set('X-Method', req.method).send('get'));
    app.all('/any', (req: any, res: any) => res.send(req.method));
    await request(app).head('/g').expect(200).expect('X-Method', 'HEAD');
    await request(app).delete('/any').expect(200, 'DELETE');
  });

  it("should run a patched Route.prototype.dispatch and a route layer's wrapped handle", async () => {
    const Route = (express as any).Router.Route;
    const original = Route.prototype.dispatch;
    const seen: string[] = [];
    Route.prototype.dispatch = function dispatch(this: any, req: any, res: any, done: any) {
      seen.push('dispatch ' + this.path);
      return original.call(this, req, res, done);
    };
    try {
      const app = express();
      app.get('/patched', (_req: any, res: any) => res.send('ok'));
      await request(app).get('/patched').expect(200, 'ok');
    } finally {
      Route.prototype.dispatch = original;
    }
    const app = express();
    app.get('/wrapped', (_req: any, res: any) => res.send('ok'));
    const layer = app.router.stack.find((l: any) => l.route?.path === '/wrapped');
    const handle = layer.handle;
    layer.handle = function wrapped(req: any, res: any, next: any) { seen.push('wrapped'); return handle(req, res, next); };
    await request(app).get('/wrapped').expect(200, 'ok');
    assert.deepEqual(seen, ['dispatch /patched', 'wrapped']);
  });
});

describe('when a sub-app is mounted (keel/express)', () => {
  it("should emit 'mount', inherit settings and prototypes, and restore the parent's afterwards", async () => {
    const parent = express();
    const sub = express();
    let mountedOn: unknown;
    sub.on('mount', (p: unknown) => { mountedOn = p; });
    parent.set('title', 'parent');
    parent.request.fromParent = () => 'yes';
    sub.get('/', (req: any, res: any) => res.send(`${req.app.get('title')} ${req.fromParent()} ${req.baseUrl} ${sub.path()}`));
    parent.use('/blog', sub);
    parent.get('/after', (req: any, res: any) => res.send(String(req.app === parent)));
    assert.equal(mountedOn, parent);
    await request(parent).get('/blog').expect(200, 'parent yes /blog /blog');
    await request(parent).get('/after').expect(200, 'true');
  });
});

describe('when the app listens itself (keel/express)', () => {
  it("should return a node http.Server whose requests carry the app's prototypes", async () => {
    const app = express();
    app.request.greet = function greet(this: any) { return 'hi ' + this.path; };
    app.get('/who', (req: any, res: any) => {
      res.json({ greet: req.greet(), incoming: req instanceof http.IncomingMessage, proto: app.request.isPrototypeOf(req) });
    });
    const server = await new Promise<http.Server>((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
    try {
      assert.ok(server instanceof http.Server);
      const { port } = server.address() as { port: number };
      const body = await (await fetch(`http://127.0.0.1:${port}/who`)).json();
      assert.deepEqual(body, { greet: 'hi /who', incoming: true, proto: true });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('when a router is introspected (keel/express)', () => {
  it('should list each route path with its methods and each mounted router', () => {
    const router = express.Router();
    const nested = express.Router();
    router.get('/a', () => {});
    router.route('/b').post(() => {}).all(() => {});
    router.get(['/c', '/d'], () => {});
    router.use('/nested', nested);
    router.use(() => {});
    const listed = router.listRoutes().map((r: any) => ({ path: r.path, methods: r.methods, router: r.router === nested }));
    assert.deepEqual(listed, [
      { path: '/a', methods: ['GET', 'HEAD'], router: false },
      { path: '/b', methods: ['POST', '*'], router: false },
      { path: '/c', methods: ['GET', 'HEAD'], router: false },
      { path: '/d', methods: ['GET', 'HEAD'], router: false },
      { path: '/nested', methods: undefined, router: true },
    ]);
  });
});

describe('when a router stack is changed or shares layers with another router (keel/express)', () => {
  it('should see layers removed from or added to the stack after requests', async () => {
    const app = express();
    const router = express.Router();
    router.get('/a', (_req: any, res: any) => res.send('a'));
    app.use(router);
    await request(app).get('/a').expect(200, 'a');
    router.stack.splice(0, 1);
    await request(app).get('/a').expect(404);
    router.get('/a', (_req: any, res: any) => res.send('again'));
    await request(app).get('/a').expect(200, 'again');
  });

  it('should keep each router its own order when the same layers are in both stacks', async () => {
    const a = express.Router();
    a.get('/x', (_req: any, res: any) => res.send('a x'));
    a.get('/x', (_req: any, res: any) => res.send('a x second'));
    a.get('/y', (_req: any, res: any) => res.send('a y'));
    const b = express.Router();
    b.stack.push(a.stack[2], a.stack[1], a.stack[0]);
    const appA = express().use(a);
    const appB = express().use(b);
    await request(appA).get('/y').expect(200, 'a y');
    await request(appB).get('/x').expect(200, 'a x second');
    await request(appA).get('/x').expect(200, 'a x');
    await request(appB).get('/y').expect(200, 'a y');
  });
});

describe('when the router reads the pathname of req.url', () => {
  it("should give parseurl's pathname for every form of request target", async () => {
    const { pathnameOf } = await import('./router/url.js');
    const parseurl = (await import('parseurl')).default;
    const urls = [
      '/', '/a/b', '/a/b?', '/a/b?x=1&y=2', '/a?b?c', '/%E2%82%AC/x', '/a b', '/a#frag', '/a?q#frag', '/a\tb',
      '/caf\u00e9', '/a\u00a0b', '/a\ufeffb', 'http://example.com/a/b?c', 'http://example.com', '*', '', '//x/y',
    ];
    for (const url of urls) {
      assert.equal(pathnameOf({ url }), parseurl({ url } as any)?.pathname, JSON.stringify(url));
    }
    assert.equal(pathnameOf({ url: undefined }), undefined);
  });
});
