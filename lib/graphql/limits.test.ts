import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchema, getIntrospectionQuery, getOperationAST, Kind, parse, specifiedRules, validate, type DocumentNode } from 'graphql';
import { INTROSPECTION_COMPLEXITY_LIMIT, INTROSPECTION_DEPTH_LIMIT, limitRules, MAX_MEASURE, measureComplexity, measureDepth } from './limits.js';

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

/** Fragments that each spread the previous one `width` times: the expanded query has width^levels fields. */
function fanOut(levels: number, width = 10): string {
  const parts = ['fragment F0 on Query { count }'];
  for (let i = 1; i <= levels; i++) parts.push(`fragment F${i} on Query { ${Array(width).fill(`...F${i - 1}`).join(' ')} }`);
  return `{ ...F${levels} } ${parts.join(' ')}`;
}

/**
 * The document of `query`, with every fragment's selection set behind a getter that counts its reads:
 * a walk that expands fragments without remembering them reads F0 width^levels times. Counting reads
 * (not time) makes the test fail at once on exponential work, however fast the machine.
 */
function countingFragmentReads(query: string): { doc: DocumentNode; reads: () => number } {
  const doc = parse(query);
  let reads = 0;
  for (const def of doc.definitions) {
    if (def.kind !== Kind.FRAGMENT_DEFINITION) continue;
    const set = def.selectionSet;
    Object.defineProperty(def, 'selectionSet', { get: () => { reads++; return set; } });
  }
  return { doc, reads: () => reads };
}

describe('when fragments fan out (each spreads the previous one ten times)', () => {
  it('should read each fragment once when measuring depth', () => {
    const { doc, reads } = countingFragmentReads(fanOut(6));
    assert.equal(measureDepth(doc, getOperationAST(doc)!), 1);
    assert.ok(reads() <= 7, `fragments read ${reads()} times for 7 fragments`);
  });
  it('should read each fragment once when measuring complexity, and count the expanded cost', () => {
    const { doc, reads } = countingFragmentReads(fanOut(6));
    assert.equal(measureComplexity(schema, doc, getOperationAST(doc)!), 10 ** 6);
    assert.ok(reads() <= 7, `fragments read ${reads()} times for 7 fragments`);
  });
  it('should share fragment measures between the operations of one document', () => {
    const query = fanOut(6).replace('{ ...F6 }', 'query A { ...F6 } query B { ...F6 } query C { ...F5 }');
    const { doc, reads } = countingFragmentReads(query);
    const rules = limitRules({ introspection_enabled: true, depth_limit: 5, complexity_limit: 100 }, {});
    const errs = validate(schema, doc, rules);
    assert.deepEqual(errs.map((e) => e.extensions.complexity), [10 ** 6, 10 ** 6, 10 ** 5]);
    // At most five walks over 7 fragments, however many operations spread them: graphql-js's visitor,
    // depth, complexity, and for each limit rule the check whether an over-limit operation is introspection.
    assert.ok(reads() <= 5 * 7, `fragments read ${reads()} times`);
  });
  it('should refuse a fan-out of 10^40 fields with a saturated complexity, not accept it', () => {
    const errs = errors(fanOut(40), { complexity_limit: 1000 });
    assert.deepEqual(errs.map((e) => e.extensions), [{ code: 'COMPLEXITY_LIMIT_EXCEEDED', complexity: MAX_MEASURE, limit: 1000 }]);
  });
  it('should multiply list arguments inside fanned-out fragments', () => {
    const query = '{ ...F2 } fragment F0 on Query { users(first: 3) { id } } fragment F1 on Query { ...F0 ...F0 } fragment F2 on Query { ...F1 ...F1 }';
    assert.equal(complexity(query), 4 * 4);
  });
});

describe('when an operation selects only introspection (introspection enabled)', () => {
  const standard = getIntrospectionQuery({ descriptions: true, schemaDescription: true, inputValueDeprecation: true, specifiedByUrl: true, directiveIsRepeatable: true });
  it('should accept the standard introspection query (depth 15) under a smaller route limit', () => {
    assert.equal(depth(standard), 15);
    assert.deepEqual(errors(standard, { depth_limit: 8, complexity_limit: 100 }), []);
  });
  it(`should still refuse one deeper than INTROSPECTION_DEPTH_LIMIT (${INTROSPECTION_DEPTH_LIMIT})`, () => {
    const deep = `{ __type(name: "User") { ${'ofType { '.repeat(INTROSPECTION_DEPTH_LIMIT)}name${' }'.repeat(INTROSPECTION_DEPTH_LIMIT)} } }`;
    assert.deepEqual(errors(deep, { depth_limit: 8 }).map((e) => e.extensions), [{ code: 'DEPTH_LIMIT_EXCEEDED', depth: INTROSPECTION_DEPTH_LIMIT + 2, limit: INTROSPECTION_DEPTH_LIMIT }]);
  });
  it(`should refuse an alias flood over INTROSPECTION_COMPLEXITY_LIMIT (${INTROSPECTION_COMPLEXITY_LIMIT})`, () => {
    const flood = `{ ${Array.from({ length: 400 }, (_, i) => `a${i}: __schema { queryType { name } }`).join(' ')} }`;
    assert.deepEqual(errors(flood, { complexity_limit: 500 }).map((e) => e.extensions), [{ code: 'COMPLEXITY_LIMIT_EXCEEDED', complexity: 1200, limit: INTROSPECTION_COMPLEXITY_LIMIT }]);
  });
  it('should recognise introspection behind fragments', () => {
    assert.deepEqual(errors('{ ...I } fragment I on Query { __schema { types { ...T } } } fragment T on __Type { name ofType { ofType { ofType { name } } } }', { depth_limit: 3 }), []);
  });
  it('should measure an operation that also selects data against the route\'s own limits', () => {
    const mixed = `{ me { id } __type(name: "User") { ${'ofType { '.repeat(5)}name${' }'.repeat(5)} } }`;
    assert.deepEqual(errors(mixed, { depth_limit: 3 }).map((e) => e.extensions), [{ code: 'DEPTH_LIMIT_EXCEEDED', depth: 7, limit: 3 }]);
  });
  it('should keep a route limit above the introspection bound', () => {
    const deep = `{ __type(name: "User") { ${'ofType { '.repeat(25)}name${' }'.repeat(25)} } }`;
    assert.deepEqual(errors(deep, { depth_limit: 30 }), []);
  });
});
