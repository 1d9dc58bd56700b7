import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jsonSize, NOT_SERIALISABLE } from './json-size.js';

describe('when the JSON size of a value is counted', () => {
  it('should give JSON.stringify\'s length for plain values', () => {
    for (const v of [null, true, false, 12.5, 'abc', [], {}, [1, 'a', null], { a: 1, b: [true, { c: 'x' }] }, { u: undefined, f: () => 1, d: new Date(0) }]) {
      assert.equal(jsonSize(v, 1e9), JSON.stringify(v).length, JSON.stringify(v));
    }
  });
  it('should stop past the limit without walking the rest', () => {
    const huge = Array.from({ length: 1000 }, () => 'x'.repeat(1000));
    const size = jsonSize(huge, 5000);
    assert.ok(size > 5000 && size < 8000, String(size));
  });
  it('should report a cycle and a BigInt as not serialisable', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    assert.equal(jsonSize(a, 1e9), NOT_SERIALISABLE);
    assert.equal(jsonSize({ n: 1n }, 1e9), NOT_SERIALISABLE);
  });
  it('should count a value shared twice (not a cycle) twice', () => {
    const shared = { x: 1 };
    assert.equal(jsonSize([shared, shared], 1e9), JSON.stringify([shared, shared]).length);
  });
});
