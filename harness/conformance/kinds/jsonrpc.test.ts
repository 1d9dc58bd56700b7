import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildManifest } from '../manifest.js';
import { casesOf, run } from './testkit.js';

const method = {
  name: 'user_get', method: 'user.get', endpoint: '/rpc',
  params_schema: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 2 } } },
  result_schema: { type: 'object' },
  examples: [{ name: 'found', params: { id: 'u1' }, result: { id: 'u1', name: 'Ada' } }],
  error_cases: [
    { name: 'not_found', params: { id: 'zz' }, error: { code: 404, message: 'User not found', data: { id: 'zz' } } },
    { name: 'too_short', params: { id: 'u' }, error: { code: -32602, message: 'Invalid params' } },
    { name: 'no_version', params: { method: 'user.get', params: { id: 'u1' }, id: 7 }, error: { code: -32600, message: 'Invalid Request' } },
  ],
};

describe('JSON-RPC kind', () => {
  describe('when a method document is run against keel\'s JSON-RPC endpoint', () => {
    it('should make one case per example and error case, and pass each', async () => {
      const cases = casesOf(method, 'jsonrpc');
      assert.deepEqual(cases.map((c) => c.id), ['jsonrpc/doc/found', 'jsonrpc/doc/not_found', 'jsonrpc/doc/too_short', 'jsonrpc/doc/no_version']);
      for (const c of cases) {
        const r = await run(c);
        assert.equal(r.status, 'passed', `${c.id}: ${JSON.stringify(r.mismatches ?? r.error)}`);
      }
    });

    it('should run a batch and match its answers by id', async () => {
      const [c] = casesOf({ name: 'batch', method: 'batch', examples: [{ name: 'two', request: [{ jsonrpc: '2.0', method: 'a', params: {}, id: 1 }, { jsonrpc: '2.0', method: 'nope', id: 2 }, { jsonrpc: '2.0', method: 'a', params: { n: 1 } }], expected_response: [{ jsonrpc: '2.0', result: 1, id: 1 }, { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 2 }] }] }, 'jsonrpc');
      const r = await run(c!);
      assert.equal(r.status, 'passed', JSON.stringify(r.mismatches ?? r.error));
    });

    it('should fail when the result or the error differs', async () => {
      const [found, notFound] = casesOf(method, 'jsonrpc');
      const other = casesOf({ ...method, examples: [{ name: 'found', params: { id: 'u1' }, result: { id: 'u1', name: 'Bob' } }], error_cases: [] }, 'jsonrpc')[0]!;
      assert.deepEqual((await run(found!, other)).mismatches.map((m) => m.what), ['body $.result']);
      const noApp = casesOf({ ...method, examples: [], error_cases: [{ name: 'x', params: { id: 'u1' }, error: { code: -32602, message: 'Invalid params' } }] }, 'jsonrpc')[0]!;
      assert.deepEqual((await run(notFound!, noApp)).mismatches.map((m) => m.what), ['body $.error']);
    });
  });

  describe('when the manifest carries a JSON-RPC case', () => {
    it('should give methods, schemas and application answers only', () => {
      const m = buildManifest(casesOf(method, 'jsonrpc'));
      const tooShort = m.protocols.find((p) => p.id.endsWith('too_short'))!.server as { methods: Array<{ answers: unknown[] }> };
      assert.deepEqual(tooShort.methods[0]!.answers, [], 'an invalid-params answer is the server\'s, not the handler\'s');
    });
  });
});
