import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldPathSegments, paramsSchemaFromConstraints, wordedKeyword } from './jsonrpc-constraints.js';
import { casesOf, run } from './testkit.js';

const item = (params: unknown, data: unknown) => ({ name: 'x', method: 'user.create', params, expectedSuccess: false, expectedError: { code: '-32602', message: 'Invalid params', data } });

describe('JSON-RPC validation items as params schemas', () => {
  describe('when an item states the constraint its params break', () => {
    it('should write each JSON Schema keyword with the bound its details state', () => {
      assert.deepEqual(paramsSchemaFromConstraints({ fieldPath: 'name', constraint: 'minLength', value: 'A', details: 'String length must be at least 2' }),
        { type: 'object', properties: { name: { minLength: 2 } } });
      assert.deepEqual(paramsSchemaFromConstraints({ fieldPath: 'tags[1]', constraint: 'type', value: 42, details: 'Expected type string, got integer' }),
        { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' } } } });
      assert.deepEqual(paramsSchemaFromConstraints({ fieldPath: 'user.email', constraint: 'format', details: 'Invalid email format' }),
        { type: 'object', properties: { user: { type: 'object', properties: { email: { format: 'email' } } } } });
      assert.deepEqual(paramsSchemaFromConstraints({ fieldPath: 'user.name', constraint: 'required', details: 'Missing required field: name' }),
        { type: 'object', properties: { user: { type: 'object', required: ['name'] } } });
      assert.deepEqual(paramsSchemaFromConstraints({ fieldPath: 'role', constraint: 'enum', details: 'Role must be one of: user, admin' }),
        { type: 'object', properties: { role: { enum: ['user', 'admin'] } } });
    });

    it('should join the statements listed under errors', () => {
      const schema = paramsSchemaFromConstraints({ errors: [
        { fieldPath: 'age', constraint: 'maximum', details: 'Value must be at most 150' },
        { fieldPath: 'tags', constraint: 'minItems', details: 'Array must contain at least 1 item' },
      ] });
      assert.deepEqual(schema, { type: 'object', properties: { age: { maximum: 150 }, tags: { minItems: 1 } } });
    });

    it('should state nothing for data in another shape or without a bound', () => {
      assert.equal(paramsSchemaFromConstraints({ where: 'name', why: 'Required field is missing' }), undefined);
      assert.equal(paramsSchemaFromConstraints({ field: 'zip', reason: 'Must be 5 digits' }, { zip: 123 }), undefined);
      assert.equal(paramsSchemaFromConstraints({ fieldPath: 'name', constraint: 'minLength', details: 'too short' }), undefined);
      assert.equal(paramsSchemaFromConstraints({ fieldPath: 'x', constraint: 'format', details: 'Invalid shoe-size format' }), undefined);
      assert.equal(paramsSchemaFromConstraints('Invalid params'), undefined);
    });

    it('should read field paths with array indexes', () => {
      assert.deepEqual(fieldPathSegments('a.b[2][0].c'), ['a', 'b', 2, 0, 'c']);
      assert.deepEqual(fieldPathSegments('bad[x]'), []);
    });
  });

  describe('when a method document words the constraint without its keyword', () => {
    it('should read the keyword from the words, by the value the call sends', () => {
      const cases: Array<[string, unknown, unknown]> = [
        ['Required field is missing', 'x', 'required'],
        ['Expected object, got string', 'x', ['type', 'object']],
        ['Expected string, got null', null, ['type', 'string']],
        ['Invalid email format', 'x', ['format', 'email']],
        ['Invalid UUID format', 'x', ['format', 'uuid']],
        ['Password must be at least 8 characters', 'short', ['minLength', 8]],
        ['Name must not exceed 100 characters', 'x', ['maxLength', 100]],
        ['Must be less than 150', 200, ['exclusiveMaximum', 150]],
        ['Must be at most 150', 200, ['maximum', 150]],
        ['Must not be empty', '', ['minLength', 1]],
        ['Must not be empty', [], ['minItems', 1]],
        ['Must be non-negative', -5, ['minimum', 0]],
        ['Must be positive', -5, ['exclusiveMinimum', 0]],
        ['Role must be one of: user, admin', 'root', ['enum', ['user', 'admin']]],
        ['Must be 5 digits', '123', ['pattern', '^[0-9]{5}$']],
        ['Must be 5 digits', 123, undefined],
        ['Must be a valid email address', 'x', ['format', 'email']],
        ['Age must be an integer', 'x', ['type', 'integer']],
        ['String length must be between 3 and 50 characters', 'a', ['minLength', 3]],
        ['String length must be between 3 and 50 characters', 'a'.repeat(51), ['maxLength', 50]],
        ['Value must be between 1 and 10', 11, ['maximum', 10]],
        ['Username too short (minimum 3)', 'ab', ['minLength', 3]],
        ['Invalid format', 'x', undefined],
        ['Must be valid', 'x', undefined],
      ];
      for (const [words, value, want] of cases) assert.deepEqual(wordedKeyword(words, value), want, words);
      assert.deepEqual(wordedKeyword('Value exceeds maximum', 10000, { max_value: 1000 }), ['maximum', 1000]);
      assert.deepEqual(wordedKeyword('Type mismatch', 'thirty', { expected_type: 'integer' }), ['type', 'integer']);
    });

    it('should read fields from lists and from messages by field', () => {
      assert.deepEqual(paramsSchemaFromConstraints({ field: 'userData.password', reason: 'Password must be at least 8 characters' }, { userData: { password: 'short' } }),
        { type: 'object', properties: { userData: { type: 'object', properties: { password: { minLength: 8 } } } } });
      assert.deepEqual(paramsSchemaFromConstraints({ errors: [{ field: 'email', message: 'Required field missing' }] }, {}), { type: 'object', required: ['email'] });
      assert.deepEqual(paramsSchemaFromConstraints({ errors: { items: [{ index: 0, quantity: 'Must be positive' }], shipping: { country: 'Required field missing' } } }, {}),
        { type: 'object', properties: { items: { type: 'array', items: { type: 'object', properties: { quantity: { exclusiveMinimum: 0 } } } }, shipping: { type: 'object', required: ['country'] } } });
    });

    it('should give a method document\'s -32602 error case a schema keel refuses its params by', async () => {
      const doc = { name: 'edge', method: 'edge', error_cases: [{ name: 'short', params: { jsonrpc: '2.0', method: 'user.create', params: { userData: { password: 'short' } }, id: 7 }, error: { code: -32602, message: 'Invalid params', data: { field: 'userData.password', reason: 'Password must be at least 8 characters' } } }] };
      const [c] = casesOf(doc, 'jsonrpc');
      const r = await run(c!);
      assert.equal(r.status, 'passed', JSON.stringify(r.mismatches ?? r.error));
    });
  });

  describe('when a case expects -32603 Internal error', () => {
    it('should make the handler fail and leave the error to keel, which sends no internals', async () => {
      const doc = { e: { request: { jsonrpc: '2.0', method: 'getUser', params: { id: 1 }, id: 10 }, expected_response: { jsonrpc: '2.0', error: { code: -32603, message: 'Internal error', data: { error: 'Database connection failed' } }, id: 10 } } };
      const [c] = casesOf(doc, 'jsonrpc');
      const { protocolServerSpec } = await import('./index.js');
      assert.deepEqual((protocolServerSpec(c!) as { methods: Array<{ answers: unknown[] }> }).methods[0]!.answers, [{ params: { id: 1 }, fails: true }]);
      const r = await run(c!);
      assert.equal(r.status, 'passed', JSON.stringify(r.mismatches ?? r.error));
      assert.deepEqual((r.actual?.body as { body: { error: unknown } }).body.error, { code: -32603, message: 'Internal error' });
    });
  });

  describe('when the item is played against keel', () => {
    it('should get -32602 from keel\'s params validation, and a result for params that meet the constraint', async () => {
      const [invalid] = casesOf(item({ name: 'A' }, { fieldPath: 'name', constraint: 'minLength', value: 'A', details: 'String length must be at least 2' }), 'jsonrpc');
      const r = await run(invalid!);
      assert.equal(r.status, 'passed', JSON.stringify(r.mismatches ?? r.error));
      // The same call served by a case that declares no constraint: keel has nothing to refuse.
      const [valid] = casesOf({ name: 'ok', method: 'user.create', params: { name: 'A' }, expectedSuccess: true }, 'jsonrpc');
      assert.deepEqual((await run(invalid!, valid!)).mismatches.map((m) => m.what), ['body $.error']);
    });

    it('should tell the server the schema, never the error', async () => {
      const { protocolServerSpec } = await import('./index.js');
      const [c] = casesOf(item({ age: 200 }, { fieldPath: 'age', constraint: 'maximum', value: 200, details: 'Value must be at most 150' }), 'jsonrpc');
      const server = protocolServerSpec(c!) as { methods: Array<{ params_schema?: unknown; answers: unknown[] }> };
      assert.deepEqual(server.methods[0]!.params_schema, { type: 'object', properties: { age: { maximum: 150 } } });
      assert.deepEqual(server.methods[0]!.answers, []);
    });
  });
});
