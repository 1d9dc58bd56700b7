import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchema, getOperationAST, parse, specifiedRules, validate } from 'graphql';
import { limitRules, measureComplexity, measureDepth } from './limits.js';

const schema = buildSchema(`
  type Query { me: User, users(first: Int, limit: Int, after: String): [User!]!, count: Int }
  type User { id: ID!, name: String, friends(first: Int): [User!]!, best: User }
`);

function depth(query: string): number {
  const doc = parse(query);
  return measureDepth(doc, getOperationAST(doc)!);
}
function complexity(query: string, variables: Record<string, unknown> = {}): number {
  const doc = parse(query);
  return measureComplexity(schema, doc, getOperationAST(doc)!, variables);
}
function errors(query: string, limits: { introspection_enabled?: boolean; depth_limit?: number | null; complexity_limit?: number | null }, variables = {}) {
  const rules = limitRules({ introspection_enabled: true, depth_limit: null, complexity_limit: null, ...limits }, variables);
  return validate(schema, parse(query), [...specifiedRules, ...rules]);
}

describe('when measuring depth', () => {
  it('should count one level per nested field', () => {
    assert.equal(depth('{ count }'), 1);
    assert.equal(depth('{ me { id } }'), 2);
    assert.equal(depth('{ me { best { best { id } } } count }'), 4);
  });
  it('should inline named fragments', () => {
    assert.equal(depth('{ me { ...F } } fragment F on User { best { id } }'), 3);
  });
  it('should inline inline fragments without counting them as a level', () => {
    assert.equal(depth('{ me { ... on User { best { id } } } }'), 3);
  });
  it('should stop at a fragment cycle instead of looping', () => {
    const d = depth('{ me { ...A } } fragment A on User { best { ...B } } fragment B on User { best { ...A } }');
    assert.equal(d, 3);
  });
});

describe('when measuring complexity', () => {
  it('should cost 1 per selected field', () => {
    assert.equal(complexity('{ count me { id name } }'), 4);
  });
  it('should multiply a list field\'s children by first', () => {
    // users: 1 + 10 × (id + name)
    assert.equal(complexity('{ users(first: 10) { id name } }'), 21);
  });
  it('should multiply a list field\'s children by limit', () => {
    assert.equal(complexity('{ users(limit: 3) { id } }'), 4);
  });
  it('should multiply nested lists', () => {
    // users: 1 + 2 × (friends: 1 + 5 × id) = 1 + 2 × 6
    assert.equal(complexity('{ users(first: 2) { friends(first: 5) { id } } }'), 13);
  });
  it('should take first from variables', () => {
    assert.equal(complexity('query ($n: Int) { users(first: $n) { id } }', { n: 7 }), 8);
  });
  it('should use a variable\'s default value when the variable is not sent', () => {
    assert.equal(complexity('query ($n: Int = 4) { users(first: $n) { id } }'), 5);
  });
  it('should count a list without first or limit once', () => {
    assert.equal(complexity('{ users(after: "x") { id } }'), 2);
  });
  it('should count fragment fields once per spread and survive cycles', () => {
    assert.equal(complexity('{ me { ...F } } fragment F on User { id name }'), 3);
    assert.equal(complexity('{ me { ...A } } fragment A on User { best { ...A } }'), 2);
  });
});

describe('when introspection is disabled', () => {
  it('should reject __schema', () => {
    const errs = errors('{ __schema { queryType { name } } }', { introspection_enabled: false });
    assert.equal(errs.length, 1);
    assert.equal(errs[0]!.message, 'Introspection is disabled');
    assert.equal(errs[0]!.extensions.code, 'INTROSPECTION_DISABLED');
  });
  it('should reject __type', () => {
    const errs = errors('{ __type(name: "User") { name } }', { introspection_enabled: false });
    assert.deepEqual(errs.map((e) => e.extensions.code), ['INTROSPECTION_DISABLED']);
  });
  it('should reject __schema hidden in a fragment', () => {
    const errs = errors('{ ...F } fragment F on Query { __schema { types { name } } }', { introspection_enabled: false });
    assert.deepEqual(errs.map((e) => e.extensions.code), ['INTROSPECTION_DISABLED']);
  });
  it('should still allow __typename', () => {
    assert.deepEqual(errors('{ __typename me { __typename } }', { introspection_enabled: false }), []);
  });
  it('should allow __schema when enabled', () => {
    assert.deepEqual(errors('{ __schema { queryType { name } } }', { introspection_enabled: true }), []);
  });
});

describe('when a depth limit is set', () => {
  it('should accept a query at the limit', () => {
    assert.deepEqual(errors('{ me { best { id } } }', { depth_limit: 3 }), []);
  });
  it('should reject a query one level deeper with DEPTH_LIMIT_EXCEEDED', () => {
    const errs = errors('{ me { best { best { id } } } }', { depth_limit: 3 });
    assert.equal(errs.length, 1);
    assert.deepEqual(errs[0]!.extensions, { code: 'DEPTH_LIMIT_EXCEEDED', depth: 4, limit: 3 });
  });
  it('should see depth hidden in fragments', () => {
    const errs = errors('{ me { ...F } } fragment F on User { best { best { id } } }', { depth_limit: 3 });
    assert.deepEqual(errs.map((e) => e.extensions.code), ['DEPTH_LIMIT_EXCEEDED']);
  });
  it('should report a fragment cycle as a validation error and terminate', () => {
    const errs = errors('{ me { ...A } } fragment A on User { best { ...A } }', { depth_limit: 50 });
    assert.ok(errs.some((e) => /Cannot spread fragment "A" within itself/.test(e.message)), errs.map((e) => e.message).join('; '));
  });
});

describe('when a complexity limit is set', () => {
  it('should accept a query at the limit', () => {
    assert.deepEqual(errors('{ users(first: 2) { id } }', { complexity_limit: 3 }), []);
  });
  it('should reject a query over it with COMPLEXITY_LIMIT_EXCEEDED', () => {
    const errs = errors('{ users(first: 3) { id } }', { complexity_limit: 3 });
    assert.deepEqual(errs[0]!.extensions, { code: 'COMPLEXITY_LIMIT_EXCEEDED', complexity: 4, limit: 3 });
  });
  it('should use the request variables', () => {
    assert.equal(errors('query ($n: Int) { users(first: $n) { id } }', { complexity_limit: 10 }, { n: 100 }).length, 1);
    assert.equal(errors('query ($n: Int) { users(first: $n) { id } }', { complexity_limit: 10 }, { n: 2 }).length, 0);
  });
});
