/**
 * The handler contract (spec: Handler contract): each flag observed through a real App, plus
 * intoHandler, handlerResultFromResponse and what handler return values become on the wire.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import request from 'supertest';
import { App } from '../lib/app/app.js';
import {
  intoHandler, handlerResultFromResponse, response, KeelResponse, HandlerResult, type Handler, type RequestData,
} from '../lib/app/handler.js';
import type { KeelRequest } from '../lib/http/request.js';

type WithKeel = KeelRequest & { keel?: RequestData };

describe('when a handler prefers the raw JSON body', () => {
  const app = new App({ port: 0 });
  const raw = intoHandler((d) => ({ body: d.body === undefined ? 'undefined' : d.body, raw: d.rawBody?.toString('utf8') ?? null }), { prefersRawJsonBody: true });
  app.post('/raw', raw);
  app.post('/raw-with-schema', raw, { body: { type: 'object', required: ['a'] } });
  const router = app.intoRouter();

  it('should give it the raw bytes and not parse them when the route has no body schema', async () => {
    const res = await request(router).post('/raw').set('Content-Type', 'application/json').send('{"a": 1}');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { body: 'undefined', raw: '{"a": 1}' });
  });

  it('should not answer malformed JSON with a 400, since nothing is parsed', async () => {
    const res = await request(router).post('/raw').set('Content-Type', 'application/json').send('{"a":');
    assert.equal(res.status, 200);
    assert.equal(res.body.raw, '{"a":');
  });

  it('should still parse and validate when the route has a body schema', async () => {
    const ok = await request(router).post('/raw-with-schema').send({ a: 1 });
    assert.deepEqual(ok.body, { body: { a: 1 }, raw: '{"a":1}' });
    const bad = await request(router).post('/raw-with-schema').send({ b: 1 });
    assert.equal(bad.status, 422);
  });

  it('should parse the body for a handler that does not prefer the raw body', async () => {
    const app2 = new App({ port: 0 });
    app2.post('/parsed', (d) => ({ body: d.body, raw: d.rawBody?.toString('utf8') }));
    const res = await request(app2.intoRouter()).post('/parsed').send({ a: 1 });
    assert.deepEqual(res.body, { body: { a: 1 }, raw: '{"a":1}' });
  });
});

describe('when a handler prefers parameter extraction', () => {
  const app = new App({ port: 0 });
  const parameters = { query: { limit: { type: 'integer', required: true } }, headers: { 'X-N': { type: 'integer', required: true } } };
  app.get('/self/{id:int}', intoHandler((d) => ({ validated: d.validatedParams, query: d.query, path: d.pathParams }), { prefersParameterExtraction: true }), { parameters });
  app.get('/keel/{id:int}', (d) => ({ validated: d.validatedParams, query: d.query, path: d.pathParams }), { parameters });
  const router = app.intoRouter();

  it('should skip keel validation and leave validatedParams null', async () => {
    const res = await request(router).get('/self/abc?limit=many');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { validated: null, query: { limit: 'many' }, path: { id: 'abc' } });
  });

  it('should validate and store validatedParams otherwise', async () => {
    const bad = await request(router).get('/keel/abc?limit=many');
    assert.equal(bad.status, 422);
    const ok = await request(router).get('/keel/7?limit=3').set('X-N', '4');
    assert.deepEqual(ok.body.validated, { path: { id: 7 }, query: { limit: 3 }, headers: { 'X-N': 4 }, cookies: {} });
    assert.deepEqual(ok.body.path, { id: 7 });
  });
});

describe('when a handler does not want headers or cookies', () => {
  const app = new App({ port: 0 });
  const seen = (d: RequestData) => ({ headers: Object.keys(d.headers).length, cookies: d.cookies });
  app.route({ method: ['GET', 'POST'], path: '/lean', handler: intoHandler(seen, { wantsHeaders: false, wantsCookies: false }) });
  app.get('/full', seen);
  const router = app.intoRouter();

  it('should give empty headers and cookies for a request without a body', async () => {
    const res = await request(router).get('/lean').set('Cookie', 'a=1').set('X-Any', 'x');
    assert.deepEqual(res.body, { headers: 0, cookies: {} });
  });

  it('should still give them for a request with a body', async () => {
    const res = await request(router).post('/lean').set('Cookie', 'a=1').send({ x: 1 });
    assert.ok(res.body.headers > 0);
    assert.deepEqual(res.body.cookies, { a: '1' });
  });

  it('should give them by default', async () => {
    const res = await request(router).get('/full').set('Cookie', 'a=1; b=two%20words');
    assert.ok(res.body.headers > 0);
    assert.deepEqual(res.body.cookies, { a: '1', b: 'two words' });
  });
});

describe('when a handler does not want request extensions', () => {
  const app = new App({ port: 0 });
  let withExt: WithKeel | undefined;
  let withoutExt: WithKeel | undefined;
  let data: RequestData | undefined;
  app.get('/with', (d, req) => {
    withExt = req as WithKeel;
    data = d;
    return {};
  });
  app.get('/without', intoHandler((_d, req) => {
    withoutExt = req as WithKeel;
    return {};
  }, { wantsRequestExtensions: false }));
  const router = app.intoRouter();

  it('should not store the request data on req.keel', async () => {
    await request(router).get('/without').expect(200);
    assert.ok(withoutExt);
    assert.equal('keel' in withoutExt, false);
  });

  it('should store it on req.keel by default', async () => {
    await request(router).get('/with').expect(200);
    assert.equal(withExt?.keel, data);
  });
});

describe('when a handler has a static response', () => {
  const app = new App({ port: 0 });
  const ran: string[] = [];
  app.use(function recorder(_req, _res, next) {
    ran.push('middleware');
    next();
  });
  app.onRequest(() => void ran.push('on_request'));
  app.onResponse(() => void ran.push('on_response'));
  app.get('/static', intoHandler(() => {
    ran.push('handler');
    return {};
  }, { staticResponse: response('pong', { headers: { 'X-Static': '1' } }) }));
  app.get('/dynamic', () => {
    ran.push('handler');
    return 'pong';
  });
  const router = app.intoRouter();

  it('should serve it directly: no middleware, no hooks, no handler call', async () => {
    ran.length = 0;
    const res = await request(router).get('/static');
    assert.equal(res.status, 200);
    assert.equal(res.text, 'pong');
    assert.equal(res.headers['x-static'], '1');
    assert.deepEqual(ran, []);
  });

  it('should serve the same response every time', async () => {
    const a = await request(router).get('/static');
    const b = await request(router).get('/static');
    assert.equal(a.text, b.text);
  });

  it('should run middleware and hooks for an ordinary route of the same app', async () => {
    ran.length = 0;
    await request(router).get('/dynamic').expect(200);
    assert.deepEqual(ran, ['middleware', 'on_request', 'handler', 'on_response']);
  });
});

describe('when intoHandler wraps a function', () => {
  it('should report the documented flag defaults', () => {
    const h = intoHandler(() => ({}));
    assert.equal(h.prefersRawJsonBody?.(), false);
    assert.equal(h.prefersParameterExtraction?.(), false);
    assert.equal(h.wantsHeaders?.(), true);
    assert.equal(h.wantsCookies?.(), true);
    assert.equal(h.wantsRequestExtensions?.(), true);
    assert.equal(h.staticResponse?.(), null);
  });

  it('should call the function with (data, request)', async () => {
    const h = intoHandler((d, req) => ({ path: d.path, same: req === fakeReq }));
    const fakeReq = {} as KeelRequest;
    assert.deepEqual(await h.call(fakeReq, { path: '/p' } as RequestData), { path: '/p', same: true });
  });

  it('should refuse something that is not a function', () => {
    assert.throws(() => intoHandler('nope' as never), TypeError);
  });
});

describe('when a handler object implements the contract itself', () => {
  class Echo implements Handler {
    call(_req: KeelRequest, d: RequestData) {
      return response({ q: d.query }, { status: 202 });
    }
    wantsCookies() {
      return false;
    }
  }
  const app = new App({ port: 0 });
  app.get('/echo', new Echo());
  const router = app.intoRouter();

  it('should call it and honour the flags it defines', async () => {
    const res = await request(router).get('/echo?x=1');
    assert.equal(res.status, 202);
    assert.deepEqual(res.body, { q: { x: '1' } });
  });

  it('should be rejected at build time when it has no call()', () => {
    const app2 = new App();
    assert.throws(() => app2.get('/bad', {} as Handler), /handler must be a function or an object with call/);
  });
});

describe('when handlers return values', () => {
  const app = new App({ port: 0 });
  app.get('/json', () => ({ a: 1 }));
  app.get('/text', () => 'hello');
  app.get('/bytes', () => Buffer.from([1, 2, 3]));
  app.get('/nothing', () => undefined);
  app.get('/null', () => null);
  app.get('/stream', () => response(Readable.from(['a', 'b', 'c']), { headers: { 'Content-Type': 'text/plain' } }));
  app.get('/created', () => response({ id: 1 }, { status: 201, headers: { Location: '/items/1' }, cookies: [{ name: 'sid', value: 'a b', httpOnly: true, path: '/' }] }));
  app.get('/result', () => handlerResultFromResponse(new KeelResponse('made', 202, { 'X-From': 'response' })));
  app.get('/result-record', () => handlerResultFromResponse({ content: { ok: true }, status_code: 207, headers: { 'X-R': '1' } }));
  app.get('/result-defaults', () => handlerResultFromResponse({}));
  const router = app.intoRouter();

  it('should send an object as JSON', async () => {
    const res = await request(router).get('/json');
    assert.match(res.headers['content-type'] ?? '', /^application\/json/);
    assert.deepEqual(res.body, { a: 1 });
  });

  it('should send a string as UTF-8 text', async () => {
    const res = await request(router).get('/text');
    assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(res.text, 'hello');
  });

  it('should send bytes as application/octet-stream', async () => {
    const res = await request(router).get('/bytes').buffer(true).parse((r, cb) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => cb(null, Buffer.concat(chunks)));
    });
    assert.equal(res.headers['content-type'], 'application/octet-stream');
    assert.deepEqual([...(res.body as Buffer)], [1, 2, 3]);
  });

  it('should answer undefined with 204 and null with an empty 200', async () => {
    const none = await request(router).get('/nothing');
    assert.equal(none.status, 204);
    const nul = await request(router).get('/null');
    assert.equal(nul.status, 200);
    assert.equal(nul.headers['content-length'], '0');
  });

  it('should stream a Readable', async () => {
    const res = await request(router).get('/stream');
    assert.equal(res.text, 'abc');
  });

  it('should send status, headers and cookies of a Response', async () => {
    const res = await request(router).get('/created');
    assert.equal(res.status, 201);
    assert.equal(res.headers.location, '/items/1');
    assert.deepEqual(res.headers['set-cookie'], ['sid=a%20b; Path=/; HttpOnly']);
  });

  it('should unwrap handlerResultFromResponse for a Response and for a Response record', async () => {
    assert.ok(handlerResultFromResponse(response()) instanceof HandlerResult);
    const a = await request(router).get('/result');
    assert.equal(a.status, 202);
    assert.equal(a.text, 'made');
    assert.equal(a.headers['x-from'], 'response');
    const b = await request(router).get('/result-record');
    assert.equal(b.status, 207);
    assert.equal(b.headers['x-r'], '1');
    assert.deepEqual(b.body, { ok: true });
    const c = await request(router).get('/result-defaults');
    assert.equal(c.status, 200);
  });

  it('should refuse a Response status outside 100-599', () => {
    assert.throws(() => response(null, { status: 600 }), TypeError);
    assert.throws(() => new KeelResponse(null, 99), TypeError);
  });
});
