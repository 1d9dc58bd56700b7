import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import request from 'supertest';
import { builtinSchema } from './builtin-schemas.js';
import { createGraphqlHttpHandler, type GraphqlHttpOptions } from './http.js';

function server(options: GraphqlHttpOptions = {}) {
  const handler = createGraphqlHttpHandler(builtinSchema('query_mutation'), options);
  return createServer((req, res) => void handler(req, res));
}
const post = (srv: ReturnType<typeof server>, body: unknown) => request(srv).post('/graphql').set('Content-Type', 'application/json').send(JSON.stringify(body));

describe('batched operations', () => {
  describe('when the route takes batches', () => {
    it('should answer each operation in order, each as if sent alone', async () => {
      const res = await post(server({ batching: true }), [{ query: '{ hello(name: "a") }' }, { query: '{ nope }' }, { query: 'query ($m: String!) { echo(message: $m) }', variables: { m: 'hi' } }]);
      assert.equal(res.status, 200);
      assert.match(res.headers['content-type']!, /^application\/json/);
      assert.equal(res.body.length, 3);
      assert.deepEqual(res.body[0], { data: { hello: 'Hello, a!' } });
      assert.match(res.body[1].errors[0].message, /Cannot query field "nope"/);
      assert.deepEqual(res.body[2], { data: { echo: 'hi' } });
    });

    it('should apply the route\'s limits to each operation', async () => {
      const res = await post(server({ batching: true, limits: { depth_limit: 1 } }), [{ query: '{ hello }' }, { query: '{ books { author { name } } }' }]);
      assert.deepEqual(res.body[0], { data: { hello: 'Hello, World!' } });
      assert.equal(res.body[1].errors[0].extensions.code, 'DEPTH_LIMIT_EXCEEDED');
    });

    it('should refuse an empty batch, one over max_operations and items that are not objects (400 problems)', async () => {
      const srv = server({ batching: { max_operations: 2 } });
      for (const [body, detail] of [[[], /at least one/], [[{ query: '{ hello }' }, { query: '{ hello }' }, { query: '{ hello }' }], /at most 2 operations \(it holds 3\)/], [[{ query: '{ hello }' }, 'x'], /must be a JSON object/]] as const) {
        const res = await post(srv, body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.match(res.headers['content-type']!, /problem\+json/);
        assert.match(res.body.detail, detail);
      }
    });

    it('should serve a single operation as before', async () => {
      assert.deepEqual((await post(server({ batching: true }), { query: '{ hello }' })).body, { data: { hello: 'Hello, World!' } });
    });
  });

  describe('when the route does not take batches (the default)', () => {
    it('should answer an array body with 400, one operation per request', async () => {
      const res = await post(server(), [{ query: '{ hello }' }]);
      assert.equal(res.status, 400);
      assert.equal(Array.isArray(res.body), false);
    });
  });
});
