import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileCheckedSerializer } from './checked-serializer.js';
import { compileResponseContract } from './serializer.js';

type Schema = Record<string, unknown>;

/** A seeded generator (mulberry32): the same values on every run, so a failure can be replayed. */
function random(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)]!;
  return { next, int, pick };
}
type Random = ReturnType<typeof random>;

/** Pieces of strings, the awkward ones included: quotes, backslashes, control characters, surrogates (paired and lone), U+2028. */
const PIECES = ['a', 'Ada', ' ', 'é', '中', '😀', '"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028', '\ud800', '\udc00', '/', '</script>', 'x'.repeat(50)];
const DATE_TIMES = ['2024-03-01T09:30:00.000Z', '2026-11-30T17:05:12Z', '2026-11-30t17:05:12z', '2024-02-29T23:59:59.123456+05:30', '2026-06-30T23:59:60Z', '2026-11-30 17:05:12Z', '2026-02-30T00:00:00Z', '2026-11-30', 'soon'];

/** One code point each, some of two UTF-16 units (an emoji) or a lone surrogate (one code point to Ajv). */
const POINTS = ['a', 'é', '中', '😀', '"', '\\', '\n', '\ud800', 'Z'];

/** A string of `n` code points. */
function points(r: Random, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += r.pick(POINTS);
  return s;
}

/** Within the schema's number bounds, when it has any. */
function inBounds(schema: Schema, v: number): boolean {
  const { minimum: min, maximum: max, exclusiveMinimum: xmin, exclusiveMaximum: xmax } = schema as Record<string, number | undefined>;
  return !(min !== undefined && v < min) && !(max !== undefined && v > max) && !(xmin !== undefined && v <= xmin) && !(xmax !== undefined && v >= xmax);
}

function text(r: Random): string {
  let s = '';
  for (let i = r.int(4); i > 0; i--) s += r.pick(PIECES);
  return s;
}

/** A valid value of `schema` (plain date-time strings, so the one pass must take it). */
function valid(r: Random, schema: Schema): unknown {
  if (schema.enum) return r.pick((schema.enum as unknown[]).filter((e) => typeof e !== 'number' || inBounds(schema, e)));
  switch (schema.type) {
    case 'string': {
      if (schema.format === 'email') return 'ada@example.com';
      if (schema.minLength !== undefined || schema.maxLength !== undefined) {
        const min = (schema.minLength as number | undefined) ?? 0;
        return points(r, min + r.int(((schema.maxLength as number | undefined) ?? min + 4) - min + 1));
      }
      return schema.format === 'date-time' ? DATE_TIMES[r.int(4)] : schema.format === 'email' ? 'ada@example.com' : text(r);
    }
    case 'integer': return r.pick([0, 1, -7, 4242, 150, 2 ** 53 - 1, 1e21].filter((v) => inBounds(schema, v)));
    case 'number': return r.pick([0, -0, 0.5, 0.25, 1234.5, -1e-7, 1e-7, 1e300].filter((v) => inBounds(schema, v)));
    case 'boolean': return r.next() < 0.5;
    case 'null': return null;
    case 'array': return Array.from({ length: r.pick([0, 1, 3, 130]) }, () => valid(r, schema.items as Schema));
    default: {
      const out: Record<string, unknown> = {};
      const required = (schema.required as string[] | undefined) ?? [];
      for (const [k, sub] of Object.entries(schema.properties as Record<string, Schema>)) {
        if (required.includes(k) || r.next() < 0.7) out[k] = valid(r, sub);
      }
      return out;
    }
  }
}

/** Something a handler might wrongly return instead of a valid member. */
function wrong(r: Random): unknown {
  return r.pick<unknown>(['x', '', '42', 1.5, NaN, Infinity, -Infinity, null, true, {}, [], [1], new Date('2024-03-01T09:30:00Z'),
    new Date(NaN), new Date(Date.UTC(12000, 0, 1)), new Date(Date.UTC(-1, 0, 1)), { toJSON: () => 'x' }, Object.assign(new Date(0), { toJSON: () => 'no' }),
    ...DATE_TIMES, undefined, 2 ** 60, 'pro', 'team ', -1, 0, 1, 2, 151, 0.5, 'a', 'ab', 'abcdef', '😀', '😀😀😀😀😀😀', '\ud800\udc00x']);
}

/** `value` with one member, item or the whole replaced, removed, or an undeclared member added. */
function mutate(r: Random, value: unknown): unknown {
  if (r.next() < 0.15) return wrong(r);
  if (Array.isArray(value)) {
    if (value.length === 0) return [wrong(r)];
    const copy = [...value];
    if (r.next() < 0.1) delete copy[r.int(copy.length)]; // a hole
    else copy[r.int(copy.length)] = mutate(r, copy[r.int(copy.length)]);
    return copy;
  }
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    const roll = r.next();
    if (roll < 0.2) copy.internalNote = 'do not leak';
    else if (roll < 0.35 && keys.length) delete copy[r.pick(keys)];
    else if (keys.length) {
      const k = r.pick(keys);
      copy[k] = mutate(r, copy[k]);
    }
    return copy;
  }
  return wrong(r);
}

const dateTime = { type: 'string', format: 'date-time' };
const SCHEMAS: Record<string, Schema> = {
  account: {
    type: 'object', additionalProperties: false,
    required: ['id', 'login', 'plan', 'active', 'balance', 'created_at'],
    properties: {
      id: { type: 'integer' }, login: { type: 'string' }, email: { type: 'string', format: 'email' },
      plan: { type: 'string', enum: ['free', 'pro', 'team'] }, active: { type: 'boolean' }, balance: { type: 'number' },
      created_at: dateTime, updated_at: dateTime, deleted: { type: 'null' }, level: { type: 'integer', enum: [1, 2, 3] },
      mood: { type: 'string', enum: ['"quoted"', 'plain'] },
    },
  },
  nested: {
    type: 'object',
    required: ['items'],
    properties: {
      note: { type: 'string', description: 'annotations change nothing' },
      owner: { type: 'object', required: ['id'], properties: { id: { type: 'integer' }, name: { type: 'string' } } },
      items: { type: 'array', items: { type: 'object', additionalProperties: false, required: ['sku'], properties: { sku: { type: 'string' }, qty: { type: 'integer' }, at: dateTime } } },
      tags: { type: 'array', items: { type: 'string' } },
      grid: { type: 'array', items: { type: 'array', items: { type: 'number' } } },
    },
  },
  bounded: {
    type: 'object', additionalProperties: false, required: ['age', 'name'],
    properties: {
      age: { type: 'integer', minimum: 0, maximum: 150 },
      score: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
      name: { type: 'string', minLength: 2, maxLength: 5 },
      initial: { type: 'string', minLength: 1, maxLength: 1 },
      bio: { type: 'string', maxLength: 3 },
      level: { type: 'integer', enum: [1, 2, 3], minimum: 2 },
      email: { type: 'string', format: 'email', minLength: 5 },
    },
  },
  list: { type: 'array', items: { type: 'object', required: ['id'], properties: { id: { type: 'integer' }, when: dateTime } } },
  scalar: { type: 'string', format: 'date-time' },
};

describe('when a response schema is one the one-pass check-and-write takes', () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`should write only what the check accepts, byte for byte as fast-json-stringify does (${name})`, () => {
      const contract = compileResponseContract(schema);
      assert.ok(contract.checked, 'the schema is in the supported set');
      const r = random(name.length * 7919);
      let written = 0;
      let declined = 0;
      for (let i = 0; i < 3000; i++) {
        const good = valid(r, schema);
        const value = i % 3 === 0 ? good : mutate(r, good);
        const out: string | undefined = contract.checked(value);
        if (i % 3 === 0) assert.notEqual(out, undefined, `a plainly valid value is taken: ${JSON.stringify(value)}`);
        if (out === undefined) {
          declined++;
          continue;
        }
        written++;
        const shown = (() => { try { return JSON.stringify(value).slice(0, 300); } catch { return String(value); } })();
        assert.equal(contract.check(value), null, `written although the check refuses it: ${shown}`);
        const expected = contract.serialize(value);
        if (out !== expected) assert.fail(`not fast-json-stringify's bytes for ${shown}:\n${out.slice(0, 300)}\n${expected.slice(0, 300)}`);
        JSON.parse(out);
      }
      assert.ok(written >= 1000 && declined >= 300, `both paths exercised: ${written} written, ${declined} declined`);
    });
  }

  it('should answer a Date for a date-time member as its ISO text, and decline one it cannot vouch for', () => {
    const contract = compileResponseContract({ type: 'object', required: ['at'], properties: { at: dateTime } });
    assert.equal(contract.checked!({ at: new Date(Date.UTC(2024, 2, 1, 9, 30)) }), '{"at":"2024-03-01T09:30:00.000Z"}');
    assert.equal(contract.checked!({ at: new Date(NaN) }), undefined);
    assert.equal(contract.checked!({ at: new Date(Date.UTC(10000, 0, 1)) }), undefined);
    assert.equal(contract.checked!({ at: '2026-11-30 17:05:12Z' }), undefined, 'a space separator goes to the full check');
  });

  it('should not be compiled for a route that only serialises (onePass: false, as strip mode asks)', () => {
    const contract = compileResponseContract(SCHEMAS.account!, { onePass: false });
    assert.equal(contract.checked, undefined);
    assert.ok(contract.serialize({ id: 1, login: 'a', plan: 'pro', active: true, balance: 1, created_at: '2024-03-01T09:30:00Z' }).startsWith('{"id":1'));
  });

  it('should drop undeclared members and write the required ones first, each group in the schema\'s order', () => {
    const contract = compileResponseContract(SCHEMAS.account!);
    const row = { internalNote: 'do not leak', created_at: '2024-03-01T09:30:00.000Z', balance: 1.5, active: true, plan: 'pro', login: 'ada', id: 1 };
    // Required members first, as fast-json-stringify writes them.
    assert.equal(contract.checked!({ ...row, email: 'ada@example.com', level: 2 }), '{"id":1,"login":"ada","plan":"pro","active":true,"balance":1.5,"created_at":"2024-03-01T09:30:00.000Z","email":"ada@example.com","level":2}');
  });
});

describe('when a response schema uses anything the one pass does not take', () => {
  const unsupported: Record<string, Schema> = {
    'a free-form object': { type: 'object' },
    'additionalProperties: true': { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true },
    'a length bound on a date-time': { type: 'object', properties: { a: { type: 'string', format: 'date-time', maxLength: 30 } } },
    'a pattern': { type: 'object', properties: { a: { type: 'string', pattern: '^a' } } },
    multipleOf: { type: 'object', properties: { a: { type: 'number', multipleOf: 0.01 } } },
    "draft-04's boolean exclusiveMinimum": { type: 'object', properties: { a: { type: 'integer', minimum: 0, exclusiveMinimum: true } } },
    'a $ref': { type: 'object', properties: { a: { $ref: '#/definitions/x' } }, definitions: { x: { type: 'string' } } },
    anyOf: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
    'a type list': { type: ['string', 'null'] },
    nullable: { type: 'object', properties: { a: { type: 'string', nullable: true } } },
    'a default': { type: 'object', properties: { a: { type: 'string', default: 'x' } } },
    const: { type: 'object', properties: { a: { const: 1 } } },
    'a member without a type': { type: 'object', properties: { a: {} } },
    'required but not declared': { type: 'object', required: ['b'], properties: { a: { type: 'string' } } },
    'a tuple': { type: 'array', items: [{ type: 'string' }] },
    'an unknown format': { type: 'string', format: 'no-such-format' },
    'an integer enum with a fraction': { type: 'integer', enum: [1, 1.5] },
  };
  for (const [name, schema] of Object.entries(unsupported)) {
    it(`should leave ${name} to the check and fast-json-stringify`, () => {
      assert.equal(compileCheckedSerializer(schema, {}), undefined);
    });
  }
});
