/**
 * Type tests: a handler's `data` is inferred from its route's path pattern and JSON Schemas, and a
 * `response` schema types what it returns. Checked by `npm run typecheck` (part of `npm test`).
 */
import { createApp, intoHandler, response, handlerError, type RequestData } from '../../lib/index.js';
import { expectType, type Equal } from './expect.js';

const user = {
  type: 'object',
  required: ['email'],
  properties: { email: { type: 'string', format: 'email' }, age: { type: 'integer' } },
  additionalProperties: false,
} as const;

createApp({}, (app) => {
  // ---------------------------------------------------------------- path parameters from the pattern
  app.get('/users/{id:int}', (d) => {
    expectType<Equal<typeof d.pathParams, { id: number }>>(true);
    return { id: d.pathParams.id };
  });
  app.get('/orders/{id:uuid}/items/{slug}', (d) => {
    expectType<Equal<typeof d.pathParams, { id: string; slug: string }>>(true);
    return null;
  });
  app.get('/legacy/:slug', (d) => {
    expectType<Equal<typeof d.pathParams, { slug: string }>>(true);
    return null;
  });
  app.get('/files/{rest:path}', (d) => {
    expectType<Equal<typeof d.pathParams, { rest: string }>>(true);
    return null;
  });
  app.get('/m/{a:float}/{b:bool}/{c:date}', (d) => {
    expectType<Equal<typeof d.pathParams, { a: number; b: boolean; c: string }>>(true);
    return null;
  });
  app.get('/static', (d) => {
    expectType<Equal<typeof d.pathParams, {}>>(true);
    // @ts-expect-error no such parameter
    return d.pathParams.id;
  });
  // A declared path schema wins over the placeholder's type.
  app.get('/p/{code}', (d) => {
    expectType<Equal<typeof d.pathParams, { code: 'a' | 'b' }>>(true);
    return null;
  }, { parameters: { path: { code: { type: 'string', enum: ['a', 'b'] } } } });

  // ---------------------------------------------------------------- body from a JSON Schema (inline or as const)
  app.post('/users', (d) => d.body.email, { body: { type: 'object', required: ['email'], properties: { email: { type: 'string', format: 'email' } } } });
  app.post('/users2', (d) => {
    expectType<Equal<typeof d.body, { email: string; age?: number }>>(true);
    return response(d.body, { status: 201 });
  }, { body: user });
  app.post('/alias', (d) => {
    expectType<Equal<typeof d.body, { email: string; age?: number }>>(true);
    return null;
  }, { body_schema: user });
  app.post('/optional-body', (d) => {
    expectType<Equal<typeof d.body, { email: string; age?: number } | undefined>>(true); // body_required: false
    return d.body?.email ?? null;
  }, { body: user, body_required: false });
  app.post('/nobody', (d) => {
    expectType<Equal<typeof d.body, unknown>>(true);
    return null;
  });

  // ---------------------------------------------------------------- query, headers, cookies
  app.get('/items', (d) => {
    expectType<Equal<typeof d.query.limit, number>>(true); // a default is filled in
    expectType<Equal<typeof d.query.q, string | undefined>>(true); // optional: true
    expectType<Equal<typeof d.query.tags, string[] | undefined>>(true); // required: false
    expectType<Equal<typeof d.query.sort, 'asc' | 'desc'>>(true); // required by default
    expectType<Equal<typeof d.query.other, unknown>>(true); // undeclared keys stay unknown
    expectType<Equal<typeof d.headers['x-token'], string>>(true); // names lower-cased like data.headers
    expectType<Equal<typeof d.headers['x-mode'], 'fast' | 'slow'>>(true);
    expectType<Equal<typeof d.headers['x-count'], string>>(true); // headers stay text (coerced copy: validatedParams)
    expectType<Equal<typeof d.cookies.session, string>>(true);
    return null;
  }, {
    parameters: {
      query: {
        limit: { type: 'integer', default: 10 },
        q: { type: 'string', optional: true },
        tags: { type: 'array', items: { type: 'string' }, required: false },
        sort: { type: 'string', enum: ['asc', 'desc'] },
      },
      headers: { 'X-Token': { type: 'string' }, 'X-Mode': { type: 'string', enum: ['fast', 'slow'] }, 'X-Count': { type: 'integer' } },
      cookies: { session: { type: 'string' } },
    },
  });
  // A whole-object schema per source works too.
  app.get('/search', (d) => {
    expectType<Equal<typeof d.query.term, string>>(true);
    expectType<Equal<typeof d.query.page, number | undefined>>(true);
    return null;
  }, { parameters: { query: { type: 'object', required: ['term'], properties: { term: { type: 'string' }, page: { type: 'integer' } } } } });

  // ---------------------------------------------------------------- response schema types the return value
  const item = { type: 'object', required: ['id', 'name'], properties: { id: { type: 'integer' }, name: { type: 'string' } } } as const;
  app.get('/item/{id:int}', (d) => ({ id: d.pathParams.id, name: 'Buoy' }), { response: item });
  app.get('/item-async/{id:int}', async (d) => ({ id: d.pathParams.id, name: 'Buoy' }), { response: item });
  app.get('/item-response', () => response({ id: 1, name: 'x' }, { status: 201 }), { response: item });
  app.get('/item-error', () => handlerError(404, 'no such item'), { response: item });
  // @ts-expect-error id must be an integer
  app.get('/item-bad', () => ({ id: 'x', name: 'Buoy' }), { response: item });
  // @ts-expect-error name is required
  app.get('/item-missing', () => ({ id: 1 }), { response: item });

  // ---------------------------------------------------------------- every shorthand and app.route
  app.put('/u/{id:int}', (d) => ({ id: d.pathParams.id, email: d.body.email }), { body: user });
  app.patch('/u/{id:int}', (d) => d.body.age ?? d.pathParams.id, { body: user });
  app.delete('/u/{id:int}', (d) => {
    expectType<Equal<typeof d.pathParams.id, number>>(true);
    return undefined;
  });
  app.route({
    method: 'POST',
    path: '/r/{slug}',
    body: user,
    response: item,
    handler: (d) => {
      expectType<Equal<typeof d.pathParams, { slug: string }>>(true);
      expectType<Equal<typeof d.body, { email: string; age?: number }>>(true);
      return { id: d.body.email.length, name: d.pathParams.slug };
    },
  });
  // @ts-expect-error app.route checks the return value too
  app.route({ method: 'GET', path: '/r2', response: item, handler: () => ({ id: 'x', name: 'y' }) });

  // ---------------------------------------------------------------- per-route options keep their checks
  // @ts-expect-error typo in a per-route record (tsc: "Did you mean to write 'jwt_auth'?")
  app.get('/t', () => null, { jwt_auht: { secret: 'x' } });
  // @ts-expect-error wrong type inside a per-route record
  app.post('/t', () => null, { body: user, authorization: { required_roles: 'admin' } });
  app.get('/t2', () => null, { cors: { allowed_origins: ['https://a.example'] }, rate_limit: { per_second: 1 }, max_body_size: 1024, max_uri_length: 2048 });

  // ---------------------------------------------------------------- untyped handlers still work
  const plain = (d: RequestData) => ({ path: d.path, q: d.query });
  app.get('/plain/{id}', plain);
  app.get('/obj', intoHandler((d) => d.path, { wantsCookies: false }));
  // @ts-expect-error a handler object needs call(request, data); a plain object is not one
  app.get('/bad', { handle: () => null });
});
