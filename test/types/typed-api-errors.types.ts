/**
 * Type tests (issue 29 items 1 and 2), the lines that must NOT compile: every statement below is
 * marked `@ts-expect-error`, so tsc fails when one of them compiles; test/types.test.ts also compiles
 * this file without the marks and checks that each marked line, and only those, is an error.
 */
import { createApp, handlerError, handlerResultFromResponse, response, KeelResponse } from '../../lib/index.js';

const note = { type: 'object', required: ['id', 'title'], properties: { id: { type: 'integer' }, title: { type: 'string' }, state: { type: 'string', enum: ['open', 'done'] } } } as const;
const claims = { type: 'object', required: ['sub'], properties: { sub: { type: 'string' } } } as const;

createApp({}, (app) => {
  // A wrong property of a returned object is reported at that property, not at the handler's first column.
  app.get('/r0/{id:int}', (d) => ({
    // @ts-expect-error id is an integer in the response schema
    id: String(d.pathParams.id),
    title: 't',
  }), { response: note });
  // @ts-expect-error the 201 schema says id is an integer
  app.post('/r1', () => response({ id: 'x', title: 't' }, { status: 201 }), { responses: { 201: note } });
  // @ts-expect-error 202 is not listed in responses
  app.post('/r2', () => response({ id: 1, title: 't' }, { status: 202 }), { responses: { 201: note } });
  // @ts-expect-error a bare value is a 200, and responses has none
  app.post('/r3', () => ({ id: 1, title: 't' }), { responses: { 201: note } });
  // @ts-expect-error title is required by the 201 schema
  app.post('/r4', () => response({ id: 1 }, { status: 201 }), { responses: { 201: note } });
  // @ts-expect-error 'closed' is not in the enum
  app.post('/r5', () => response({ id: 1, title: 't', state: 'closed' }, { status: 201 }), { responses: { 201: note } });
  // @ts-expect-error 204 carries no content
  app.delete('/r6', () => response({ gone: true }, { status: 204 }), { responses: { 204: null } });
  // @ts-expect-error undefined is a 204, and responses lists only 200
  app.delete('/r7', () => undefined, { responses: { 200: note } });
  // @ts-expect-error a status that is not a literal cannot be checked
  app.get('/r8', () => response({ id: 1, title: 't' }, { status: 200 as number }), { responses: { 200: note } });
  // @ts-expect-error an untyped KeelResponse cannot be checked either (use handlerResultFromResponse to opt out)
  app.get('/r9', () => new KeelResponse({ id: 1, title: 't' }, 200), { responses: { 200: note } });
  // @ts-expect-error `response` alone is the schema of every success status: 201 included (the issue's example)
  app.post('/r10', () => response({ id: 'x' }, { status: 201 }), { response: note });
  // @ts-expect-error a responses value must be a JSON Schema (or null)
  app.get('/r11', () => handlerResultFromResponse(new KeelResponse()), { responses: { 200: { type: 'strng' } } });
  // @ts-expect-error async handlers are checked the same way
  app.post('/r12', async () => response({ id: 'x', title: 't' }, { status: 201 }), { responses: { 201: note } });

  // ---- block-bodied handlers (issue 45 item 3): the error is at the member or the response(...) argument, in one line
  app.get('/b1/{id:int}', (d) => {
    if (d.pathParams.id === 0) return handlerError(404, 'no such note');
    if (d.pathParams.id === 1) return response({ id: 1, title: 't' }, { status: 201 });
    return response({
      // @ts-expect-error id is an integer in the response schema
      id: String(d.pathParams.id),
      title: 't',
    }, { status: 201 });
  }, { response: note });
  app.get('/b2/{id:int}', (d) => {
    if (d.pathParams.id === 0) return response({ id: 1, title: 't' });
    // @ts-expect-error title is required by the 201 schema
    return response({ id: 2 }, { status: 201 });
  }, { responses: { 200: note, 201: note } });
  app.get('/b3/{id:int}', async (d) => {
    if (d.pathParams.id === 0) return response(null, { status: 204 });
    // @ts-expect-error 202 is not in responses (named in the message)
    return response({ id: 1, title: 't' }, { status: 202 });
  }, { responses: { 201: note, 204: null } });
  app.post('/b4', (d) => {
    const row = { id: 1, title: 't', state: 'closed' as const };
    if (d.body === undefined) return response({ id: 1, title: 't', state: 'open' }, { status: 201 });
    // @ts-expect-error 'closed' is not in the enum
    return response(row, { status: 201 });
  }, { responses: { 201: note } });
  // ---- end of block-bodied handlers

  // @ts-expect-error data.auth may be undefined on a route that says nothing of JWT
  app.get('/a1', (d) => d.auth.sub);
  // @ts-expect-error a claim the schema does not declare is unknown, not a string
  app.get('/a2', (d) => d.auth.email.toLowerCase(), { jwt_auth: { secret: 'x'.repeat(32), claims } });
  // @ts-expect-error sub is a string under the claims schema
  app.get('/a3', (d) => d.auth.sub.toFixed(), { jwt_auth: { secret: 'x'.repeat(32), claims } });
  // @ts-expect-error jwt_auth off: no claims
  app.get('/a4', (d) => d.auth.sub, { jwt_auth: { enabled: false } });
  // @ts-expect-error request.apiKey may be undefined without an API-key requirement
  app.get('/a5', (_d, req) => req.apiKey.index);
  // @ts-expect-error roles read by authorization are strings or lists of strings, not numbers
  app.get('/a6', (d) => { const n: number | undefined = d.auth.roles; return n; }, { authorization: { required_roles: ['admin'] } });
});
