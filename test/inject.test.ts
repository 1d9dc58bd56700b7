/**
 * `app.inject()`: requests served in-process through the full pipeline (hooks, validation, limits,
 * problem answers), with no listening server; the App is made ready first, as listen() does.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { App, createApp } from '../lib/app/app.js';
import { response } from '../lib/app/handler.js';
import type { InjectOptions, InjectResponse } from '../lib/index.js';

const note = {
  type: 'object',
  required: ['text'],
  additionalProperties: false,
  properties: { text: { type: 'string', minLength: 1 }, pinned: { type: 'boolean' } },
} as const;

function notesApp(): App {
  return createApp({ port: 0, max_body_size: 1024 }, (app) => {
    app.onRequest((ctx) => {
      if (ctx.req.headers['x-block'] === 'yes') return response({ blocked: true }, { status: 403 });
      return undefined;
    });
    app.onResponse((ctx) => {
      if (ctx.response) ctx.response.headers['X-Seen-By'] = 'on_response';
      return undefined;
    });
    app.get('/notes', (d) => ({ query: d.query }), {
      parameters: { query: { limit: { type: 'integer', minimum: 1, required: true }, tag: { type: 'string', optional: true } } },
    });
    app.post('/notes', (d) => response({ created: d.body }, { status: 201 }), { body: note });
    app.post('/echo', (d) => ({ size: d.rawBody?.length ?? 0, type: d.headers['content-type'] ?? null, text: d.rawBody?.toString('utf8') ?? '' }));
    app.get('/whoami', (d) => ({ token: d.headers['x-token'] ?? null, session: d.cookies.session ?? null }));
  });
}

/** The parsed problem+json answer, after checking its media type and status member. */
function problem(res: InjectResponse, status: number): Record<string, unknown> {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(res.headers['content-type'], 'application/problem+json');
  const body = res.json<Record<string, unknown>>();
  assert.equal(body.status, status);
  return body;
}

describe('when a request is injected into an App that never listened', () => {
  it('should make the App ready and answer a GET with its query validated and coerced', async () => {
    const app = notesApp();
    const res = await app.inject({ method: 'GET', url: '/notes', query: { limit: '5', tag: 'work' } });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(res.json(), { query: { limit: 5, tag: 'work' } });
  });

  it('should accept a URL string and keep the query in it', async () => {
    const res = await notesApp().inject('/notes?limit=2');
    assert.deepEqual(res.json(), { query: { limit: 2 } });
  });

  it('should answer 422 problem+json for a query that fails validation', async () => {
    const body = problem(await notesApp().inject({ url: '/notes', query: { limit: '0' } }), 422);
    assert.equal(body.title, 'Request Validation Failed');
  });
});

describe('when a JSON body is injected into a validated route', () => {
  it('should answer 201 with the body for a valid payload object (sent as JSON)', async () => {
    const res = await notesApp().inject({ method: 'POST', url: '/notes', payload: { text: 'hi', pinned: true } });
    assert.equal(res.statusCode, 201);
    assert.deepEqual(res.json(), { created: { text: 'hi', pinned: true } });
  });

  it('should answer 422 problem+json listing each issue for an invalid one', async () => {
    const res = await notesApp().inject({ method: 'POST', url: '/notes', payload: { text: '', extra: 1 } });
    const body = problem(res, 422);
    const errors = body.errors as { loc: unknown[] }[];
    assert.ok(Array.isArray(errors) && errors.length >= 2, res.body);
    assert.ok(errors.every((e) => e.loc[0] === 'body'), res.body);
  });
});

describe('when the payload is an object, a string, a Buffer or a stream', () => {
  const cases: [string, InjectOptions, { size: number; type: string | null; text: string }][] = [
    ['object', { payload: { a: 1 } }, { size: 7, type: 'application/json', text: '{"a":1}' }],
    ['string', { payload: 'plain words', headers: { 'content-type': 'text/plain' } }, { size: 11, type: 'text/plain', text: 'plain words' }],
    ['Buffer', { payload: Buffer.from([0x68, 0x69]), headers: { 'content-type': 'application/octet-stream' } }, { size: 2, type: 'application/octet-stream', text: 'hi' }],
    ['stream', { payload: Readable.from([Buffer.from('str'), Buffer.from('eam')]), headers: { 'content-type': 'text/plain' } }, { size: 6, type: 'text/plain', text: 'stream' }],
  ];
  for (const [kind, options, expected] of cases) {
    it(`should deliver a ${kind} payload byte for byte`, async () => {
      const res = await notesApp().inject({ method: 'POST', url: '/echo', ...options });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json(), expected);
    });
  }
});

describe('when headers and cookies are injected', () => {
  it('should hand both to the handler', async () => {
    const res = await notesApp().inject({ url: '/whoami', headers: { 'x-token': 't-1' }, cookies: { session: 's-42' } });
    assert.deepEqual(res.json(), { token: 't-1', session: 's-42' });
  });
});

describe('when the App has hooks', () => {
  it('should run on_response on an injected request', async () => {
    const res = await notesApp().inject('/notes?limit=1');
    assert.equal(res.headers['x-seen-by'], 'on_response');
  });

  it('should let an on_request hook short-circuit the answer', async () => {
    const res = await notesApp().inject({ url: '/notes?limit=1', headers: { 'x-block': 'yes' } });
    assert.equal(res.statusCode, 403);
    assert.deepEqual(res.json(), { blocked: true });
  });
});

describe('when no route matches', () => {
  it('should answer 404 problem+json', async () => {
    const body = problem(await notesApp().inject({ method: 'GET', url: '/nowhere' }), 404);
    assert.equal(body.title, 'Resource Not Found');
    assert.equal(body.detail, 'No route matches GET /nowhere');
  });
});

describe('when the chained form is used', () => {
  it('should start the request at end() with the method, URL, query and payload set by the chain', async () => {
    const app = notesApp();
    const got = await app.inject().get('/notes').query({ limit: '3' }).end();
    assert.deepEqual(got.json(), { query: { limit: 3 } });
    const posted = await app.inject().post('/notes').payload({ text: 'chained' });
    assert.equal(posted.statusCode, 201);
  });
});

describe('when the App compresses its answers', () => {
  const rows = Array.from({ length: 100 }, (_, i) => ({ id: i, name: `row ${i}` }));
  const compressing = () => createApp({ port: 0, compression: { min_size: 64 } }, (app) => app.get('/rows', () => ({ rows })));

  // light-my-request's end(chunk) writes its chunk through this.write, which compression has wrapped:
  // compression passes such calls into node's own methods straight through, or the body is swallowed.
  it('should hand back the gzip bytes the client asked for', async () => {
    const res = await compressing().inject({ url: '/rows', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(res.headers['content-encoding'], 'gzip');
    assert.deepEqual(JSON.parse(gunzipSync(res.rawPayload).toString('utf8')), { rows });
  });

  it('should leave later injections into an App without compression their bodies', async () => {
    await compressing().inject({ url: '/rows', headers: { 'accept-encoding': 'gzip' } });
    const res = await notesApp().inject('/notes?limit=4');
    assert.equal(res.headers['content-encoding'], undefined);
    assert.deepEqual(res.json(), { query: { limit: 4 } });
  });
});

describe('when a hostile client sends a body over max_body_size', () => {
  it('should refuse a declared oversize body with 413 problem+json, as over a socket', async () => {
    const res = await notesApp().inject({ method: 'POST', url: '/echo', payload: Buffer.alloc(64 * 1024, 0x61) });
    const body = problem(res, 413);
    assert.match(String(body.detail), /exceeds the limit of 1024 bytes/);
  });

  it('should refuse an oversize body of unknown length (a stream) with 413', async () => {
    const big = Readable.from((function* chunks() {
      for (let i = 0; i < 64; i++) yield Buffer.alloc(1024, 0x62);
    })());
    const res = await notesApp().inject({ method: 'POST', url: '/echo', payload: big, headers: { 'content-type': 'text/plain' } });
    problem(res, 413);
  });
});

describe('when the App uses a protocol module and was never made ready', () => {
  it('should load it before the first request, as listen() does (intoRouter() alone would refuse)', async () => {
    const app = createApp({ port: 0, openapi: { enabled: true, title: 'inject', version: '1.0.0' } }, (a) => a.get('/ping', () => ({ pong: true })));
    assert.throws(() => app.intoRouter(), /await app.ready\(\) before app.intoRouter\(\)/);
    const res = await app.inject('/openapi.json');
    assert.equal(res.statusCode, 200, res.body);
    const doc = res.json<{ openapi: string; paths: Record<string, unknown> }>();
    assert.match(doc.openapi, /^3\.1/);
    assert.ok('/ping' in doc.paths);
  });
});

describe('when the App cannot become ready', () => {
  it('should reject the injection with the AppError instead of answering', async () => {
    const app = createApp({ port: 0 }, (a) => a.job('nightly', () => undefined));
    await assert.rejects(app.inject('/anything'), /background_tasks\.enabled is false/);
  });
});
