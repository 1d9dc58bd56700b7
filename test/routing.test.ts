/**
 * Routing: path patterns (`{name}`, `{name:type}`, `{rest:path}`, Express `:name`), methods, the
 * 404 / 405 problems, mounts, and the route registration errors raised at build time.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { App } from '../lib/app/app.js';
import { AppError } from '../lib/http/errors.js';
import { compilePattern, openApiPath } from '../lib/app/router.js';

describe('when routes use path patterns', () => {
  const app = new App({ port: 0 });
  app.get('/users/{id}', (d) => ({ id: d.pathParams.id }));
  app.get('/users/{id}/posts/{postId:int}', (d) => d.pathParams);
  app.get('/files/{rest:path}', (d) => ({ rest: d.pathParams.rest }));
  app.get('/express/:slug', (d) => ({ slug: d.pathParams.slug }));
  app.get('/users/me', () => ({ me: true }));
  app.route({ method: ['PUT', 'PATCH'], path: '/things/{id}', handler: (d) => ({ method: d.method, id: d.pathParams.id }) });
  app.get('/q', (d) => ({ query: d.query, path: d.path }));
  const router = app.intoRouter();

  it('should capture {name} segments as strings', async () => {
    assert.deepEqual((await request(router).get('/users/abc')).body, { id: 'abc' });
  });

  it('should decode percent-encoded parameters', async () => {
    assert.deepEqual((await request(router).get('/users/a%20b')).body, { id: 'a b' });
  });

  it('should prefer a static segment over a parameter', async () => {
    assert.deepEqual((await request(router).get('/users/me')).body, { me: true });
  });

  it('should coerce typed placeholders', async () => {
    assert.deepEqual((await request(router).get('/users/u1/posts/9')).body, { id: 'u1', postId: 9 });
  });

  it('should capture the rest of the path with {rest:path}', async () => {
    assert.deepEqual((await request(router).get('/files/a/b/c.txt')).body, { rest: 'a/b/c.txt' });
  });

  it('should accept Express :name segments', async () => {
    assert.deepEqual((await request(router).get('/express/hello')).body, { slug: 'hello' });
  });

  it('should serve one route under several methods', async () => {
    assert.deepEqual((await request(router).put('/things/1')).body, { method: 'PUT', id: '1' });
    assert.deepEqual((await request(router).patch('/things/2')).body, { method: 'PATCH', id: '2' });
  });

  it('should give the handler the path without the query, and the query parsed', async () => {
    assert.deepEqual((await request(router).get('/q?a=1&a=2&b=x%20y')).body, { query: { a: ['1', '2'], b: 'x y' }, path: '/q' });
  });

  it('should answer HEAD on a GET route without a body', async () => {
    const res = await request(router).head('/users/abc');
    assert.equal(res.status, 200);
    assert.equal(res.text, undefined);
  });

  it('should not treat a trailing slash as the same path', async () => {
    assert.equal((await request(router).get('/users/abc/')).status, 404);
  });
});

describe('when no route matches', () => {
  const app = new App({ port: 0 });
  app.get('/items', () => []);
  app.post('/items', () => ({}));
  app.delete('/items/{id}', () => undefined);
  const router = app.intoRouter();

  it('should answer an unknown path with a 404 problem', async () => {
    const res = await request(router).get('/nope');
    assert.equal(res.status, 404);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.deepEqual(JSON.parse(res.text), { type: 'https://keel.dev/errors/not-found', title: 'Resource Not Found', status: 404, detail: 'No route matches GET /nope' });
  });

  it('should answer a known path under another method with a 405 problem listing Allow', async () => {
    const res = await request(router).put('/items');
    assert.equal(res.status, 405);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    const allow = (res.headers.allow ?? '').split(', ').sort();
    assert.deepEqual(allow, ['GET', 'HEAD', 'POST']);
    assert.equal(JSON.parse(res.text).type, 'https://keel.dev/errors/method-not-allowed');
  });

  it('should list only the methods of the matching pattern', async () => {
    const res = await request(router).get('/items/3');
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'DELETE');
  });

  it('should send no problem body to HEAD on an unknown path', async () => {
    const res = await request(router).head('/nope');
    assert.equal(res.status, 404);
    assert.equal(res.text, undefined);
  });
});

describe('when node-level handlers are mounted', () => {
  const app = new App({ port: 0, max_body_size: 64 });
  app.mount('*', '/raw', (req, res) => {
    res.setHeader('Content-Type', 'text/plain');
    res.end(`${req.method} ${req.rawBody?.length ?? 'no body read'}`);
  }, { readBody: true });
  app.mount('GET', '/plain', (_req, res) => {
    res.end('plain');
  });
  app.mount('GET', '/async-fail', async () => {
    throw new Error('mount secret hunter2');
  });
  app.get('/raw', () => 'keel wins');
  const router = app.intoRouter();

  it('should call the mount with the body read under max_body_size', async () => {
    const res = await request(router).post('/raw').set('Content-Type', 'text/plain').send('hello');
    assert.equal(res.text, 'POST 5');
  });

  it('should refuse an oversized body before calling the mount', async () => {
    const res = await request(router).post('/raw').set('Content-Type', 'text/plain').send('x'.repeat(65));
    assert.equal(res.status, 413);
    assert.equal(res.headers['content-type'], 'application/problem+json');
  });

  it('should let a keel route registered for the same method and path win', async () => {
    assert.equal((await request(router).get('/raw')).text, 'keel wins');
  });

  it('should serve a mount for its method only', async () => {
    assert.equal((await request(router).get('/plain')).text, 'plain');
    assert.equal((await request(router).post('/plain')).status, 405);
  });

  it('should answer a failing mount with a 500 problem that leaks nothing', async () => {
    const res = await request(router).get('/async-fail');
    assert.equal(res.status, 500);
    assert.equal(res.text.includes('hunter2'), false);
  });
});

describe('when routes are registered wrongly', () => {
  const bad: Array<[string, (app: App) => unknown]> = [
    ['a path without a leading slash', (a) => a.get('users', () => ({}))],
    ['an unknown placeholder type', (a) => a.get('/u/{id:integr}', () => ({}))],
    ['a malformed placeholder', (a) => a.get('/u/{id', () => ({}))],
    ['a parameter declared twice', (a) => a.get('/u/{id}/{id}', () => ({}))],
    ['{rest:path} before the last segment', (a) => a.get('/f/{rest:path}/x', () => ({}))],
    ['an unknown method', (a) => a.route({ method: 'FETCH', path: '/x', handler: () => ({}) })],
    ['an unknown route key', (a) => a.route({ method: 'GET', path: '/x', handler: () => ({}), bodySchema: {}, shema: {} } as never)],
    ['an unknown parameter source', (a) => a.get('/x', () => ({}), { parameters: { form: {} } as never })],
    ['a path parameter schema for a name not in the path', (a) => a.get('/x/{id}', () => ({}), { parameters: { path: { other: { type: 'string' } } } })],
    // @ts-expect-error a typo in a record key is a compile error too
    ['a bad per-route record', (a) => a.get('/x', () => ({}), { cors: { allowed_origin: ['*'] } })],
    // @ts-expect-error so is a wrong value type
    ['a bare boolean request_id', (a) => a.get('/x', () => ({}), { request_id: false })],
    ['middleware that is not a function', (a) => a.get('/x', () => ({}), { middleware: ['nope' as never] })],
  ];
  for (const [what, register] of bad) {
    it(`should throw AppError(Route) for ${what}`, () => {
      assert.throws(() => register(new App()), (err: unknown) => err instanceof AppError && err.kind === 'Route');
    });
  }

  it('should throw AppError(Route) at registration for the same method and pattern twice', () => {
    const app = new App();
    app.get('/x/{id}', () => ({}));
    assert.throws(() => app.get('/x/{id:int}', () => ({})), (err: unknown) => err instanceof AppError && /already registered/.test(err.message));
    assert.doesNotThrow(() => app.post('/x/{id}', () => ({})));
  });

  it('should throw AppError(Route) by build time for the same path under another parameter name', () => {
    const app = new App();
    app.get('/x/{id}', () => ({}));
    assert.throws(() => {
      app.get('/x/{other}', () => ({}));
      app.intoRouter();
    }, (err: unknown) => err instanceof AppError && err.kind === 'Route');
  });

  it('should name the route and the record key in the message', () => {
    try {
      new App().get('/x', () => ({}), { cors: { max_age: -1 } });
      assert.fail('expected an AppError');
    } catch (err) {
      assert.ok(err instanceof AppError);
      assert.match(err.message, /Route\(GET \/x\)\.cors/);
      assert.match(err.message, /max_age/);
      assert.match(err.message, /-1/);
    }
  });
});

describe('when patterns are compiled', () => {
  it('should turn placeholders into find-my-way syntax with implied schemas', () => {
    assert.deepEqual(compilePattern('/u/{id:int}/f/{rest:path}'), {
      pattern: '/u/:id/f/*', names: ['id', 'rest'], typed: { id: { type: 'integer' }, rest: { type: 'string' } }, wildcard: 'rest',
    });
  });

  it('should give OpenAPI paths', () => {
    assert.equal(openApiPath('/u/{id:int}/:slug'), '/u/{id}/{slug}');
  });
});

describe('when the server sets request_timeout and routes do or do not override it', () => {
  const slow = () => new Promise((r) => setTimeout(() => r({ done: true }), 1500));
  const app = new App({ port: 0, request_timeout: 1 });
  app.get('/inherits', slow);
  app.get('/no-timeout', slow, { request_timeout: null });
  const router = app.intoRouter();

  it('should apply the server timeout to a route that does not set one', async () => {
    const res = await request(router).get('/inherits');
    assert.equal(res.status, 408);
    assert.equal(res.headers['content-type'], 'application/problem+json');
  });

  it('should let a route turn the timeout off with request_timeout: null', async () => {
    const res = await request(router).get('/no-timeout');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { done: true });
  });
});
