import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import request from 'supertest';
import { buildSchema, getIntrospectionQuery, parse, specifiedRules, validate, type GraphQLError } from 'graphql';
import { DEFAULT_MAX_TOKENS, DocumentCache, isRejected } from './documents.js';
import { createGraphqlHttpHandler } from './http.js';
import { limitRules, type GraphqlLimits } from './limits.js';

const schema = buildSchema(`
  type Query { me: User, users(first: Int): [User!]!, count: Int }
  type User { id: ID!, name: String, best: User, friends(first: Int): [User!]! }
`);
schema.getQueryType()!.getFields().count!.resolve = () => 3;
const UNLIMITED: GraphqlLimits = { introspection_enabled: true, depth_limit: null, complexity_limit: null };

function messages(checked: ReturnType<DocumentCache['prepare']>): string[] {
  assert.ok(isRejected(checked), 'expected the query to be rejected');
  return checked.map((e) => e.message);
}

describe('when the same query text comes again', () => {
  it('should answer it from the cache with the same document', () => {
    const documents = new DocumentCache(schema, UNLIMITED);
    const first = documents.prepare('{ me { id } }', undefined);
    assert.equal(isRejected(first), false);
    assert.equal(documents.prepare('{ me { id } }', undefined), first);
    assert.equal(documents.size, 1);
  });
});

describe('when the query text changes', () => {
  it('should parse and validate the new text instead of serving the cached document', () => {
    const documents = new DocumentCache(schema, UNLIMITED);
    const valid = documents.prepare('{ me { id } }', undefined);
    const other = documents.prepare('{ me { name } }', undefined);
    assert.notEqual(other, valid);
    // One character more makes it invalid: the cached valid document must not answer for it.
    assert.deepEqual(messages(documents.prepare('{ me { idx } }', undefined)), ['Cannot query field "idx" on type "User". Did you mean "id"?']);
  });
});

describe('when a document is rejected by a limit', () => {
  const limits: GraphqlLimits = { introspection_enabled: false, depth_limit: 2, complexity_limit: 20 };
  for (const [what, query, pattern] of [
    ['depth', '{ me { best { id } } }', /^Query depth 3 exceeds the limit of 2$/],
    ['complexity', '{ users(first: 30) { id } }', /^Query complexity 31 exceeds the limit of 20$/],
    ['introspection', '{ __type(name: "User") { name } }', /^Introspection is disabled$/],
  ] as const) {
    it(`should reject it again on the second request (${what})`, () => {
      const documents = new DocumentCache(schema, limits);
      assert.match(messages(documents.prepare(query, undefined))[0]!, pattern);
      assert.match(messages(documents.prepare(query, undefined))[0]!, pattern);
    });
  }
  it('should keep rejecting a syntax error', () => {
    const documents = new DocumentCache(schema, limits);
    assert.match(messages(documents.prepare('{ me {', undefined))[0]!, /^Syntax Error/);
    assert.match(messages(documents.prepare('{ me {', undefined))[0]!, /^Syntax Error/);
  });
  it('should answer 400 over HTTP on every request, not only the first', async () => {
    const handler = createGraphqlHttpHandler(schema, { limits });
    const srv = createServer((req, res) => void handler(req, res));
    for (let i = 0; i < 3; i++) {
      const res = await request(srv).post('/graphql').set('Content-Type', 'application/json').send({ query: '{ me { best { id } } }' });
      assert.equal(res.status, 400);
      assert.equal(res.body.errors[0].extensions.code, 'DEPTH_LIMIT_EXCEEDED');
    }
  });
});

describe('when the complexity depends on the request variables', () => {
  const limits: GraphqlLimits = { introspection_enabled: true, depth_limit: null, complexity_limit: 20 };
  const query = 'query ($n: Int) { users(first: $n) { id } }';
  it('should check each request with its own variables', () => {
    const documents = new DocumentCache(schema, limits);
    assert.equal(isRejected(documents.prepare(query, { n: 5 })), false);
    assert.deepEqual(messages(documents.prepare(query, { n: 50 })), ['Query complexity 51 exceeds the limit of 20']);
    assert.equal(isRejected(documents.prepare(query, { n: 5 })), false);
    assert.equal(documents.size, 1);
  });
  it('should report the errors of an invalid document as validating it in one pass would', () => {
    const invalid = 'query ($n: Int) { users(first: $n) { nope } }';
    const variables = { n: 50 };
    const direct = validate(schema, parse(invalid), [...specifiedRules, ...limitRules(limits, variables)]);
    const documents = new DocumentCache(schema, limits);
    documents.prepare(invalid, { n: 1 });
    const cached = documents.prepare(invalid, variables) as readonly GraphQLError[];
    assert.deepEqual(cached.map((e) => e.message), direct.map((e) => e.message));
    assert.equal(cached.length, 2);
  });
});

describe('when many distinct queries arrive', () => {
  it('should keep at most maxEntries of them', () => {
    const documents = new DocumentCache(schema, UNLIMITED, { maxEntries: 3 });
    for (let i = 0; i < 20; i++) documents.prepare(`{ count a${i}: count }`, undefined);
    assert.equal(documents.size, 3);
    // The evicted ones are still answered correctly, just parsed again.
    assert.equal(isRejected(documents.prepare('{ count a0: count }', undefined)), false);
  });
  it('should keep at most maxText of query text and not store a longer query', () => {
    const documents = new DocumentCache(schema, UNLIMITED, { maxText: 100 });
    const long = `{ ${Array.from({ length: 30 }, (_, i) => `c${i}: count`).join(' ')} }`;
    assert.ok(long.length > 100);
    assert.equal(isRejected(documents.prepare(long, undefined)), false);
    assert.equal(documents.size, 0);
    for (let i = 0; i < 10; i++) documents.prepare(`{ count   c${i}: count }`, undefined);
    assert.ok(documents.size <= 100 / '{ count   c0: count }'.length, `size ${documents.size}`);
  });
});

describe('when a query has more tokens than maxTokens', () => {
  it('should refuse it as a syntax error before validating it', () => {
    const documents = new DocumentCache(schema, UNLIMITED, { maxTokens: 10 });
    // { count count count count } = 6 tokens; 12 fields = 14 tokens.
    assert.equal(isRejected(documents.prepare('{ count count count count }', undefined)), false);
    const refused = documents.prepare(`{ ${'count '.repeat(12)}}`, undefined);
    assert.deepEqual(messages(refused), ['Query exceeds the limit of 10 tokens']);
    assert.deepEqual((refused as readonly GraphQLError[])[0]!.extensions, { code: 'TOKEN_LIMIT_EXCEEDED', limit: 10 });
  });
  it(`should refuse ${DEFAULT_MAX_TOKENS + 1} tokens by default and accept the standard introspection query`, () => {
    const documents = new DocumentCache(schema, UNLIMITED);
    assert.equal(isRejected(documents.prepare(getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true }), undefined)), false);
    assert.match(messages(documents.prepare(`{ ${'count '.repeat(DEFAULT_MAX_TOKENS)}}`, undefined))[0]!, new RegExp(`^Query exceeds the limit of ${DEFAULT_MAX_TOKENS} tokens$`));
  });
  it('should refuse a bad maxTokens at construction', () => {
    assert.throws(() => new DocumentCache(schema, UNLIMITED, { maxTokens: 0 }), /maxTokens must be a positive integer, got 0/);
  });
});

describe('when a query nests deeper than the parser can recurse', () => {
  it('should answer a syntax error without the stack overflow, and keep answering it', () => {
    const documents = new DocumentCache(schema, UNLIMITED, { maxTokens: 1_000_000 });
    const deep = `{ ${'me { '.repeat(20_000)}id${' }'.repeat(20_000)} }`;
    for (let i = 0; i < 2; i++) assert.deepEqual(messages(documents.prepare(deep, undefined)), ['Syntax Error: Document is nested too deeply. Parsing aborted.']);
  });
});
