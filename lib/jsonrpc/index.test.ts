import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { ConfigError } from '../http/errors.js';
import { JsonRpcError, JsonRpcRegistry, jsonRpcHandler, type JsonRpcHandlerOptions } from './index.js';

async function serve(options: JsonRpcHandlerOptions): Promise<{ url: string; close: () => Promise<void> }> {
  const handler = jsonRpcHandler(options);
  const server: Server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const rpc = (url: string, body: unknown) =>
  request(url).post('/rpc').set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));

describe('JSON-RPC endpoint', () => {
  const notified: unknown[] = [];
  const reported: string[] = [];
  let url: string;
  let close: () => Promise<void>;

  before(async () => {
    const registry = new JsonRpcRegistry({ validateResults: true })
      .register(
        {
          method_name: 'math.add',
          description: 'Add two numbers',
          params_schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'], additionalProperties: false },
          result_schema: { type: 'number' },
          tags: ['math'],
        },
        ({ a, b }: { a: number; b: number }) => a + b,
      )
      .register({ methodName: 'math.sum', paramsSchema: { type: 'array', items: { type: 'number' } } }, (xs: number[]) => xs.reduce((s, x) => s + x, 0))
      .register(
        { method_name: 'user.create', params_schema: { type: 'object', properties: { email: { type: 'string', format: 'email' }, id: { type: 'string', format: 'uuid' }, name: { type: 'string', minLength: 2 } }, required: ['email'] } },
        (p: unknown) => p,
      )
      .register({ method_name: 'audit.log' }, (p: unknown) => void notified.push(p))
      .register({ method_name: 'user.find', deprecated: true }, () => {
        throw new JsonRpcError(404, 'User not found', { userId: 'x' });
      })
      .register({ method_name: 'crash' }, () => {
        throw new Error('database password is hunter2');
      })
      .register({ method_name: 'bad.result', result_schema: { type: 'string' } }, () => 42)
      .register({ method_name: 'bigint' }, () => 10n)
      .register({ method_name: 'nothing' }, () => undefined)
      .register({ method_name: 'echo.ctx' }, (_p: unknown, ctx) => ({ id: ctx.id ?? 'none', notification: ctx.notification, name: ctx.method.method_name }));
    ({ url, close } = await serve({ registry, config: { max_batch_size: 3 }, maxBodySize: 2048, onHandlerError: (_e, m) => void reported.push(m) }));
  });
  after(() => close());

  describe('when a single call is made', () => {
    it('should answer with the result and the same id', async () => {
      const res = await rpc(url, { jsonrpc: '2.0', method: 'math.add', params: { a: 2, b: 3 }, id: 7 }).expect(200).expect('Content-Type', /application\/json/);
      assert.deepEqual(res.body, { jsonrpc: '2.0', result: 5, id: 7 });
    });
    it('should keep a string id and a null id', async () => {
      assert.equal((await rpc(url, { jsonrpc: '2.0', method: 'math.sum', params: [1, 2], id: 'abc' })).body.id, 'abc');
      assert.deepEqual((await rpc(url, { jsonrpc: '2.0', method: 'math.sum', params: [1, 2], id: null })).body, { jsonrpc: '2.0', result: 3, id: null });
    });
    it('should pass positional params and tell the handler its id', async () => {
      assert.equal((await rpc(url, { jsonrpc: '2.0', method: 'math.sum', params: [1, 2, 3], id: 1 })).body.result, 6);
      assert.deepEqual((await rpc(url, { jsonrpc: '2.0', method: 'echo.ctx', id: 9 })).body.result, { id: 9, notification: false, name: 'echo.ctx' });
    });
    it('should answer null when the handler returns nothing', async () => {
      assert.deepEqual((await rpc(url, { jsonrpc: '2.0', method: 'nothing', id: 1 })).body, { jsonrpc: '2.0', result: null, id: 1 });
    });
  });

  describe('when a notification is sent', () => {
    it('should run the method and answer 204 with no body', async () => {
      const res = await rpc(url, { jsonrpc: '2.0', method: 'audit.log', params: { event: 'x' } }).expect(204);
      assert.equal(res.text, '');
      assert.deepEqual(notified.at(-1), { event: 'x' });
    });
    it('should not report errors of a notification', async () => {
      await rpc(url, { jsonrpc: '2.0', method: 'no.such.method' }).expect(204);
      await rpc(url, { jsonrpc: '2.0', method: 'math.add', params: { a: 'x' } }).expect(204);
    });
  });

  describe('when params do not match params_schema', () => {
    const cases: Array<[string, unknown, string, string]> = [
      ['a missing field', { a: 1 }, 'b', 'Required field is missing'],
      ['a wrong type', { a: 1, b: 'two' }, 'b', 'Expected number, got string'],
      ['a null value', { a: null, b: 1 }, 'a', 'Expected number, got null'],
      ['an unknown field', { a: 1, b: 2, c: 3 }, 'c', 'Unknown field'],
      ['an array instead of an object', [1, 2], '', 'Expected object, got array'],
    ];
    for (const [what, params, field, reason] of cases) {
      it(`should answer -32602 with field and reason for ${what}`, async () => {
        const res = await rpc(url, { jsonrpc: '2.0', method: 'math.add', params, id: 1 }).expect(200);
        assert.equal(res.body.error.code, -32602);
        assert.equal(res.body.error.message, 'Invalid params');
        assert.equal(res.body.error.data.field, field);
        assert.equal(res.body.error.data.reason, reason);
        assert.ok(Array.isArray(res.body.error.data.errors));
      });
    }
    it('should name the format that failed', async () => {
      const email = await rpc(url, { jsonrpc: '2.0', method: 'user.create', params: { email: 'nope' }, id: 1 });
      assert.deepEqual([email.body.error.data.field, email.body.error.data.reason], ['email', 'Invalid email format']);
      const uuid = await rpc(url, { jsonrpc: '2.0', method: 'user.create', params: { email: 'a@b.co', id: 'x' }, id: 1 });
      assert.deepEqual([uuid.body.error.data.field, uuid.body.error.data.reason], ['id', 'Invalid UUID format']);
      const short = await rpc(url, { jsonrpc: '2.0', method: 'user.create', params: { email: 'a@b.co', name: 'x' }, id: 1 });
      assert.deepEqual([short.body.error.data.field, short.body.error.data.reason], ['name', 'Must be at least 2 characters']);
    });
    it('should validate omitted params as an empty object', async () => {
      const res = await rpc(url, { jsonrpc: '2.0', method: 'math.add', id: 1 });
      assert.equal(res.body.error.code, -32602);
      assert.equal(res.body.error.data.field, 'a');
    });
    it('should list every failed check', async () => {
      const res = await rpc(url, { jsonrpc: '2.0', method: 'math.add', params: {}, id: 1 });
      assert.deepEqual(res.body.error.data.errors.map((e: { field: string }) => e.field), ['a', 'b']);
    });
  });

  describe('when the method does not exist', () => {
    for (const method of ['nope', 'Math.Add', ' math.add', '', 'rpc.other']) {
      it(`should answer -32601 for ${JSON.stringify(method)}`, async () => {
        const res = await rpc(url, { jsonrpc: '2.0', method, id: 3 });
        assert.deepEqual(res.body, { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found', data: { method } }, id: 3 });
      });
    }
  });

  describe('when the body is not JSON', () => {
    for (const raw of ['{"jsonrpc": "2.0", "method"', 'This is not JSON at all', '', "{'jsonrpc': '2.0'}", '[1, 2,]']) {
      it(`should answer -32700 with id null for ${JSON.stringify(raw)}`, async () => {
        const res = await rpc(url, raw).expect(200);
        assert.equal(res.body.error.code, -32700);
        assert.equal(res.body.error.message, 'Parse error');
        assert.equal(res.body.id, null);
        assert.equal(typeof res.body.error.data.reason, 'string');
      });
    }
  });

  describe('when the request object is invalid', () => {
    const cases: Array<[string, unknown, string, unknown]> = [
      ['no jsonrpc member', { method: 'math.sum', id: 1 }, "jsonrpc must be '2.0'", null],
      ['jsonrpc 1.0', { jsonrpc: '1.0', method: 'math.sum', id: 1 }, "jsonrpc must be '2.0'", 1],
      ['a numeric jsonrpc', { jsonrpc: 2.0, method: 'math.sum', id: 'a' }, "jsonrpc must be '2.0'", 'a'],
      ['no method', { jsonrpc: '2.0', id: 1 }, 'method must be a string', 1],
      ['a numeric method', { jsonrpc: '2.0', method: 123, id: 1 }, 'method must be a string', 1],
      ['string params', { jsonrpc: '2.0', method: 'math.sum', params: 'x', id: 1 }, 'params must be an object or array', 1],
      ['numeric params', { jsonrpc: '2.0', method: 'math.sum', params: 42, id: 1 }, 'params must be an object or array', 1],
      ['null params', { jsonrpc: '2.0', method: 'math.sum', params: null, id: 1 }, 'params must be an object or array', 1],
      ['an object id', { jsonrpc: '2.0', method: 'math.sum', id: { nested: 1 } }, 'id must be a string, number, or null', null],
      ['no id and no method', { jsonrpc: '2.0' }, 'method must be a string', null],
      ['a bare number', 1, 'a request must be a JSON object', null],
      ['a string', '"hello"', 'a request must be a JSON object', null],
    ];
    for (const [what, body, reason, id] of cases) {
      it(`should answer -32600 with id ${JSON.stringify(id)} for ${what}`, async () => {
        const res = await rpc(url, typeof body === 'string' ? body : JSON.stringify(body)).expect(200);
        assert.deepEqual(res.body, { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request', data: { reason } }, id });
      });
    }
  });

  describe('when a batch is sent', () => {
    it('should answer each call in order, leaving notifications out', async () => {
      const res = await rpc(url, [
        { jsonrpc: '2.0', method: 'math.sum', params: [1], id: 1 },
        { jsonrpc: '2.0', method: 'audit.log', params: { event: 'batch' } },
        { jsonrpc: '2.0', method: 'nope', id: 2 },
      ]).expect(200);
      assert.deepEqual(res.body, [
        { jsonrpc: '2.0', result: 1, id: 1 },
        { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found', data: { method: 'nope' } }, id: 2 },
      ]);
    });
    it('should answer 204 when the batch holds only notifications', async () => {
      await rpc(url, [{ jsonrpc: '2.0', method: 'audit.log' }, { jsonrpc: '2.0', method: 'audit.log' }]).expect(204);
    });
    it('should answer one Invalid Request for an empty batch', async () => {
      const res = await rpc(url, []);
      assert.deepEqual(res.body, { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request', data: { reason: 'a batch must not be empty' } }, id: null });
    });
    it('should answer one Invalid Request per non-object member', async () => {
      const res = await rpc(url, [1, [], [{ jsonrpc: '2.0', method: 'math.sum', id: 1 }]]);
      assert.equal(res.body.length, 3);
      for (const r of res.body) assert.equal(r.error.code, -32600);
    });
    it('should refuse a batch over max_batch_size with one error', async () => {
      const call = { jsonrpc: '2.0', method: 'math.sum', params: [1], id: 1 };
      const res = await rpc(url, [call, call, call, call]);
      assert.equal(Array.isArray(res.body), false);
      assert.equal(res.body.error.code, -32600);
      assert.equal(res.body.error.data.max_batch_size, 3);
    });
  });

  describe('when a handler fails', () => {
    it('should pass a JsonRpcError through with its code, message and data', async () => {
      const res = await rpc(url, { jsonrpc: '2.0', method: 'user.find', id: 1 });
      assert.deepEqual(res.body.error, { code: 404, message: 'User not found', data: { userId: 'x' } });
    });
    it('should answer a bare -32603 for any other error, without its message', async () => {
      const res = await rpc(url, { jsonrpc: '2.0', method: 'crash', id: 1 });
      assert.deepEqual(res.body.error, { code: -32603, message: 'Internal error' });
      assert.doesNotMatch(res.text, /hunter2/);
      assert.ok(reported.includes('crash'));
    });
    it('should answer -32603 with details when the result does not match result_schema', async () => {
      const res = await rpc(url, { jsonrpc: '2.0', method: 'bad.result', id: 1 });
      assert.equal(res.body.error.code, -32603);
      assert.match(res.body.error.data.reason, /result_schema/);
    });
    it('should answer -32603 for a result that cannot be serialised', async () => {
      const res = await rpc(url, [{ jsonrpc: '2.0', method: 'bigint', id: 1 }, { jsonrpc: '2.0', method: 'math.sum', params: [2], id: 2 }]);
      assert.deepEqual(res.body, [{ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: 1 }, { jsonrpc: '2.0', result: 2, id: 2 }]);
    });
  });

  describe('when rpc.discover is called', () => {
    it('should return an OpenRPC 1.3 document of the registered methods', async () => {
      const res = await rpc(url, { jsonrpc: '2.0', method: 'rpc.discover', id: 1 });
      const doc = res.body.result;
      assert.match(doc.openrpc, /^1\.3\./);
      assert.equal(doc.servers[0].url, '/rpc');
      const add = doc.methods.find((m: { name: string }) => m.name === 'math.add');
      assert.deepEqual(add.params.map((p: { name: string; required: boolean }) => [p.name, p.required]), [['a', true], ['b', true]]);
      assert.deepEqual(add.tags, [{ name: 'math' }]);
      assert.deepEqual(add.result.schema, { type: 'number' });
      assert.equal(add.paramStructure, 'by-name');
      assert.equal(doc.methods.find((m: { name: string }) => m.name === 'user.find').deprecated, true);
      assert.equal(add.deprecated, undefined);
    });
  });

  describe('when the HTTP request is wrong', () => {
    it('should answer 415 problem+json for a non-JSON content type', async () => {
      const res = await request(url).post('/rpc').set('Content-Type', 'text/plain').send('{}').expect(415).expect('Content-Type', /application\/problem\+json/);
      assert.equal(res.body.status, 415);
    });
    it('should answer 413 problem+json for a body over the cap', async () => {
      const res = await rpc(url, { jsonrpc: '2.0', method: 'audit.log', params: { pad: 'x'.repeat(4096) } }).expect(413);
      assert.equal(res.body.status, 413);
    });
  });
});

describe('when batches are disabled', () => {
  it('should answer one Invalid Request error for any batch', async () => {
    const registry = new JsonRpcRegistry().register({ method_name: 'ping' }, () => 'pong');
    const { url, close } = await serve({ registry, config: { enableBatch: false } });
    try {
      const res = await rpc(url, [{ jsonrpc: '2.0', method: 'ping', id: 1 }]);
      assert.deepEqual(res.body, { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request', data: { reason: 'batch requests are disabled on this endpoint' } }, id: null });
      assert.equal((await rpc(url, { jsonrpc: '2.0', method: 'ping', id: 1 })).body.result, 'pong');
    } finally {
      await close();
    }
  });
});

describe('when results are not validated (production)', () => {
  it('should send the handler result as is', async () => {
    const registry = new JsonRpcRegistry({ validateResults: false }).register({ method_name: 'n', result_schema: { type: 'string' } }, () => 1);
    const { url, close } = await serve({ registry });
    try {
      assert.equal((await rpc(url, { jsonrpc: '2.0', method: 'n', id: 1 })).body.result, 1);
    } finally {
      await close();
    }
  });
});

describe('when methods are registered with bad metadata', () => {
  const ok = () => null;
  const cases: Array<[string, () => void]> = [
    ['a missing method_name', () => new JsonRpcRegistry().register({} as never, ok)],
    ['an empty method_name', () => new JsonRpcRegistry().register({ method_name: '' }, ok)],
    ['a reserved rpc. name', () => new JsonRpcRegistry().register({ method_name: 'rpc.discover' }, ok)],
    ['a duplicate name', () => new JsonRpcRegistry().register({ method_name: 'a' }, ok).register({ method_name: 'a' }, ok)],
    ['a handler that is not a function', () => new JsonRpcRegistry().register({ method_name: 'a' }, 'nope' as never)],
    ['a params_schema that does not compile', () => new JsonRpcRegistry().register({ method_name: 'a', params_schema: { type: 'nonsense' } }, ok)],
    ['a result_schema that does not compile', () => new JsonRpcRegistry({ validateResults: false }).register({ method_name: 'a', result_schema: { minimum: 'x' } }, ok)],
    ['a params_schema that is a string', () => new JsonRpcRegistry().register({ method_name: 'a', params_schema: 'object' }, ok)],
    ['an unknown key', () => new JsonRpcRegistry().register({ method_name: 'a', paramSchema: {} } as never, ok)],
  ];
  for (const [what, fn] of cases) {
    it(`should throw ConfigError for ${what}`, () => assert.throws(fn, ConfigError));
  }
});

describe('when the endpoint config is invalid', () => {
  for (const [what, config] of [
    ['max_batch_size 0', { max_batch_size: 0 }],
    ['an endpoint_path without a slash', { endpoint_path: 'rpc' }],
    ['a non-boolean enable_batch', { enable_batch: 'yes' }],
  ] as const) {
    it(`should throw ConfigError at build time for ${what}`, () => {
      assert.throws(() => jsonRpcHandler({ registry: new JsonRpcRegistry(), config: config as never }), ConfigError);
    });
  }
});
