import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { graphql, subscribe, parse, type ExecutionResult } from 'graphql';
import { AppError } from '../http/errors.js';
import { builtinSchema, DEFAULT_BUILTIN_MAX_BOOKS, DEFAULT_BUILTIN_MAX_LIBRARY_BYTES, MAX_COUNTDOWN, SCHEMA_TYPES } from './builtin-schemas.js';

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

describe('when clients add books past the library bounds (issue 44 crash 2)', () => {
  const add = (schema: ReturnType<typeof builtinSchema>, title: string) =>
    graphql({ schema, source: 'mutation ($t: String!) { addBook(input: { title: $t, authorId: "a1" }) { id } }', variableValues: { t: title } });
  const ids = async (schema: ReturnType<typeof builtinSchema>) => ((await graphql({ schema, source: '{ books { id } }' })).data as { books: { id: string }[] }).books.map((b) => b.id);

  it('should keep at most DEFAULT_BUILTIN_MAX_BOOKS books, dropping the oldest', async () => {
    const schema = builtinSchema('full');
    for (let i = 0; i < DEFAULT_BUILTIN_MAX_BOOKS + 10; i++) assert.equal((await add(schema, `t${i}`)).errors, undefined);
    const kept = await ids(schema);
    assert.equal(kept.length, DEFAULT_BUILTIN_MAX_BOOKS);
    assert.equal(kept.at(-1), `b${DEFAULT_BUILTIN_MAX_BOOKS + 13}`);
    assert.ok(!kept.includes('b1'));
  });

  it('should keep at most maxLibraryBytes of titles, dropping the oldest', async () => {
    const schema = builtinSchema('query_mutation', { maxLibraryBytes: 10_000 });
    for (let i = 0; i < 50; i++) assert.equal((await add(schema, 'x'.repeat(900))).errors, undefined);
    const kept = await ids(schema);
    assert.equal(kept.length, 11);
    assert.equal(kept[0], 'b43');
  });

  it('should refuse a title larger than the whole library with BAD_USER_INPUT', async () => {
    const schema = builtinSchema('full', { maxLibraryBytes: 1000 });
    const r = await add(schema, 'é'.repeat(501));
    assert.equal(r.errors?.[0]?.extensions.code, 'BAD_USER_INPUT');
    assert.match(r.errors![0]!.message, /title is 1002 bytes; the built-in library holds at most 1000 bytes/);
    assert.equal((await ids(schema)).length, 3);
  });

  it('should count a deleted book out of the library', async () => {
    const schema = builtinSchema('full', { maxLibraryBytes: 2000 });
    // The seeds' titles are 43 bytes: 1950 more fit, twice only if the deleted one is counted out.
    await add(schema, 'x'.repeat(1950));
    assert.deepEqual(await ids(schema), ['b1', 'b2', 'b3', 'b4']);
    await graphql({ schema, source: 'mutation { deleteBook(id: "b4") }' });
    await add(schema, 'x'.repeat(1950));
    assert.deepEqual(await ids(schema), ['b1', 'b2', 'b3', 'b5']);
  });

  it('should refuse bad bounds', () => {
    assert.throws(() => builtinSchema('full', { maxBooks: 0 }), /options.maxBooks must be an integer ≥ 1, got 0/);
    assert.throws(() => builtinSchema('full', { maxLibraryBytes: 1.5 }), /options.maxLibraryBytes/);
    assert.equal(DEFAULT_BUILTIN_MAX_LIBRARY_BYTES, 4 * 1024 * 1024);
  });
});
