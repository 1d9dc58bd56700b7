/**
 * The RequestData handlers receive is built lazily (lib/app/request-data.ts): these tests pin what a
 * handler and a hook can rely on — values on first read, writable fields, JSON, the wants_* flags —
 * on both the synchronous path (no hooks, no body) and the general one.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { App } from '../lib/app/app.js';
import { intoHandler, type RequestData } from '../lib/app/handler.js';

describe('when a handler reads the request data of a GET without hooks', () => {
  const app = new App({ port: 0 });
  app.get('/echo/{id}', (d) => ({ path: d.path, params: d.pathParams, query: d.query, agent: d.headers['x-agent'], cookies: d.cookies, state: d.state }));
  app.get('/json', (d) => JSON.parse(JSON.stringify(d)) as unknown);
  const router = app.intoRouter();

  it('should see the path, parameters, query, flattened headers and cookies', async () => {
    const res = await request(router).get('/echo/7?a=1&a=2&b=x').set('X-Agent', 'probe').set('Cookie', 'sid=abc; theme=dark').expect(200);
    assert.deepEqual(res.body, { path: '/echo/7', params: { id: '7' }, query: { a: ['1', '2'], b: 'x' }, agent: 'probe', cookies: { sid: 'abc', theme: 'dark' }, state: {} });
  });

  it('should list the lazily computed fields when serialised to JSON', async () => {
    const res = await request(router).get('/json?q=1').set('Cookie', 'k=v').expect(200);
    assert.equal(res.body.path, '/json');
    assert.deepEqual(res.body.query, { q: '1' });
    assert.deepEqual(res.body.cookies, { k: 'v' });
    assert.equal(res.body.headers.cookie, 'k=v');
    assert.deepEqual(res.body.state, {});
    assert.equal(res.body.method, 'GET');
  });
});

describe('when a hook replaces fields of the request data', () => {
  const app = new App({ port: 0 });
  app.hooks.add('pre_handler', (ctx) => {
    ctx.data.query = { replaced: true };
    ctx.data.headers = { 'x-from': 'hook' };
    ctx.data.cookies = { c: '1' };
    ctx.data.path = '/rewritten';
    ctx.data.state = { user: 'ada' };
  });
  app.get('/h', (d, req) => ({ query: d.query, headers: d.headers, cookies: d.cookies, path: d.path, state: d.state, reqState: req.state }));
  const router = app.intoRouter();

  it('should give the handler the replacements, and share state with req.state', async () => {
    const res = await request(router).get('/h?q=1').set('Cookie', 'c=0').expect(200);
    assert.deepEqual(res.body, {
      query: { replaced: true }, headers: { 'x-from': 'hook' }, cookies: { c: '1' }, path: '/rewritten', state: { user: 'ada' }, reqState: { user: 'ada' },
    });
  });
});

describe('when a handler says it wants no headers or cookies', () => {
  const app = new App({ port: 0 });
  const seen = intoHandler((d: RequestData) => ({ headers: d.headers, cookies: d.cookies }), { wantsHeaders: false, wantsCookies: false });
  app.get('/lean', seen);
  app.post('/lean', seen);
  const router = app.intoRouter();

  it('should give empty maps on a request without a body', async () => {
    const res = await request(router).get('/lean').set('X-A', '1').set('Cookie', 'a=1').expect(200);
    assert.deepEqual(res.body, { headers: {}, cookies: {} });
  });

  it('should still collect them for a request with a body (spec: wants_headers)', async () => {
    const res = await request(router).post('/lean').set('X-A', '1').set('Cookie', 'a=1').send({ x: 1 }).expect(200);
    assert.equal(res.body.headers['x-a'], '1');
    assert.deepEqual(res.body.cookies, { a: '1' });
  });
});

describe('when a route answers synchronously', () => {
  const app = new App({ port: 0 });
  app.get('/sync-throw', () => {
    throw new Error('internal detail');
  });
  app.get('/async-reject', async () => {
    throw new Error('internal detail');
  });
  app.post('/body-throw', () => {
    throw new Error('internal detail');
  });
  const router = app.intoRouter();

  for (const [method, path] of [['get', '/sync-throw'], ['get', '/async-reject'], ['post', '/body-throw']] as const) {
    it(`should turn an error thrown by ${method.toUpperCase()} ${path} into a 500 problem without internals`, async () => {
      const res = await request(router)[method](path).send(method === 'post' ? { a: 1 } : undefined).expect(500);
      assert.match(String(res.headers['content-type']), /application\/problem\+json/);
      assert.doesNotMatch(res.text, /internal detail/);
    });
  }
});

// Issue 13 item 8: cookies named like Object.prototype members were dropped (`name in out` saw the
// inherited member) and `__proto__` went to the prototype setter.
describe('when cookies are named like Object.prototype members', () => {
  const app = new App({ port: 0 });
  app.get('/cookies', (d) => ({
    cookies: d.cookies,
    names: Object.keys(d.cookies),
    proto: Object.getPrototypeOf(d.cookies) === null,
    absent: d.cookies.valueOf === undefined && d.cookies.hasOwnProperty === undefined,
  }));
  app.get('/declared', (d) => ({ validated: d.validatedParams }), { parameters: { cookies: { constructor: { type: 'string', optional: true }, toString: { type: 'string' } } } });
  const router = app.intoRouter();

  it('should give constructor, toString and __proto__ to the handler as ordinary names', async () => {
    const res = await request(router).get('/cookies').set('Cookie', 'constructor=c; toString=t; __proto__=p; hasOwnProperty=h').expect(200);
    assert.deepEqual(res.body.names, ['constructor', 'toString', '__proto__', 'hasOwnProperty']);
    assert.equal(res.body.cookies.constructor, 'c');
    assert.equal(res.body.cookies.toString, 't');
    assert.equal(res.body.cookies.hasOwnProperty, 'h');
    assert.equal(JSON.parse(res.text).cookies.__proto__, 'p');
  });

  it('should keep the cookie object free of a prototype, so absent names read undefined', async () => {
    const res = await request(router).get('/cookies').set('Cookie', '__proto__=%7B%22polluted%22%3Atrue%7D').expect(200);
    assert.equal(res.body.proto, true);
    assert.equal(res.body.absent, true);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('should keep the first of repeated names', async () => {
    const res = await request(router).get('/cookies').set('Cookie', 'constructor=first; constructor=second').expect(200);
    assert.equal(res.body.cookies.constructor, 'first');
  });

  it('should not read an inherited member as the value of an absent declared cookie', async () => {
    const missing = await request(router).get('/declared').expect(422);
    assert.deepEqual(missing.body.errors.map((e: { loc: string[] }) => e.loc), [['cookie', 'toString']]);
    const res = await request(router).get('/declared').set('Cookie', 'toString=t').expect(200);
    assert.deepEqual(res.body.validated.cookies, { toString: 't' });
  });
});

// The same family for query and header parameters: an absent `?toString` read the inherited method.
describe('when declared query or header parameters are named like Object.prototype members', () => {
  const app = new App({ port: 0 });
  app.get('/q', (d) => ({ validated: d.validatedParams }), {
    parameters: { query: { toString: { type: 'string' }, valueOf: { type: 'string', optional: true } }, headers: { constructor: { type: 'string', optional: true } } },
  });
  const router = app.intoRouter();

  it('should report a required one as missing when the request does not send it', async () => {
    const res = await request(router).get('/q').expect(422);
    assert.deepEqual(res.body.errors.map((e: { loc: string[] }) => e.loc), [['query', 'toString']]);
  });

  it('should read the values the request sends, and leave optional absent ones out', async () => {
    const res = await request(router).get('/q?toString=t').set('Constructor', 'c').expect(200);
    assert.deepEqual(res.body.validated.query, { toString: 't' });
    assert.deepEqual(res.body.validated.headers, { constructor: 'c' });
    const bare = await request(router).get('/q?toString=t').expect(200);
    assert.deepEqual(bare.body.validated.headers, {});
  });
});
