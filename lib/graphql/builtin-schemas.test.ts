import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { graphql, subscribe, parse, type ExecutionResult } from 'graphql';
import { AppError } from '../http/errors.js';
import { builtinSchema, MAX_COUNTDOWN, SCHEMA_TYPES } from './builtin-schemas.js';

describe('when building the built-in schemas', () => {
  it('should give query_only a Query type only', () => {
    const s = builtinSchema('query_only');
    assert.ok(s.getQueryType());
    assert.equal(s.getMutationType(), undefined);
    assert.equal(s.getSubscriptionType(), undefined);
  });
  it('should give query_mutation a Mutation type and no Subscription type', () => {
    const s = builtinSchema('query_mutation');
    assert.ok(s.getMutationType());
    assert.equal(s.getSubscriptionType(), undefined);
  });
  it('should give full all three root types', () => {
    const s = builtinSchema('full');
    assert.deepEqual([s.getQueryType()?.name, s.getMutationType()?.name, s.getSubscriptionType()?.name], ['Query', 'Mutation', 'Subscription']);
  });
  it('should reject every other name with AppError GraphQl', () => {
    for (const bad of ['', 'Full', 'query-only', 'subscription', 'full_schema']) {
      assert.throws(() => builtinSchema(bad), (e: unknown) => e instanceof AppError && e.kind === 'GraphQl', bad);
    }
    assert.deepEqual([...SCHEMA_TYPES], ['query_only', 'query_mutation', 'full']);
  });
});

describe('when querying a built-in schema', () => {
  it('should resolve nested books and authors', async () => {
    const r = await graphql({ schema: builtinSchema('query_only'), source: '{ book(id: "b3") { title author { name books { id } } } }' });
    assert.deepEqual(JSON.parse(JSON.stringify(r)), { data: { book: { title: 'Kindred', author: { name: 'Octavia E. Butler', books: [{ id: 'b3' }] } } } });
  });
  it('should keep state per schema instance', async () => {
    const a = builtinSchema('query_mutation');
    const b = builtinSchema('query_mutation');
    await graphql({ schema: a, source: 'mutation { deleteBook(id: "b1") }' });
    const count = async (schema: typeof a) => ((await graphql({ schema, source: '{ books { id } }' })).data as { books: unknown[] }).books.length;
    assert.equal(await count(a), 2);
    assert.equal(await count(b), 3);
  });
  it('should fail addBook for an unknown author with NOT_FOUND', async () => {
    const r = await graphql({ schema: builtinSchema('full'), source: 'mutation { addBook(input: { title: "x", authorId: "nobody" }) { id } }' });
    assert.equal(r.errors?.[0]?.extensions.code, 'NOT_FOUND');
  });
  it('should refuse a countdown longer than MAX_COUNTDOWN', async () => {
    const it = (await subscribe({ schema: builtinSchema('full'), document: parse(`subscription { countdown(from: ${MAX_COUNTDOWN + 1}) }`) })) as ExecutionResult;
    assert.match(String(it.errors?.[0]?.message), /at most/);
  });
});
