import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchema, parse, type OperationDefinitionNode } from 'graphql';
import { estimateResponseBytes, LEAF_BYTES } from './budget.js';
import { MAX_MEASURE } from './limits.js';

const schema = buildSchema('type Query { hello(name: String): String, n: Int, books(first: Int): [Book] } type Book { title: String }');

function estimate(query: string, variables: Record<string, unknown> = {}): number {
  const document = parse(query);
  return estimateResponseBytes(schema, document, document.definitions.find((d) => d.kind === 'OperationDefinition') as OperationDefinitionNode, variables);
}

describe('when the answer size of a query is estimated', () => {
  it('should count a leaf as its key and LEAF_BYTES', () => {
    assert.equal(estimate('{ n }'), 12 + 'n'.length + 4 + LEAF_BYTES);
  });
  it('should count a string argument at every alias that echoes it', () => {
    const one = estimate('query($v: String) { a: hello(name: $v) }', { v: 'x'.repeat(1000) });
    const two = estimate('query($v: String) { a: hello(name: $v) b: hello(name: $v) }', { v: 'x'.repeat(1000) });
    assert.ok(one > 1000);
    assert.ok(two - one > 1000, `${one} then ${two}`);
  });
  it('should count a literal argument and a variable default alike', () => {
    assert.equal(estimate('{ hello(name: "abc") }'), estimate('query($v: String = "abc") { hello(name: $v) }'));
  });
  it('should multiply a list field by its first argument', () => {
    const ten = estimate('{ books(first: 10) { title } }');
    const thousand = estimate('{ books(first: 1000) { title } }');
    assert.ok(thousand > 90 * ten, `${ten} then ${thousand}`);
  });
  it('should measure each fragment once, saturating on a fan-out instead of expanding it', () => {
    const parts = ['fragment F0 on Query { hello }'];
    for (let i = 1; i <= 40; i++) parts.push(`fragment F${i} on Query { ${Array(10).fill(`...F${i - 1}`).join(' ')} }`);
    assert.equal(estimate(`{ ...F40 } ${parts.join(' ')}`), MAX_MEASURE);
  });
});

describe('when a cached query is sent again with a larger variable', () => {
  it('should estimate each request with its own variables', async () => {
    const { DocumentCache, isRejected } = await import('./documents.js');
    const cache = new DocumentCache(schema, { introspection_enabled: true, depth_limit: null, complexity_limit: null, max_response_bytes: 10_000 });
    const query = 'query($v: String) { a: hello(name: $v) b: hello(name: $v) }';
    assert.equal(isRejected(cache.prepare(query, { v: 'short' })), false);
    const refused = cache.prepare(query, { v: 'x'.repeat(6000) });
    assert.ok(isRejected(refused));
    assert.equal(refused[0]!.extensions.code, 'RESPONSE_SIZE_LIMIT_EXCEEDED');
    assert.equal(isRejected(cache.prepare(query, { v: 'short' })), false);
    assert.equal(cache.size, 1);
  });
});
