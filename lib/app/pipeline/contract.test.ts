/**
 * Response contracts (issue 45): a route's `response` / `responses` schema is enforced on the way out.
 * Undeclared members never leave; a wrong type or a missing required member is a 500 problem, one
 * error line and a count; `response_validation` chooses strict / strip / off per App and per route.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createApp, response, ResponseContractError, type App, type InjectResponse } from '../../index.js';
import { AppError, ConfigError } from '../../http/errors.js';
import { sample } from '../../../test/helpers/exposition.js';

type Json = Record<string, any>;
const note = {
  type: 'object', additionalProperties: false, required: ['id', 'title'],
  properties: { id: { type: 'integer' }, title: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
} as const;

/** An App logging at `level` (error by default: what a production level shows) into `lines`. */
function appWithLog(config: Json = {}, level = 'error'): { app: App; lines: Json[] } {
  const lines: Json[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, done) { for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Json); done(); } });
  return { app: createApp({ port: 0, host: '127.0.0.1', ...config }, undefined, { logger: pino({ level }, sink) }), lines };
}

/** The violation inject() rejects with, and the 500 it carries. */
async function violation(app: App, url: string, method = 'GET'): Promise<[ResponseContractError, InjectResponse]> {
  try {
    await app.inject({ method: method as 'GET', url });
  } catch (err) {
    assert.ok(err instanceof ResponseContractError, `expected a ResponseContractError, got ${String(err)}`);
    return [err, err.response];
  }
  assert.fail('inject() resolved: the violation was not surfaced');
}

describe('when a route declares a response schema (response_validation: strict, the default)', () => {
  it('should drop a member the schema forbids, from a variable, and answer 200', async () => {
    const { app, lines } = appWithLog();
    const row = { id: 1, title: 'hello', internalNote: 'do not leak' };
    app.get('/notes/1', () => row, { response: note });
    const res = await app.inject('/notes/1');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { id: 1, title: 'hello' });
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(row.internalNote, 'do not leak', 'the handler\'s object is not changed');
    assert.deepEqual(lines, []);
  });

  it('should drop undeclared members of nested objects and arrays, and write Dates as the schema says', async () => {
    const { app } = appWithLog();
    const list = { type: 'object', properties: { items: { type: 'array', items: note } } } as const;
    app.get('/list', () => ({ items: [{ id: 1, title: 'a', secret: 's', at: new Date(0) }], total: 1 }) as never, { response: list });
    const res = await app.inject('/list');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { items: [{ id: 1, title: 'a', at: '1970-01-01T00:00:00.000Z' }] });
  });

  it('should drop undeclared members when the schema says nothing of additionalProperties (Fastify), keep them when it allows them, and write a free-form object whole', async () => {
    const { app } = appWithLog();
    const props = { id: { type: 'integer' } } as const;
    app.get('/silent', () => ({ id: 1, extra: 2 }) as never, { response: { type: 'object', properties: props } });
    app.get('/open', () => ({ id: 1, extra: 2 }), { response: { type: 'object', properties: props, additionalProperties: true } });
    app.get('/free', () => ({ any: { thing: [1] } }), { response: { type: 'object' } });
    assert.deepEqual((await app.inject('/silent')).json(), { id: 1 });
    assert.deepEqual((await app.inject('/open')).json(), { id: 1, extra: 2 });
    assert.deepEqual((await app.inject('/free')).json(), { any: { thing: [1] } });
  });

  for (const [what, value, path] of [
    ['a wrong type', { id: 'x', title: 'hello' }, '/id'],
    ['a missing required member', { id: 1 }, '/'],
  ] as const) {
    it(`should answer ${what} with a bare 500 problem, one error line naming route, status and schema, and reject inject()`, async () => {
      const { app, lines } = appWithLog();
      app.get('/notes/1', () => value as never, { response: note });
      const [err, res] = await violation(app, '/notes/1');
      assert.equal(res.statusCode, 500);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      const body = res.json();
      assert.equal(body.status, 500);
      assert.doesNotMatch(res.body, /hello|must|schema|"id"|missing|integer/, 'nothing of the answer or the schema leaks');
      assert.equal(lines.length, 1);
      assert.equal(lines[0]!.level, 50);
      assert.equal(lines[0]!.route, 'GET /notes/1');
      assert.equal(lines[0]!.status, 200);
      assert.equal(lines[0]!.schema, 'response');
      assert.match(lines[0]!.msg, /response does not match its response schema/);
      assert.equal(lines[0]!.errors[0].path, path);
      assert.equal(err.status, 200);
      assert.equal(err.route, 'GET /notes/1');
      assert.match(err.message, /GET \/notes\/1 answered 200 with a body that breaks its response schema/);
    });
  }

  it('should list every wrong member in the error line, not only the first (the check stops at the first; a refused answer is checked again)', async () => {
    const { app, lines } = appWithLog();
    app.get('/notes/1', () => ({ id: 'x' }) as never, { response: note });
    const [, res] = await violation(app, '/notes/1');
    assert.equal(res.statusCode, 500);
    assert.deepEqual(lines[0]!.errors.map((e: { path: string }) => e.path).sort(), ['/', '/id']);
  });

  it('should refuse the same over a real socket (async handler, Response object)', async () => {
    const { app, lines } = appWithLog();
    app.get('/notes/1', async () => response({ id: 1.5, title: 't' } as never), { response: note });
    const handle = await app.listen();
    try {
      const res = await fetch(`${handle.url}/notes/1`);
      assert.equal(res.status, 500);
      assert.equal(((await res.json()) as Json).status, 500);
    } finally {
      await handle.close();
    }
    assert.equal(lines.filter((l) => l.level === 50).length, 1);
  });

  it('should check each status against its responses entry and leave undeclared statuses alone', async () => {
    const { app } = appWithLog();
    const gone = { type: 'object', required: ['reason'], properties: { reason: { type: 'string' } } } as const;
    let reason: unknown = 'deleted';
    app.get('/n', () => response({ reason } as never, { status: 410 }), { responses: { 200: note, 410: gone } });
    app.get('/teapot', () => response({ short: 'and stout' } as never, { status: 418 }) as never, { responses: { 200: note } });
    const ok = await app.inject('/n');
    assert.equal(ok.statusCode, 410);
    assert.deepEqual(ok.json(), { reason: 'deleted' });
    reason = 7;
    const [err] = await violation(app, '/n');
    assert.equal(err.schema, 'responses.410');
    assert.deepEqual((await app.inject('/teapot')).json(), { short: 'and stout' });
  });

  it('should check the answer on_response hooks leave', async () => {
    const { app } = appWithLog();
    app.onResponse((ctx) => {
      if (ctx.response) ctx.response.content = { id: 'replaced', title: 't' };
      return undefined;
    });
    app.get('/h', () => ({ id: 1, title: 't' }), { response: note });
    const [, res] = await violation(app, '/h');
    assert.equal(res.statusCode, 500);
  });

  it('should leave text, bytes and empty answers alone', async () => {
    const { app } = appWithLog();
    app.get('/text', () => 'plain' as never, { response: note });
    app.get('/none', () => undefined as never, { response: note });
    assert.equal((await app.inject('/text')).body, 'plain');
    assert.equal((await app.inject('/none')).statusCode, 204);
  });

  it('should count each refusal in keel_response_contract_violations_total by route pattern', async () => {
    const { app } = appWithLog({ metrics: {} });
    app.get('/users/{id:int}', () => ({ id: 'x', title: 't' }) as never, { response: note });
    await violation(app, '/users/1');
    await violation(app, '/users/2');
    const text = (await app.inject('/metrics')).body;
    assert.equal(sample(text, 'keel_response_contract_violations_total', { route: '/users/{id:int}' }), 2);
  });
});

describe('when an App with a response schema answers a problem', () => {
  it('should write problem bodies with the compiled serialiser, byte for byte what JSON.stringify wrote', async () => {
    const { app } = appWithLog();
    app.get('/n', () => ({ id: 1, title: 't' }), { response: note, parameters: { query: { q: { type: 'integer' } } } });
    const res = await app.inject('/n?q=x');
    assert.equal(res.statusCode, 422);
    assert.equal(res.body, JSON.stringify(res.json()), 'members in keel\'s order, extensions included');
    assert.match(res.body, /^\{"type":"[^"]+","title":"Request Validation Failed","status":422,"detail":"1 validation error in request","errors":\[\{"type":"int_parsing","loc":\["query","q"\]/);
  });
});

describe('when response_validation is strip or off', () => {
  it('should serialise from the schema only under strip (no refusal), as Fastify does', async () => {
    const { app, lines } = appWithLog({ response_validation: 'strip' });
    app.get('/n', () => ({ id: '7', title: 'x', secret: 1 }) as never, { response: note });
    const res = await app.inject('/n');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { id: 7, title: 'x' });
    assert.deepEqual(lines, []);
  });

  it('should write the value as it is under off, and a route may choose for itself', async () => {
    const { app } = appWithLog({ response_validation: 'off' });
    app.get('/off', () => ({ id: 'x', secret: 1 }) as never, { response: note });
    app.get('/strict', () => ({ id: 'x', title: 't' }) as never, { response: note, response_validation: 'strict' });
    assert.deepEqual((await app.inject('/off')).json(), { id: 'x', secret: 1 });
    assert.equal((await violation(app, '/strict'))[1].statusCode, 500);
  });

  it('should refuse an unknown mode at start-up, naming the key and the value', () => {
    assert.throws(() => createApp({ response_validation: 'strcit' } as never), (e: unknown) => e instanceof ConfigError && /response_validation/.test(e.message) && /strcit/.test(e.message));
    assert.throws(() => createApp().get('/x', () => null, { response_validation: 'lenient' } as never), (e: unknown) => e instanceof AppError && /response_validation/.test(e.message) && /lenient/.test(e.message));
  });
});

describe('when a problem carries members of other types than the problem schema declares', () => {
  it('should write them as JSON.stringify does, never coerced', async () => {
    const { HttpError } = await import('../../http/errors.js');
    const { app } = appWithLog();
    app.get('/n', () => ({ id: 1, title: 't' }), { response: note });
    app.get('/odd', () => { throw new HttpError(409, 'conflict', { extensions: { errors: 'not a list', retry: [1, null] } }); });
    await app.inject('/n');
    const res = await app.inject('/odd');
    assert.equal(res.statusCode, 409);
    assert.equal(res.json().errors, 'not a list');
    assert.deepEqual(res.json().retry, [1, null]);
  });
});

describe('when fast-json-stringify cannot take a response schema', () => {
  // A `$ref` with an escaped JSON Pointer (RFC 6901 `~1`): Ajv resolves it, fast-json-stringify 7 does not.
  const escaped = {
    type: 'object', additionalProperties: false, required: ['a'],
    properties: { a: { $ref: '#/definitions/a~1b' } }, definitions: { 'a/b': { type: 'string' } },
  } as const;

  it('should still drop forbidden members (JSON.stringify of the value, Ajv removing them) and refuse a wrong type', async () => {
    const { compileResponseContract } = await import('../../http/serializer.js');
    assert.equal(compileResponseContract(escaped).compiled, false, 'the fallback is what this test exercises');
    const { app } = appWithLog();
    let a: unknown = 'x';
    app.get('/f', () => ({ a, secret: 1 }) as never, { response: escaped as never });
    const res = await app.inject('/f');
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { a: 'x' });
    a = 5;
    assert.equal((await violation(app, '/f'))[1].statusCode, 500);
  });
});

describe('when a test injects with the chained or callback form', () => {
  it('should surface the violation from end(), await and end(callback) alike', async () => {
    const { app } = appWithLog();
    app.get('/w', () => ({ id: 'x', title: 't' }) as never, { response: note });
    await assert.rejects(app.inject().get('/w').end(), ResponseContractError);
    await assert.rejects(async () => { await app.inject().get('/w'); }, ResponseContractError);
    const viaCallback = await new Promise<unknown>((resolve) => app.inject().get('/w').end((err) => resolve(err)));
    assert.ok(viaCallback instanceof ResponseContractError);
    assert.equal((await app.inject().get('/n-a').end()).statusCode, 404, 'other answers resolve as before');
  });
});
