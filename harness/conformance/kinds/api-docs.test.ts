import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { casesOf, run } from './testkit.js';

const openapi = {
  openapi: '3.1.0', info: { title: 'Pets', version: '1' },
  paths: { '/pets/{petId}': { parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'integer' } }], get: { parameters: [{ name: 'full', in: 'query', schema: { type: 'boolean' } }], responses: { 200: { description: 'ok' } } }, put: { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } }, responses: { 200: { description: 'ok' } } } } },
  components: { schemas: { Pet: { type: 'object', properties: { name: { type: 'string' } } } } },
};
const asyncapi = {
  asyncapi: '3.0.0', info: { title: 'Orders', version: '2.1.0' },
  channels: { orders: { address: 'orders', messages: { NewOrder: { payload: { type: 'object', required: ['id'], properties: { id: { type: 'string' } } }, examples: [{ payload: { id: 'o1' } }] } } } },
  operations: { onOrder: { action: 'receive', channel: { $ref: '#/channels/orders' } } },
};
const openrpc = {
  openrpc: '1.3.2', info: { title: 'Calc', version: '1' },
  methods: [{ name: 'add', params: [{ name: 'a', required: true, schema: { type: 'number' } }, { name: 'b', required: true, schema: { type: 'number' } }], result: { name: 'sum', schema: { type: 'number' } }, examples: [{ name: 'small', params: [{ name: 'a', value: 2 }, { name: 'b', value: 3 }], result: { name: 'sum', value: 5 } }] }],
};

describe('API description kind', () => {
  describe('when each format is checked against keel', () => {
    for (const [name, doc] of [['OpenAPI (generated /openapi.json)', openapi], ['AsyncAPI (parse and validate endpoints)', asyncapi], ['OpenRPC (examples and rpc.discover)', openrpc]] as const) {
      it(`should pass ${name}`, async () => {
        const r = await run(casesOf(doc)[0]!);
        assert.equal(r.status, 'passed', JSON.stringify(r.mismatches ?? r.error));
      });
    }

    it('should pass an AsyncAPI fixture case whose payload must be refused', async () => {
      const [c] = casesOf({ id: 'x', asyncapi: { spec: asyncapi, validation: { channel: 'orders', message: 'NewOrder', payload: {} }, expected: { valid: false, errors: ['id is required'] } } });
      const r = await run(c!);
      assert.equal(r.status, 'passed', JSON.stringify(r.mismatches ?? r.error));
    });
  });

  describe('when the server serves another document', () => {
    it('should fail on what differs', async () => {
      const [pets] = casesOf(openapi);
      const [other] = casesOf({ ...openapi, paths: { '/pets/{petId}': { get: openapi.paths['/pets/{petId}'].get, parameters: openapi.paths['/pets/{petId}'].parameters } } });
      assert.deepEqual((await run(pets!, other!)).mismatches.map((m) => m.what), ['PUT /pets/{petId}']);
      const [calc] = casesOf(openrpc);
      const [wrong] = casesOf({ ...openrpc, methods: [{ ...openrpc.methods[0], examples: [{ ...openrpc.methods[0]!.examples[0], result: { name: 'sum', value: 6 } }] }] });
      assert.equal((await run(calc!, wrong!)).status, 'failed');
    });
  });
});
