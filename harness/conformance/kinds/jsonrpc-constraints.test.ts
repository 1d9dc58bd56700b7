import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldPathSegments, paramsSchemaFromConstraints } from './jsonrpc-constraints.js';
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
      assert.equal(paramsSchemaFromConstraints({ field: 'name', reason: 'Required field is missing' }), undefined);
      assert.equal(paramsSchemaFromConstraints({ fieldPath: 'name', constraint: 'minLength', details: 'too short' }), undefined);
      assert.equal(paramsSchemaFromConstraints({ fieldPath: 'x', constraint: 'format', details: 'Invalid shoe-size format' }), undefined);
      assert.equal(paramsSchemaFromConstraints('Invalid params'), undefined);
    });

    it('should read field paths with array indexes', () => {
      assert.deepEqual(fieldPathSegments('a.b[2][0].c'), ['a', 'b', 2, 0, 'c']);
      assert.deepEqual(fieldPathSegments('bad[x]'), []);
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
