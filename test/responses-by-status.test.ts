/**
 * Responses by status (issue 29 item 1): a route's `responses: { 201: schema, 204: null, 404: null }`
 * is checked when the route is registered, enforces the schema of each status on the way out (a
 * mismatch is a 500: lib/app/pipeline/contract.test.ts), and lists each status in the OpenAPI
 * document (201 as JSON, 204 without content, errors as problem+json); a route without it keeps
 * today's document. The compile-time side is test/types/responses.types.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { Validator } from '@seriousme/openapi-schema-validator';
import { pino } from 'pino';
import { createApp, handlerError, response, type App } from '../lib/index.js';
import { AppError } from '../lib/http/errors.js';

type Json = Record<string, any>;
const note = { type: 'object', required: ['id', 'title'], properties: { id: { type: 'integer' }, title: { type: 'string' } } } as const;

/** An App whose warnings are collected (pino at `warn`, JSON lines). */
function appWithLog(): { app: App; warnings: Json[] } {
  const warnings: Json[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, done) { for (const line of chunk.toString().split('\n')) if (line) warnings.push(JSON.parse(line) as Json); done(); } });
  const app = createApp({ openapi: { enabled: true, title: 'notes', version: '1.0.0' } }, undefined, { logger: pino({ level: 'warn' }, sink) });
  return { app, warnings };
}

function registrationError(register: (app: App) => void): AppError {
  const app = createApp();
  try {
    register(app);
  } catch (err) {
    assert.ok(err instanceof AppError, `expected an AppError, got ${String(err)}`);
    return err;
  }
  assert.fail('registering the route threw nothing');
}

describe('when a route declares responses by status', () => {
  it('should refuse a key that is not a status code, naming it', () => {
    const err = registrationError((app) => app.get('/r', () => null, { responses: { 2000: note } } as never));
    assert.match(err.message, /responses: "2000" is not an HTTP status code/);
  });

  it('should refuse the 200 schema given twice (response and responses[200])', () => {
    const err = registrationError((app) => app.get('/r', () => null, { response: note, responses: { 200: note } } as never));
    assert.match(err.message, /the 200 schema is given twice/);
  });

  it('should check each status schema like any route schema, naming responses.<status>', () => {
    const err = registrationError((app) => app.get('/r', () => null, { responses: { 201: { type: 'object', required: 'id' } } } as never));
    assert.match(err.message, /^Route GET \/r: the responses\.201 schema is invalid/);
  });

  it('should answer each declared status, refusing (500) a body that does not match its schema (lib/app/pipeline/contract.test.ts)', async () => {
    const { app, warnings } = appWithLog();
    let id: unknown = 1;
    app.post('/notes', () => response({ id, title: 'x' } as never, { status: 201 }), { responses: { 201: note } });
    app.delete('/notes/{id:int}', (d) => (d.pathParams.id === 1 ? undefined : handlerError(404, 'no such note')), { responses: { 204: null, 404: null } });
    app.get('/loose', () => response({ id: 1 } as never, { status: 202 }) as never, { responses: { 200: note } });
    const created = await app.inject({ method: 'POST', url: '/notes' });
    assert.equal(created.statusCode, 201);
    assert.equal(warnings.length, 0, 'a matching 201 body is not reported');
    id = 'x';
    await assert.rejects(app.inject({ method: 'POST', url: '/notes' }), (e: Json) => e.name === 'ResponseContractError' && e.response.statusCode === 500, 'a mismatch is refused');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!.msg, /response does not match its response schema \(responses\.201\)/);
    assert.equal(warnings[0]!.level, 50);
    assert.equal(warnings[0]!.status, 201);
    assert.equal((await app.inject({ method: 'DELETE', url: '/notes/1' })).statusCode, 204);
    const missing = await app.inject({ method: 'DELETE', url: '/notes/2' });
    assert.equal(missing.statusCode, 404);
    assert.match(String(missing.headers['content-type']), /application\/problem\+json/);
    assert.equal(warnings.length, 1, '204 and a problem answer nothing to check');
    assert.equal((await app.inject('/loose')).statusCode, 202);
    assert.equal(warnings.length, 2);
    assert.equal(warnings[1]!.msg, 'handler answered a status its responses do not list');
    assert.equal(warnings[1]!.status, 202);
  });

  it('should list each declared status in a valid OpenAPI document, and keep today\'s output elsewhere', async () => {
    const { app } = appWithLog();
    app.post('/notes', () => response({ id: 1, title: 'x' }, { status: 201 }), { responses: { 201: note, 409: { type: 'object', properties: { detail: { type: 'string' } } } } });
    app.get('/notes/{id:int}', () => ({ id: 1, title: 'x' }), { response: note, responses: { 404: null } });
    app.delete('/notes/{id:int}', () => undefined, { responses: { 204: null } });
    app.get('/plain', () => ({ id: 1, title: 'x' }), { response: note });
    app.get('/bare', () => null);
    const doc = (await app.inject('/openapi.json')).json<Json>();
    const result = await new Validator().validate(doc as never);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    const post = doc.paths['/notes'].post.responses;
    assert.deepEqual(Object.keys(post).sort(), ['201', '409']);
    assert.deepEqual(post['201'], { description: 'Created', content: { 'application/json': { schema: note } } });
    assert.deepEqual(Object.keys(post['409'].content), ['application/problem+json']);
    const get = doc.paths['/notes/{id}'].get.responses;
    assert.deepEqual(get['200'].content['application/json'].schema, note, '`response` is the 200 beside `responses`');
    assert.deepEqual(get['404'], { description: 'Not Found', content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetails' } } } });
    assert.deepEqual(doc.paths['/notes/{id}'].delete.responses['204'], { description: 'No Content' });
    assert.equal(doc.paths['/notes/{id}'].delete.responses['200'], undefined);
    assert.deepEqual(doc.paths['/plain'].get.responses, { '200': { description: 'Successful response', content: { 'application/json': { schema: note } } } });
    assert.deepEqual(doc.paths['/bare'].get.responses, { '200': { description: 'Successful response' } });
  });
});
