/**
 * RFC 9457 problem details: the builder, the mapping of thrown values, and what handlers' errors
 * look like on the wire (through a real App).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import request from 'supertest';
import { App } from '../lib/app/app.js';
import { HttpError, GraphQlError, ConfigError } from '../lib/http/errors.js';
import { handlerError } from '../lib/app/handler.js';
import { problem, problemFor, toProblem, sendProblem, PROBLEM_CONTENT_TYPE } from '../lib/http/problem.js';

const SECRET = 'connection string postgres://admin:hunter2@db.internal/prod';

describe('when a problem object is built', () => {
  it('should default type to about:blank and title to the reason phrase', () => {
    assert.deepEqual(problem(404), { type: 'about:blank', title: 'Not Found', status: 404 });
  });

  it('should include detail and instance only when given', () => {
    assert.deepEqual(problem(409, 'Version mismatch', { instance: '/orders/7' }), {
      type: 'about:blank', title: 'Conflict', status: 409, detail: 'Version mismatch', instance: '/orders/7',
    });
  });

  it('should flatten extensions beside the standard members', () => {
    const p = problem(429, 'slow', { extensions: { retry_after: 3, limits: { burst: 2 } } });
    assert.equal(p.retry_after, 3);
    assert.deepEqual(p.limits, { burst: 2 });
    assert.equal('extensions' in p, false);
  });

  it('should never let an extension overwrite a standard member', () => {
    const p = problem(400, 'real detail', {
      type: 'https://example.com/probs/x', title: 'Real', instance: '/i',
      extensions: { type: 'evil', title: 'evil', status: 200, detail: 'evil', instance: 'evil', ok: true },
    });
    assert.deepEqual(p, { type: 'https://example.com/probs/x', title: 'Real', status: 400, detail: 'real detail', instance: '/i', ok: true });
  });

  it('should not let detail or instance extensions appear when the members are absent', () => {
    const p = problem(400, undefined, { extensions: { detail: 'evil', instance: 'evil' } });
    assert.equal('detail' in p, false);
    assert.equal('instance' in p, false);
  });

  it('should build problems for keel codes', () => {
    assert.deepEqual(problemFor('KEEL_NOT_FOUND', 'No route'), {
      type: 'https://keel.dev/errors/not-found', title: 'Resource Not Found', status: 404, detail: 'No route',
    });
  });
});

describe('when a thrown value is mapped to a problem', () => {
  it('should keep an HttpError status, detail, extensions and headers', () => {
    const { problem: p, headers } = toProblem(new HttpError(429, 'slow', { extensions: { retry_after: 1 }, headers: { 'Retry-After': '1' } }));
    assert.equal(p.status, 429);
    assert.equal(p.detail, 'slow');
    assert.equal(p.retry_after, 1);
    assert.deepEqual(headers, { 'Retry-After': '1' });
  });

  it('should keep the instance an HttpError carries (RFC 9457 §3.1.5)', () => {
    const { problem: p } = toProblem(new HttpError(404, 'Item with ID 999 was not found', { instance: '/items/999' }));
    assert.deepEqual(p, { type: 'https://keel.dev/errors/not-found', title: 'Resource Not Found', status: 404, detail: 'Item with ID 999 was not found', instance: '/items/999' });
  });

  it('should leave instance out when the HttpError has none', () => {
    assert.equal('instance' in toProblem(new HttpError(404, 'gone')).problem, false);
  });

  it('should turn an unexpected error into a bare 500', () => {
    const { problem: p } = toProblem(new Error(SECRET));
    assert.deepEqual(p, { type: 'https://keel.dev/errors/internal-server-error', title: 'Internal Server Error', status: 500, detail: 'Internal server error' });
  });

  it('should not repeat the message of a 5xx error-like object', () => {
    const { problem: p } = toProblem(Object.assign(new Error(SECRET), { status: 503, expose: true }));
    assert.equal(p.status, 500);
    assert.equal(JSON.stringify(p).includes('hunter2'), false);
  });

  it('should keep a body-parser style 4xx status but only an exposed message', () => {
    assert.deepEqual(toProblem(Object.assign(new Error('too big'), { status: 413, expose: true })).problem.detail, 'too big');
    assert.equal(toProblem(Object.assign(new Error(SECRET), { statusCode: 400 })).problem.detail, undefined);
  });

  it('should expose a 4xx GraphQlError message and hide a 5xx one', () => {
    assert.equal(toProblem(new GraphQlError('ParseError', 'Syntax Error')).problem.detail, 'Syntax Error');
    const internal = toProblem(new GraphQlError('InternalError', SECRET)).problem;
    assert.equal(internal.status, 500);
    assert.equal(internal.detail, undefined);
  });

  it('should render a ConfigError reaching a request as a bare 500', () => {
    const p = toProblem(new ConfigError(SECRET, { record: 'R', path: 'R.k', key: 'k' })).problem;
    assert.equal(p.status, 500);
    assert.equal(p.detail, 'Internal server error');
  });

  for (const thrown of ['a string', 42, null, undefined, { message: SECRET }]) {
    it(`should map a thrown ${JSON.stringify(thrown) ?? 'undefined'} to a 500`, () => {
      assert.equal(toProblem(thrown).problem.status, 500);
    });
  }
});

describe('when sendProblem writes to a plain node:http server', () => {
  const server = http.createServer((req, res) => {
    if (req.url === '/problem') sendProblem(res, problem(409, 'conflict'), { 'X-Extra': '1' });
    else if (req.url === '/error') sendProblem(res, new HttpError(401, 'no token', { headers: { 'WWW-Authenticate': 'Bearer' } }));
    else if (req.url === '/late') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('partial');
      sendProblem(res, new Error('after headers'));
    } else sendProblem(res, new Error(SECRET));
  });

  it('should send application/problem+json with the real status and extra headers', async () => {
    const res = await request(server).get('/problem');
    assert.equal(res.status, 409);
    assert.equal(res.headers['content-type'], PROBLEM_CONTENT_TYPE);
    assert.equal(res.headers['x-extra'], '1');
    assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.text));
    assert.deepEqual(JSON.parse(res.text), { type: 'about:blank', title: 'Conflict', status: 409, detail: 'conflict' });
  });

  it("should send an HttpError's headers", async () => {
    const res = await request(server).get('/error');
    assert.equal(res.status, 401);
    assert.equal(res.headers['www-authenticate'], 'Bearer');
  });

  it('should send no body to HEAD', async () => {
    const res = await request(server).head('/problem');
    assert.equal(res.status, 409);
    assert.equal(res.text, undefined);
  });

  it('should end a response whose headers were already sent', async () => {
    const res = await request(server).get('/late');
    assert.equal(res.status, 200);
    assert.equal(res.text, 'partial');
  });
});

describe('when a keel handler fails', () => {
  const app = new App({ port: 0 });
  app.get('/teapot', () => handlerError(418, 'x'));
  app.get('/thrown', () => {
    throw new HttpError(409, 'Order 7 was changed by someone else', { extensions: { current_version: 3 } });
  });
  app.get('/returned-404', () => handlerError(404, 'No user 7'));
  app.get('/crash', () => {
    throw new Error(SECRET);
  });
  app.get('/async-crash', async () => {
    await new Promise((r) => setImmediate(r));
    throw new TypeError(SECRET);
  });
  app.get('/reject-string', () => Promise.reject('raw string with hunter2'));
  const router = app.intoRouter();

  it('should turn handlerError(418, "x") into a 418 problem with that message', async () => {
    const res = await request(router).get('/teapot');
    assert.equal(res.status, 418);
    assert.equal(res.headers['content-type'], PROBLEM_CONTENT_TYPE);
    assert.deepEqual(JSON.parse(res.text), { type: 'about:blank', title: "I'm a Teapot", status: 418, detail: 'x' });
  });

  it('should turn a thrown HttpError into a problem with its status and extensions', async () => {
    const res = await request(router).get('/thrown');
    assert.equal(res.status, 409);
    const body = JSON.parse(res.text);
    assert.equal(body.status, 409);
    assert.equal(body.detail, 'Order 7 was changed by someone else');
    assert.equal(body.current_version, 3);
  });

  it('should turn a returned 404 handler error into a not-found problem', async () => {
    const res = await request(router).get('/returned-404');
    assert.equal(res.status, 404);
    assert.equal(JSON.parse(res.text).type, 'https://keel.dev/errors/not-found');
  });

  for (const path of ['/crash', '/async-crash', '/reject-string']) {
    it(`should answer an unexpected failure (${path}) with a 500 that leaks nothing`, async () => {
      const res = await request(router).get(path);
      assert.equal(res.status, 500);
      assert.equal(res.headers['content-type'], PROBLEM_CONTENT_TYPE);
      assert.deepEqual(JSON.parse(res.text), { type: 'https://keel.dev/errors/internal-server-error', title: 'Internal Server Error', status: 500, detail: 'Internal server error' });
      assert.equal(res.text.includes('hunter2'), false);
      assert.equal(res.text.includes('    at '), false, 'no stack trace');
      assert.equal(/Error:/.test(res.text), false);
    });
  }
});

// Issue 13 item 8: a thrown `{status: 200, title}` was sent as a 200. An error answer is 4xx or 5xx;
// anything else a handler throws is a bug and becomes a 500 without internals.
describe('when a handler throws a value whose status is not an error status', () => {
  const thrown: [string, unknown][] = [
    ['{status: 200}', { status: 200, title: 'OK', detail: 'hunter2' }],
    ['{status: 302}', { status: 302, title: 'Found', type: 'about:blank', location: 'https://evil.test' }],
    ['{statusCode: 99}', { statusCode: 99, message: 'hunter2', expose: true }],
    ["{status: '404'}", { status: '404', title: 'Not Found' }],
    ['{status: 404.5}', { status: 404.5, title: 'Not Found' }],
    ['{status: 600}', { status: 600, title: 'Beyond' }],
    ['new HttpError(200)', new HttpError(200, 'hunter2')],
    ['a string', 'hunter2'],
    ['null', null],
    ['undefined', undefined],
  ];
  const app = new App({ port: 0 });
  thrown.forEach(([, value], i) => {
    app.get(`/sync/${i}`, () => {
      throw value;
    });
    app.get(`/async/${i}`, async () => {
      await new Promise((r) => setImmediate(r));
      throw value;
    });
  });
  const router = app.intoRouter();

  thrown.forEach(([label], i) => {
    for (const mode of ['sync', 'async']) {
      it(`should answer a ${mode} throw of ${label} with a bare 500 problem`, async () => {
        const res = await request(router).get(`/${mode}/${i}`);
        assert.equal(res.status, 500);
        assert.equal(res.headers['content-type'], PROBLEM_CONTENT_TYPE);
        assert.deepEqual(JSON.parse(res.text), { type: 'https://keel.dev/errors/internal-server-error', title: 'Internal Server Error', status: 500, detail: 'Internal server error' });
      });
    }
  });

  it('should still send a thrown problem object with a 4xx status as it is', async () => {
    const own = new App({ port: 0 });
    own.get('/gone', () => {
      throw { type: 'about:blank', title: 'Gone', status: 410, detail: 'Order 7 was archived' };
    });
    const res = await request(own.intoRouter()).get('/gone');
    assert.equal(res.status, 410);
    assert.equal(JSON.parse(res.text).detail, 'Order 7 was archived');
  });

  it('should map such values to 500 in toProblem too', () => {
    assert.equal(toProblem({ status: 200, title: 'OK' }).problem.status, 500);
    assert.equal(toProblem(new HttpError(302)).problem.status, 500);
    assert.equal(toProblem({ status: 404 }).problem.status, 404);
  });
});
