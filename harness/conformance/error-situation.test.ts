import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { situationOf } from './error-situation.js';
import type { CaseHandler, CaseRequest, ConformanceCase } from './types.js';

/** A case of our own: a handler, a request, and a 422 whose items the test asks about. */
const mk = (handler: Partial<CaseHandler>, request: Partial<CaseRequest>): ConformanceCase => ({
  id: 'x',
  category: 'c',
  name: 'x',
  source: 'x.json',
  handler: { route: '/x', method: 'GET', ...handler },
  request: { method: 'GET', path: '/x', ...request },
  expected: { status_code: 422 },
  extra: {},
});

describe('situationOf', () => {
  describe('when a parameter is sent as text', () => {
    const c = (value: string, schema: Record<string, unknown>) => mk({ parameters: { query: { n: schema } } }, { path: `/x?n=${value}` });
    it('should convert it to the declared type before checking the constraints', () => {
      assert.equal(situationOf(c('0', { type: 'integer', exclusiveMinimum: 0 }), ['query', 'n']), 'exclusiveMinimum');
      assert.equal(situationOf(c('4.5', { type: 'integer', exclusiveMinimum: 0 }), ['query', 'n']), 'type:integer');
      assert.equal(situationOf(c('ab', { type: 'string', minLength: 3, maxLength: 9 }), ['query', 'n']), 'minLength');
      assert.equal(situationOf(c('yes', { type: 'boolean' }), ['query', 'n']), 'type:boolean');
      assert.equal(situationOf(c('nope', { type: 'string', format: 'email' }), ['query', 'n']), 'format:email');
    });
    it('should say required for a value not sent, and nothing when no keyword or several fail', () => {
      assert.equal(situationOf(mk({ parameters: { query: { n: { type: 'string' } } } }, {}), ['query', 'n']), 'required');
      assert.equal(situationOf(c('abc', { type: 'string', minLength: 1 }), ['query', 'n']), undefined);
      assert.equal(situationOf(c('ab', { type: 'string', minLength: 3, pattern: '^[0-9]+$' }), ['query', 'n']), undefined);
      assert.equal(situationOf(c('ab', { type: 'string' }), ['query', 'other']), undefined, 'no schema at loc: no rule');
    });
    it('should read header names case-insensitively and typed path placeholders', () => {
      assert.equal(situationOf(mk({ parameters: { headers: { 'X-Token': { type: 'string', minLength: 5 } } } }, { headers: { 'x-token': 'ab' } }), ['headers', 'x_token']), 'minLength');
      assert.equal(situationOf(mk({ route: '/items/{id:uuid}' }, { path: '/items/not-a-uuid' }), ['path', 'id']), 'format:uuid');
    });
    it('should read a list parameter, its separator and a list given as name[] in a form body', () => {
      assert.equal(situationOf(mk({ parameters: { query: { ids: { type: 'array', items: { type: 'integer' }, minItems: 2 } } } }, { path: '/x?ids=1' }), ['query', 'ids']), 'minItems');
      assert.equal(situationOf(mk({ parameters: { query: { t: { type: 'array', separator: '|', uniqueItems: true } } } }, { path: '/x?t=a|a' }), ['query', 't']), 'uniqueItems');
      const form = mk({ method: 'POST', body_schema: { type: 'object', properties: { tags: { type: 'array', minItems: 2 } } } }, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'tags[]=one' });
      assert.equal(situationOf(form, ['body', 'tags']), 'minItems');
    });
  });

  describe('when the value is in a JSON body', () => {
    it('should follow properties, items, local $refs and allOf parts to the schema at loc', () => {
      const body_schema = {
        type: 'object',
        definitions: { Price: { type: 'number', minimum: 1 } },
        allOf: [{ properties: { price: { $ref: '#/definitions/Price' } } }],
        properties: { tags: { type: 'array', items: { type: 'string', maxLength: 3 } } },
      };
      const c = mk({ method: 'POST', body_schema }, { method: 'POST', body: { price: 0, tags: ['ok', 'toolong', 7] } });
      assert.equal(situationOf(c, ['body', 'price']), 'minimum');
      assert.equal(situationOf(c, ['body', 'tags', '1']), 'maxLength');
      assert.equal(situationOf(c, ['body', 'tags', 2]), 'type:string');
    });
    it('should tell oneOf matching none from oneOf matching several', () => {
      const body_schema = { oneOf: [{ required: ['a'] }, { required: ['b'] }] };
      assert.equal(situationOf(mk({ body_schema }, { body: { c: 1 } }), ['body']), 'oneOf:none');
      assert.equal(situationOf(mk({ body_schema }, { body: { a: 1, b: 2 } }), ['body']), 'oneOf:several');
    });
  });
});
