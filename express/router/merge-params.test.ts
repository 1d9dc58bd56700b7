import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mergeParams } from './params.js';

/** The `router` package's mergeParams (Express 5), with Object.assign: what keel's must equal. */
function reference(params: Record<string, any>, parent: any): Record<string, any> {
  if (typeof parent !== 'object' || !parent) return params;
  const obj = Object.assign({}, parent);
  if (!(0 in params) || !(0 in parent)) return Object.assign(obj, params);
  let i = 0;
  let o = 0;
  while (i in params) i++;
  while (o in parent) o++;
  for (i--; i >= 0; i--) {
    params[i + o] = params[i];
    if (i < o) delete params[i];
  }
  return Object.assign(obj, params);
}

const nullProto = (o: Record<PropertyKey, unknown>) => Object.assign(Object.create(null), o);
const tag = Symbol('tag');

const cases: Array<[string, () => [Record<string, any>, unknown]]> = [
  ['named params over a parent', () => [nullProto({ id: '7' }), nullProto({ version: 'v1' })]],
  ['a child param shadowing the parent one', () => [nullProto({ id: '7' }), nullProto({ id: '1', version: 'v1' })]],
  ['numeric captures appended after the parent ones', () => [nullProto({ 0: 'a', 1: 'b' }), nullProto({ 0: 'x', name: 'n' })]],
  ['integer-like keys first, then names in insertion order', () => [nullProto({ z: '1', 2: 'two', a: '2' }), { b: '3', 1: 'one' }]],
  ['an enumerable symbol copied, a non-enumerable one not', () => {
    const parent: any = { v: '1', [tag]: 'tagged' };
    Object.defineProperty(parent, Symbol('hidden'), { value: 'no', enumerable: false });
    return [nullProto({ id: '2' }), parent];
  }],
  ['a getter on the parent read once, as a value', () => {
    let reads = 0;
    const parent = { get lazy() { reads++; return `read ${reads}`; } };
    return [nullProto({ id: '3' }), parent];
  }],
  ['no parent object', () => [nullProto({ id: '4' }), undefined]],
];

describe('when a router with mergeParams merges a layer\'s params over its parent\'s', () => {
  for (const [name, make] of cases) {
    it(`should give what Object.assign gives: ${name}`, () => {
      const [p1, parent1] = make();
      const [p2, parent2] = make();
      const got = mergeParams(p1, parent1);
      const want = reference(p2, parent2);
      assert.deepStrictEqual(Reflect.ownKeys(got), Reflect.ownKeys(want));
      assert.deepStrictEqual({ ...got }, { ...want });
      assert.equal(got[tag as any], want[tag as any]);
      assert.equal(Object.getPrototypeOf(got), Object.getPrototypeOf(want));
    });
  }
});
