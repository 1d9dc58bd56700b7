import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import request from 'supertest';
import express4 from './express4.js';
import express5 from './index.js';

// The real Express of each major, to compare the shape of their routers with keel's.
const require = createRequire(import.meta.url);
const realExpress4 = require('express4');
const realExpress5 = require('express');

describe('when a package wraps or extends keel/express4 routers (as Express 4 routers)', () => {
  it('should make routers functions inheriting express.Router, whose statics are their methods', () => {
    const router = express4.Router();
    assert.equal(typeof router, 'function');
    assert.equal(Object.getPrototypeOf(router), express4.Router);
    assert.equal(router.apply, Function.prototype.apply);
    assert.equal(router.call, Function.prototype.call);
    assert.equal(router.use, express4.Router.use);
    assert.equal(router.route, express4.Router.route);
    // the same shape as Express 4's
    const real = realExpress4.Router();
    assert.equal(Object.getPrototypeOf(real), realExpress4.Router);
    assert.equal(typeof realExpress4.Router.use, typeof express4.Router.use);
  });

  it('should give every router a method added to express.Router, as express-ws adds Router#ws', async () => {
    const Router = express4.Router as any;
    Router.probe = function probe(this: any, path: string, fn: any) { return this.get(path, fn); };
    try {
      const router = express4.Router() as any;
      router.probe('/p', (_req: any, res: any) => res.send('probed'));
      await request(express4().use('/r', router)).get('/r/p').expect(200, 'probed');
    } finally {
      delete Router.probe;
    }
  });

  it('should run a router through Function.prototype.apply, as wrappers such as OpenTelemetry call it', async () => {
    const router = express4.Router();
    router.get('/x', (_req: any, res: any) => res.send('x'));
    const app = express4();
    app.use('/a', function wrapped(this: unknown, ...args: unknown[]) { return router.apply(this, args); });
    await request(app).get('/a/x').expect(200, 'x');
  });

  it('should still route the HTTP BIND method through router.bind, as Express 4 (it shadows Function#bind)', () => {
    assert.equal(typeof express4.Router().bind, 'function');
    assert.notEqual(express4.Router().bind, Function.prototype.bind);
    assert.notEqual(realExpress4.Router().bind, Function.prototype.bind);
  });
});

describe('when an app checks req.route against express.Router.Route (keel/express)', () => {
  it('should define express.Router.Route as Express 5 does, the class of req.route', async () => {
    assert.equal(typeof realExpress5.Router.Route, 'function');
    assert.equal(typeof express5.Router.Route, 'function');
    assert.equal(express5.Router.Route, express5.Route);
    const app = express5();
    app.get('/users/:id', (req: any, res: any) => res.json({ route: req.route instanceof express5.Router.Route, path: req.route.path }));
    await request(app).get('/users/1').expect(200, { route: true, path: '/users/:id' });
  });

  it('should keep Express 4 without a Router.Route static (Express 4 has none)', () => {
    assert.equal(realExpress4.Router.Route, undefined);
    assert.equal((express4.Router as any).Route, undefined);
  });
});
