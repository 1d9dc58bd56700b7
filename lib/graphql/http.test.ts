import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import request from 'supertest';
import { buildSchema, GraphQLError } from 'graphql';
import { GraphQlError } from '../http/errors.js';
import { builtinSchema } from './builtin-schemas.js';
import { createGraphqlHttpHandler, type GraphqlHttpOptions } from './http.js';

function server(options: GraphqlHttpOptions = {}, schema = builtinSchema('query_mutation')) {
  const handler = createGraphqlHttpHandler(schema, options);
  return createServer((req, res) => void handler(req, res));
}
const post = (srv: ReturnType<typeof server>, body: unknown) =>
  request(srv).post('/graphql').set('Content-Type', 'application/json').send(JSON.stringify(body));

// A schema whose resolvers throw each kind of error a handler might throw.
const throwing = buildSchema('type Query { ok: String, unauth: String, forbidden: String, limited: String, boom: String, plain: String, missing: String, internal: String }');
const fields = throwing.getQueryType()!.getFields();
fields.ok!.resolve = () => 'fine';
fields.unauth!.resolve = () => { throw new GraphQlError('AuthenticationError', 'Token missing'); };
fields.forbidden!.resolve = () => { throw new GraphQlError('AuthorizationError', 'Admins only'); };
fields.limited!.resolve = () => { throw new GraphQlError('RateLimitExceeded', 'Slow down'); };
fields.boom!.resolve = () => { throw new Error('db password is hunter2'); };
fields.missing!.resolve = () => { throw new GraphQlError('NotFound', 'No such thing'); };
fields.internal!.resolve = () => { throw new GraphQlError('InternalError', 'pool exhausted at db-3'); };
fields.plain!.resolve = () => { throw new GraphQLError('Plain failure', { extensions: { code: 'CUSTOM' } }); };

describe('when a query succeeds', () => {
  it('should answer 200 with data over POST', async () => {
    const res = await post(server(), { query: '{ hello(name: "keel") }' });
    assert.equal(res.status, 200);
    assert.match(res.headers['content-type']!, /^application\/json; charset=utf-8/);
    assert.deepEqual(res.body, { data: { hello: 'Hello, keel!' } });
  });
  it('should answer a GET query from the URL', async () => {
    const res = await request(server()).get('/graphql').query({ query: 'query ($m: String!) { echo(message: $m) }', variables: JSON.stringify({ m: 'hi' }) });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: { echo: 'hi' } });
  });
  it('should run a mutation over POST', async () => {
    const res = await post(server(), { query: 'mutation { addBook(input: { title: "Parable", authorId: "a2" }) { title author { name } } }' });
    assert.deepEqual(res.body, { data: { addBook: { title: 'Parable', author: { name: 'Octavia E. Butler' } } } });
  });
  it('should use application/graphql-response+json when the client asks for it', async () => {
    const res = await post(server(), { query: '{ hello }' }).set('Accept', 'application/graphql-response+json');
    assert.equal(res.status, 200);
    assert.match(res.headers['content-type']!, /^application\/graphql-response\+json/);
  });
});

describe('when the request is a GraphQL request error', () => {
  it('should answer 400 with errors and no data for a syntax error', async () => {
    const res = await post(server(), { query: '{ hello(' });
    assert.equal(res.status, 400);
    assert.equal('data' in res.body, false);
    assert.match(res.body.errors[0].message, /^Syntax Error/);
  });
  it('should answer 400 for a validation error', async () => {
    const res = await post(server(), { query: '{ nope }' });
    assert.equal(res.status, 400);
    assert.match(res.body.errors[0].message, /Cannot query field "nope"/);
  });
  it('should answer 400 for a variable of the wrong type', async () => {
    const res = await post(server(), { query: 'query ($m: String!) { echo(message: $m) }', variables: { m: 5 } });
    assert.equal(res.status, 400);
    assert.match(res.body.errors[0].message, /Variable "\$m"/);
  });
  it('should answer 400 for a missing query', async () => {
    const res = await post(server(), { variables: {} });
    assert.equal(res.status, 400);
    assert.ok(Array.isArray(res.body.errors));
  });
  it('should answer 400 for a body that is not JSON', async () => {
    const res = await request(server()).post('/graphql').set('Content-Type', 'application/json').send('{nope');
    assert.equal(res.status, 400);
    assert.ok(Array.isArray(res.body.errors));
  });
  it('should answer 400 with INTROSPECTION_DISABLED when introspection is off', async () => {
    const res = await post(server({ limits: { introspection_enabled: false } }), { query: '{ __schema { types { name } } }' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body.errors[0].extensions, { code: 'INTROSPECTION_DISABLED', introspection_enabled: false });
  });
  it('should still answer __typename when introspection is off', async () => {
    const res = await post(server({ limits: { introspection_enabled: false } }), { query: '{ __typename }' });
    assert.deepEqual(res.body, { data: { __typename: 'Query' } });
  });
  it('should answer 400 with DEPTH_LIMIT_EXCEEDED before executing anything', async () => {
    const res = await post(server({ limits: { depth_limit: 2 } }), { query: 'mutation { addBook(input: { title: "x", authorId: "a1" }) { author { name } } }' });
    assert.equal(res.status, 400);
    assert.equal(res.body.errors[0].extensions.code, 'DEPTH_LIMIT_EXCEEDED');
    // The mutation never ran: a later query does not see the book.
    const books = await post(server(), { query: '{ books { title } }' });
    assert.equal(books.body.data.books.some((b: { title: string }) => b.title === 'x'), false);
  });
  it('should answer 400 with COMPLEXITY_LIMIT_EXCEEDED', async () => {
    const res = await post(server({ limits: { complexity_limit: 5 } }), { query: '{ books(first: 3) { id title } }' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body.errors[0].extensions, { code: 'COMPLEXITY_LIMIT_EXCEEDED', complexity: 7, limit: 5 });
  });
});

describe('when execution fails', () => {
  it('should answer 200 with data and errors for a resolver error', async () => {
    const res = await post(server({}, throwing), { query: '{ ok plain }' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, { ok: 'fine', plain: null });
    assert.equal(res.body.errors[0].message, 'Plain failure');
    assert.deepEqual(res.body.errors[0].path, ['plain']);
  });
  it('should answer 401 for an AuthenticationError', async () => {
    const res = await post(server({}, throwing), { query: '{ ok unauth }' });
    assert.equal(res.status, 401);
    assert.equal(res.body.errors[0].message, 'Token missing');
    assert.equal(res.body.errors[0].extensions.code, 'AUTHENTICATION_ERROR');
  });
  it('should answer 403 for an AuthorizationError', async () => {
    const res = await post(server({}, throwing), { query: '{ forbidden }' });
    assert.equal(res.status, 403);
    assert.equal(res.body.errors[0].extensions.code, 'AUTHORIZATION_ERROR');
  });
  it('should answer 429 for a RateLimitExceeded', async () => {
    const res = await post(server({}, throwing), { query: '{ limited }' });
    assert.equal(res.status, 429);
  });
  it('should answer 404 for a NotFound', async () => {
    const res = await post(server({}, throwing), { query: '{ ok missing }' });
    assert.equal(res.status, 404);
    assert.deepEqual(res.body.data, { ok: 'fine', missing: null });
    assert.equal(res.body.errors[0].extensions.code, 'NOT_FOUND');
  });
  it('should answer 500 for an InternalError and hide its message', async () => {
    const res = await post(server({}, throwing), { query: '{ internal }' });
    assert.equal(res.status, 500);
    assert.equal(res.body.errors[0].message, 'Internal server error');
    assert.equal(JSON.stringify(res.body).includes('db-3'), false);
  });
  it('should let a 401 win over a 500 in the same response', async () => {
    const res = await post(server({}, throwing), { query: '{ internal unauth }' });
    assert.equal(res.status, 401);
  });
  it('should hide the message of an unexpected exception', async () => {
    const res = await post(server({}, throwing), { query: '{ ok boom }' });
    assert.equal(res.status, 200);
    assert.equal(res.body.errors[0].message, 'Internal server error');
    assert.equal(JSON.stringify(res.body).includes('hunter2'), false);
  });
});

describe('when the HTTP request itself is wrong', () => {
  it('should refuse a mutation over GET with 405 and Allow: POST', async () => {
    const res = await request(server()).get('/graphql').query({ query: 'mutation { deleteBook(id: "b1") }' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'POST');
    assert.match(res.headers['content-type']!, /^application\/problem\+json/);
  });
  it('should answer 405 problem details for PUT', async () => {
    const res = await request(server()).put('/graphql').send('{}');
    assert.equal(res.status, 405);
    assert.equal(res.body.status, 405);
  });
  it('should answer 415 problem details for an unsupported content type', async () => {
    const res = await request(server()).post('/graphql').set('Content-Type', 'text/plain').send('{ hello }');
    assert.equal(res.status, 415);
    assert.match(res.headers['content-type']!, /^application\/problem\+json/);
  });
  it('should answer 406 problem details when no acceptable media type is offered', async () => {
    const res = await post(server(), { query: '{ hello }' }).set('Accept', 'text/html');
    assert.equal(res.status, 406);
    assert.match(res.headers['content-type']!, /^application\/problem\+json/);
  });
  it('should answer 413 problem details for a body over the cap', async () => {
    const res = await post(server({ maxBodySize: 32 }), { query: `{ echo(message: "${'x'.repeat(100)}") }` });
    assert.equal(res.status, 413);
    assert.equal(res.body.status, 413);
  });
});

describe('when introspection is disabled and a query misspells a name', () => {
  // Each misspelling graphql-js answers with "Did you mean …", naming a field, argument, type or input field.
  const cases: [string, { query: string; variables?: Record<string, unknown> }, string, string][] = [
    ['a field', { query: '{ helo }' }, 'Cannot query field "helo" on type "Query".', 'Did you mean "hello"?'],
    ['an argument', { query: '{ hello(nme: "x") }' }, 'Unknown argument "nme" on field "Query.hello".', 'Did you mean "name"?'],
    ['a type', { query: 'query ($i: BookInpt) { hello(name: $i) }' }, 'Unknown type "BookInpt".', 'Did you mean "BookInput" or "Book"?'],
    ['an input field in a literal', { query: 'mutation { addBook(input: { title: "x", titl: "x", authorId: "a1" }) { id } }' }, 'Field "titl" is not defined by type "BookInput".', 'Did you mean "title"?'],
    ['an input field in variables (execution)', { query: 'mutation ($i: BookInput!) { addBook(input: $i) { id } }', variables: { i: { title: 'x', authorId: 'a1', titl: 'y' } } },
      'Variable "$i" got invalid value { title: "x", authorId: "a1", titl: "y" }; Field "titl" is not defined by type "BookInput".', 'Did you mean "title"?'],
  ];
  for (const [what, body, message, suggestion] of cases) {
    it(`should not suggest ${what}`, async () => {
      const res = await post(server({ limits: { introspection_enabled: false } }), body);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body.errors.map((e: { message: string }) => e.message), [message]);
    });
    it(`should still suggest ${what} when introspection is enabled`, async () => {
      const res = await post(server(), body);
      assert.deepEqual(res.body.errors.map((e: { message: string }) => e.message), [`${message} ${suggestion}`]);
    });
  }
});
