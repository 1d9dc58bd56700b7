import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { JsonRpcError, JsonRpcRegistry, dispatch, dispatchOne, jsonRpcHandler } from './index.js';

const rpc = (url: string, body: unknown) => request(url).post('/rpc').set('Content-Type', 'application/json').send(JSON.stringify(body));

describe('when methods answer asynchronously', () => {
  const finished: string[] = [];
  const reported: string[] = [];
  const registry = new JsonRpcRegistry({ validateResults: true })
    .register({ method_name: 'slow.add', params_schema: { type: 'array', items: { type: 'number' } }, result_schema: { type: 'number' } }, async (xs: number[]) => {
      await sleep(5);
      return xs.reduce((s, x) => s + x, 0);
    })
    .register({ method_name: 'fast.add' }, (xs: number[]) => xs.reduce((s, x) => s + x, 0))
    .register({ method_name: 'slow.missing' }, async () => {
      await sleep(1);
      throw new JsonRpcError(404, 'Not here');
    })
    .register({ method_name: 'slow.crash' }, async () => {
      await sleep(1);
      throw new Error('secret connection string');
    })
    .register({ method_name: 'slow.wrong', result_schema: { type: 'number' } }, async () => 'not a number')
    .register({ method_name: 'slow.log' }, async (p: { tag: string }) => {
      await sleep(5);
      finished.push(p.tag);
    });
  let server: Server;
  let url: string;
  before(async () => {
    const handler = jsonRpcHandler({ registry, onHandlerError: (_e, m) => void reported.push(m) });
    server = createServer((req, res) => void handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('should answer with the awaited result', async () => {
    assert.deepEqual((await rpc(url, { jsonrpc: '2.0', method: 'slow.add', params: [1, 2], id: 1 })).body, { jsonrpc: '2.0', result: 3, id: 1 });
  });
  it('should answer a rejected JsonRpcError with its code and any other rejection with a bare -32603', async () => {
    assert.deepEqual((await rpc(url, { jsonrpc: '2.0', method: 'slow.missing', id: 1 })).body.error, { code: 404, message: 'Not here' });
    const crash = await rpc(url, { jsonrpc: '2.0', method: 'slow.crash', id: 2 });
    assert.deepEqual(crash.body.error, { code: -32603, message: 'Internal error' });
    assert.doesNotMatch(crash.text, /secret/);
    assert.ok(reported.includes('slow.crash'));
  });
  it('should check params before the call and the awaited result against result_schema', async () => {
    assert.equal((await rpc(url, { jsonrpc: '2.0', method: 'slow.add', params: ['x'], id: 1 })).body.error.code, -32602);
    const wrong = await rpc(url, { jsonrpc: '2.0', method: 'slow.wrong', id: 1 });
    assert.equal(wrong.body.error.code, -32603);
    assert.match(wrong.body.error.data.reason, /result_schema/);
  });
  it('should answer 204 for a notification only once its handler has finished', async () => {
    await rpc(url, { jsonrpc: '2.0', method: 'slow.log', params: { tag: 'n1' } }).expect(204);
    assert.ok(finished.includes('n1'));
  });
  it('should keep request order in a batch mixing slow and fast methods', async () => {
    const res = await rpc(url, [
      { jsonrpc: '2.0', method: 'slow.add', params: [1, 1], id: 'a' },
      { jsonrpc: '2.0', method: 'fast.add', params: [2, 2], id: 'b' },
      { jsonrpc: '2.0', method: 'slow.log', params: { tag: 'n2' } },
      { jsonrpc: '2.0', method: 'slow.missing', id: 'c' },
    ]).expect(200);
    assert.deepEqual(res.body, [
      { jsonrpc: '2.0', result: 2, id: 'a' },
      { jsonrpc: '2.0', result: 4, id: 'b' },
      { jsonrpc: '2.0', error: { code: 404, message: 'Not here' }, id: 'c' },
    ]);
    assert.ok(finished.includes('n2'));
  });
});

describe('when dispatch is called directly', () => {
  const registry = new JsonRpcRegistry().register({ method_name: 'fast' }, () => 1).register({ method_name: 'slow' }, async () => 2);
  const options = { enableBatch: true, maxBatchSize: 10 };
  it('should return a promise for synchronous and asynchronous methods alike', async () => {
    const fast = dispatch(registry, '{"jsonrpc":"2.0","method":"fast","id":1}', options);
    const slow = dispatchOne(registry, { jsonrpc: '2.0', method: 'slow', id: 2 }, options);
    assert.ok(fast instanceof Promise && slow instanceof Promise);
    assert.deepEqual(await fast, { jsonrpc: '2.0', result: 1, id: 1 });
    assert.deepEqual(await slow, { jsonrpc: '2.0', result: 2, id: 2 });
  });
});
