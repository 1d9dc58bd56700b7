import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execute, parse, subscribe, type ExecutionResult } from 'graphql';
import { AppError, ConfigError } from '../http/errors.js';
import { buildSdlSchema } from './sdl.js';

const SDL = `
type Query { user: User, users: [User!]!, greet(name: String!): String!, count: Int }
type User { id: ID!, name: String!, email: String!, profile: Profile, tags: [String!] }
type Profile { bio: String, city: String! }
input UserInput { name: String! }
type Mutation { createUser(input: UserInput!): User! }
type Subscription { userAdded: User! }
`;
const DATA = {
  user: { id: 'u1', name: 'Ada', email: 'ada@example.com', profile: { bio: 'math', city: 'London' }, tags: ['a', 'b'] },
  users: [{ id: 'u1', name: 'Ada', email: 'a@x' }, { id: 'u2', name: 'Alan', email: 'b@x' }],
  greet: 'Hello, whoever!',
  count: 2,
  createUser: { id: 'u3', name: 'Grace', email: 'g@x' },
  userAdded: { id: 'u4', name: 'Linus', email: 'l@x' },
};

async function run(query: string, config: Record<string, unknown> = {}, data: unknown = DATA): Promise<ExecutionResult> {
  const schema = buildSdlSchema(SDL, data, { introspection_enabled: true, ...config });
  return JSON.parse(JSON.stringify(await execute({ schema, document: parse(query) }))) as ExecutionResult;
}

function rejects(sdl: string, pattern: RegExp): void {
  assert.throws(() => buildSdlSchema(sdl, {}, { introspection_enabled: true }), (err: unknown) => {
    assert.ok(err instanceof AppError, `expected AppError, got ${String(err)}`);
    assert.equal(err.kind, 'GraphQl');
    assert.match(err.message, pattern);
    return true;
  });
}

describe('when the SDL is not acceptable', () => {
  it('should reject SDL that cannot be parsed', () => rejects('type Query { hello: String', /cannot be parsed/));
  it('should reject an empty SDL', () => rejects('   ', /non-empty/));
  it('should reject an enum definition', () => rejects('enum Color { RED }\ntype Query { c: Color }', /enum definition "Color" is not supported/));
  it('should reject an interface definition', () => rejects('interface Node { id: ID! }\ntype Query { n: Node }', /interface definition "Node"/));
  it('should reject a union definition', () => rejects('type A { a: Int }\nunion U = A\ntype Query { u: U }', /union definition "U"/));
  it('should reject a custom scalar definition', () => rejects('scalar DateTime\ntype Query { d: DateTime }', /scalar definition "DateTime"/));
  it('should reject a directive definition', () => rejects('directive @auth on FIELD_DEFINITION\ntype Query { a: Int }', /directive definition "auth"/));
  it('should reject a schema definition', () => rejects('schema { query: Q }\ntype Q { a: Int }', /schema definition/));
  it('should reject a type extension', () => rejects('type Query { a: Int }\nextend type Query { b: Int }', /type extension "Query" is not supported/));
  it('should reject an object implementing an interface', () => rejects('type Query implements Node { id: ID }', /implements an interface/));
  it('should reject duplicate field names in an object type', () => rejects('type Query { a: Int, a: String }', /field "a" more than once/));
  it('should reject duplicate field names in an input type', () => rejects('input I { a: Int, a: Int }\ntype Query { x(i: I): Int }', /field "a" more than once/));
  it('should reject a schema without a Query type', () => rejects('type Mutation { a: Int }', /Query root type must be provided/));
  it('should reject a field of an undefined type', () => rejects('type Query { a: Missing }', /not a valid schema/));
});

describe('when the config is invalid', () => {
  it('should throw ConfigError without introspection_enabled', () => {
    assert.throws(() => buildSdlSchema(SDL, DATA, {}), ConfigError);
  });
  it('should throw AppError for a field_errors path that names no field', () => {
    assert.throws(() => buildSdlSchema(SDL, DATA, { introspection_enabled: true, field_errors: [{ path: 'user.nope', message: 'x' }] }), AppError);
  });
});

describe('when resolving from response_data', () => {
  it('should navigate objects and lists by field name', async () => {
    const r = await run('{ user { name profile { city } tags } users { id } count }');
    assert.deepEqual(r, { data: { user: { name: 'Ada', profile: { city: 'London' }, tags: ['a', 'b'] }, users: [{ id: 'u1' }, { id: 'u2' }], count: 2 } });
  });
  it('should not filter by arguments', async () => {
    assert.deepEqual(await run('{ greet(name: "Bob") }'), { data: { greet: 'Hello, whoever!' } });
  });
  it('should serve aliases from the field name', async () => {
    assert.deepEqual(await run('{ a: user { n: name } b: user { id } }'), { data: { a: { n: 'Ada' }, b: { id: 'u1' } } });
  });
  it('should serve mutations from the same tree', async () => {
    assert.deepEqual(await run('mutation { createUser(input: { name: "x" }) { name } }'), { data: { createUser: { name: 'Grace' } } });
  });
  it('should give null for absent data and not read inherited properties', async () => {
    const r = await run('{ user { profile { bio } } count }', {}, { user: { profile: Object.create({ bio: 'inherited' }) } });
    assert.deepEqual(r, { data: { user: { profile: { bio: null } }, count: null } });
  });
  it('should report a missing non-null value as an error with its path', async () => {
    const r = await run('{ user { id email } }', {}, { user: { id: 'x' } });
    assert.deepEqual(r.data, { user: null });
    assert.deepEqual(r.errors?.[0]?.path, ['user', 'email']);
  });
  it('should emit the static data once on a subscription, then complete', async () => {
    const schema = buildSdlSchema(SDL, DATA, { introspection_enabled: true });
    const it = (await subscribe({ schema, document: parse('subscription { userAdded { name } }') })) as AsyncIterableIterator<ExecutionResult>;
    const events = [];
    for await (const e of it) events.push(JSON.parse(JSON.stringify(e)));
    assert.deepEqual(events, [{ data: { userAdded: { name: 'Linus' } } }]);
  });
});

describe('when field_errors are configured', () => {
  it('should fail a top-level field with the message and its path', async () => {
    const r = await run('{ count user { id } }', { field_errors: [{ path: 'count', message: 'count is broken' }] });
    assert.deepEqual(r.data, { count: null, user: { id: 'u1' } });
    assert.equal(r.errors?.length, 1);
    assert.equal(r.errors![0]!.message, 'count is broken');
    assert.deepEqual(r.errors![0]!.path, ['count']);
  });
  it('should fail a nullable nested field and keep its siblings', async () => {
    const r = await run('{ user { name profile { bio city } } }', { field_errors: [{ path: 'user.profile.bio', message: 'private' }] });
    assert.deepEqual(r.data, { user: { name: 'Ada', profile: { bio: null, city: 'London' } } });
    assert.deepEqual(r.errors![0]!.path, ['user', 'profile', 'bio']);
  });
  it('should propagate null from a non-null field to the nearest nullable parent', async () => {
    const r = await run('{ user { name email } count }', { field_errors: [{ path: 'user.email', message: 'hidden' }] });
    assert.deepEqual(r.data, { user: null, count: 2 });
    assert.deepEqual(r.errors![0]!.path, ['user', 'email']);
  });
  it('should match by field name when the query uses aliases', async () => {
    const r = await run('{ u: user { e: email } }', { field_errors: [{ path: 'user.email', message: 'hidden' }] });
    assert.deepEqual(r.data, { u: null });
    assert.deepEqual(r.errors![0]!.path, ['u', 'e']);
  });
  it('should fail the field in every list element, with the index in the path', async () => {
    const r = await run('{ users { id email } }', { field_errors: [{ path: 'users.email', message: 'no' }] });
    // users is [User!]!: a failing element nulls the list, and the non-null list nulls data (GraphQL spec §6.4.4).
    assert.equal(r.data, null);
    assert.deepEqual(r.errors![0]!.path, ['users', 0, 'email']);
  });
  it('should not touch fields that are not selected', async () => {
    const r = await run('{ user { name } }', { field_errors: [{ path: 'user.email', message: 'hidden' }] });
    assert.deepEqual(r, { data: { user: { name: 'Ada' } } });
  });
});
