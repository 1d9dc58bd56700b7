/**
 * Type tests (issue 29 items 1 and 2), a file that must compile: `responses` by status type what a
 * handler answers, `response(body, { status })` included; `jwt_auth.claims` types `data.auth`, present
 * on routes that require a JWT; `authorization` adds the claims it reads; `api_key_auth` makes
 * `request.apiKey` present. Its twin, typed-api-errors.types.ts, holds the lines that must not compile.
 */
import { createApp, handlerError, handlerResultFromResponse, response, KeelResponse } from '../../lib/index.js';
import { expectType, type Equal } from './expect.js';

const note = { type: 'object', required: ['id', 'title'], properties: { id: { type: 'integer' }, title: { type: 'string' }, state: { type: 'string', enum: ['open', 'done'] }, tags: { type: 'array', items: { type: 'string' } } } } as const;
const claims = { type: 'object', required: ['sub'], properties: { sub: { type: 'string' }, roles: { type: 'array', items: { type: 'string' } } } } as const;

interface Note { id: number; title: string; tags: string[] }

// ---------------------------------------------------------------- response() keeps its status and body
expectType<Equal<ReturnType<typeof response<{ id: 1 }, 201>>, KeelResponse<201, { id: 1 }>>>(true);
const created = response({ id: 1 }, { status: 201 });
expectType<Equal<typeof created, KeelResponse<201, { readonly id: 1 }>>>(true);
const plain = response({ ok: true });
expectType<Equal<typeof plain, KeelResponse<200, { readonly ok: true }>>>(true);
// A KeelResponse is still a KeelResponse (hooks and middleware see the untyped one).
const anyResponse: KeelResponse = created;
void anyResponse;

createApp({}, (app) => {
  // ---------------------------------------------------------------- responses by status
  app.post('/notes', (d) => response({ id: 1, title: d.body.title, state: 'open' }, { status: 201 }), {
    body: { type: 'object', required: ['title'], properties: { title: { type: 'string' } } },
    responses: { 201: note },
  });
  app.post('/notes-tags', () => response({ id: 1, title: 't', tags: ['a', 'b'] }, { status: 201, headers: { Location: '/notes/1' } }), { responses: { 201: note } });
  // An interface value (no index signature) matches a schema without additionalProperties: false.
  const stored: Note = { id: 1, title: 't', tags: [] };
  app.post('/notes-stored', () => response(stored, { status: 201 }), { responses: { 201: note } });
  app.get('/notes/{id:int}', (d) => (d.pathParams.id === 1 ? { id: 1, title: 't' } : handlerError(404, 'no such note')), { responses: { 200: note, 404: null } });
  app.get('/notes2/{id:int}', (d) => (d.pathParams.id === 1 ? response({ id: 1, title: 't' }) : response(null, { status: 404 })), { responses: { 200: note, 404: null } });
  // 204: a bare `undefined`, or response(null, { status: 204 }).
  app.delete('/notes/{id:int}', () => undefined, { responses: { 204: null } });
  app.delete('/notes2/{id:int}', () => response(null, { status: 204 }), { responses: { 204: null } });
  // An error status with a schema of its own.
  app.put('/notes/{id:int}', () => response({ detail: 'stale', current: 3 }, { status: 409 }), { responses: { 200: note, 409: { type: 'object', required: ['current'], properties: { current: { type: 'integer' } } } } });
  // `response` is the 200 beside `responses`.
  app.get('/both', () => ({ id: 1, title: 't' }), { response: note, responses: { 404: null } });
  app.get('/async', async () => response({ id: 1, title: 't' }, { status: 201 }), { responses: { 201: note } });
  // The escape hatch: a HandlerResult is not checked.
  app.get('/escape', () => handlerResultFromResponse(new KeelResponse('x', 299)), { responses: { 201: note } });
  // `response` alone: the schema of every success status; redirects and errors are free.
  app.post('/default', () => response({ id: 1, title: 't' }, { status: 201 }), { response: note });
  app.get('/default-404', () => response({ detail: 'gone' }, { status: 404 }), { response: note });
  app.get('/default-204', () => response(null, { status: 204 }), { response: note });
  // No schema at all: anything, as before.
  app.get('/free', () => response({ anything: true }, { status: 418 }));

  // ---------------------------------------------------------------- typed claims
  app.get('/me', (d) => {
    expectType<Equal<typeof d.auth.sub, string>>(true);
    expectType<Equal<typeof d.auth.roles, string[] | undefined>>(true);
    return d.auth.sub;
  }, { jwt_auth: { secret: 'x'.repeat(32), claims } });
  app.get('/any-claims', (d) => {
    expectType<Equal<typeof d.auth, Record<string, unknown>>>(true); // required: never undefined
    return null;
  }, { jwt_auth: { secret: 'x'.repeat(32) } });
  app.get('/no-jwt', (d) => {
    expectType<Equal<typeof d.auth, Record<string, unknown> | undefined>>(true); // nothing said
    return null;
  });
  app.get('/jwt-off', (d) => {
    expectType<Equal<typeof d.auth, undefined>>(true);
    return null;
  }, { jwt_auth: { enabled: false } });
  app.get('/admin', (d) => {
    expectType<Equal<typeof d.auth.roles, string | string[] | undefined>>(true);
    expectType<Equal<typeof d.auth.scope, string | string[] | undefined>>(true);
    expectType<Equal<typeof d.auth.permissions, string | string[] | undefined>>(true);
    return null;
  }, { authorization: { required_roles: ['admin'] } });
  app.get('/admin-claims', (d) => {
    expectType<Equal<typeof d.auth.roles, string[] | undefined>>(true); // the claims schema narrows it
    expectType<Equal<typeof d.auth.sub, string>>(true);
    return null;
  }, { jwt_auth: { secret: 'x'.repeat(32), claims }, authorization: { required_roles: ['admin'] } });
  app.get('/key', (_d, req) => {
    expectType<Equal<typeof req.apiKey.index, number>>(true);
    return req.apiKey.source;
  }, { api_key_auth: { keys: ['k'] } });
  app.route({
    method: 'GET',
    path: '/route-me',
    jwt_auth: { secret: 'x'.repeat(32), claims },
    responses: { 200: { type: 'object', required: ['sub'], properties: { sub: { type: 'string' } } } },
    handler: (d) => ({ sub: d.auth.sub }),
  });
});

// ---------------------------------------------------------------- server-level records type every route
createApp({ jwt_auth: { secret: 'x'.repeat(32), claims }, api_key_auth: { keys: ['k'] } }, (app) => {
  app.get('/me', (d, req) => {
    expectType<Equal<typeof d.auth.sub, string>>(true);
    expectType<Equal<typeof req.apiKey.source, 'header' | 'query'>>(true);
    return d.auth.sub;
  });
  app.get('/public', (d) => {
    expectType<Equal<typeof d.auth, undefined>>(true);
    return null;
  }, { jwt_auth: { enabled: false } });
});

// ---------------------------------------------------------------- a claims schema held as a plain object types nothing
const looseClaims: Record<string, unknown> = { type: 'object' };
createApp({}, (app) => {
  app.get('/loose', (d) => {
    expectType<Equal<typeof d.auth, Record<string, unknown>>>(true);
    return null;
  }, { jwt_auth: { secret: 'x'.repeat(32), claims: looseClaims } });
});
