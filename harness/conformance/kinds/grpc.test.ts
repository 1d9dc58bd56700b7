import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildManifest } from '../manifest.js';
import { casesOf, run } from './testkit.js';

const protobuf = {
  package: 'shop.v1',
  messages: [
    { name: 'GetItem', fields: [{ name: 'id', type: 'string', number: 1, label: 'required' }, { name: 'qty', type: 'int64', number: 2, label: 'optional' }] },
    { name: 'Item', fields: [{ name: 'id', type: 'string', number: 1 }, { name: 'tags', type: 'string', number: 2, label: 'repeated' }] },
  ],
  services: [{ name: 'Items', methods: [{ name: 'Get', input_type: 'GetItem', output_type: 'Item' }, { name: 'Watch', input_type: 'GetItem', output_type: 'Item', server_streaming: true }] }],
};
const doc = (method: string, expected: Record<string, unknown>, request: Record<string, unknown> = { metadata: { 'x-trace': 't-1' }, message: { id: 'a1', qty: 3 } }) =>
  ({ name: `items ${method}`, protobuf, handler: { service: 'shop.v1.Items', method }, request, expected_response: expected });

describe('gRPC kind', () => {
  describe('when a protobuf document is run against keel\'s fixture service', () => {
    it('should pass a unary call answering the expected message and metadata', async () => {
      const [c] = casesOf(doc('Get', { status_code: 'OK', message: { id: 'a1', tags: ['x', 'y'] }, metadata: { 'x-served': 'yes' } }));
      const r = await run(c!);
      assert.equal(r.status, 'passed', JSON.stringify(r.mismatches ?? r.error));
    });

    it('should pass a server stream and an error status the service raises', async () => {
      const [stream] = casesOf(doc('Watch', { status_code: 'OK', stream: [{ id: 'a1' }, { id: 'a2' }] }));
      const [missing] = casesOf(doc('Get', { status_code: 'NOT_FOUND', error: { code: 5, message: 'no such item' } }));
      for (const c of [stream!, missing!]) {
        const r = await run(c);
        assert.equal(r.status, 'passed', `${c.name}: ${JSON.stringify(r.mismatches ?? r.error)}`);
      }
    });

    it('should leave DEADLINE_EXCEEDED to keel: the handler never answers and the call deadline ends it', async () => {
      const [c] = casesOf(doc('Get', { status_code: 'DEADLINE_EXCEEDED' }, { metadata: { 'grpc-timeout': '200m' }, message: { id: 'slow' } }));
      const r = await run(c!);
      assert.equal(r.status, 'passed', JSON.stringify(r.mismatches ?? r.error));
    });

    it('should fail when the server answers another message or status', async () => {
      const [want] = casesOf(doc('Get', { status_code: 'OK', message: { id: 'a1', tags: ['x'] } }));
      const [other] = casesOf(doc('Get', { status_code: 'OK', message: { id: 'zz' } }));
      const [err] = casesOf(doc('Get', { status_code: 'NOT_FOUND', error: { message: 'gone' } }));
      assert.deepEqual((await run(want!, other!)).mismatches.map((m) => m.what), ['response message']);
      assert.deepEqual((await run(want!, err!)).mismatches.map((m) => m.what), ['grpc-status']);
    });
  });

  describe('when a gRPC call is written as an HTTP/1.1 JSON exchange', () => {
    it('should make it a real gRPC call with messages derived from the body schema and the expected body', async () => {
      const [c] = casesOf({ http: {
        handler: { route: '/api.Greeter/Hello', method: 'POST', body_schema: { type: 'object', properties: { name: { type: 'string' } } } },
        request: { method: 'POST', path: '/api.Greeter/Hello', headers: { 'Content-Type': 'application/grpc', te: 'trailers' }, body: { name: 'Ada' } },
        expected_response: { status_code: 200, headers: { 'content-type': 'application/grpc', 'grpc-status': '0', 'x-greeted': '1' }, body: { message: 'Hello Ada', count: 1 } },
      } });
      const r = await run(c!);
      assert.equal(r.status, 'passed', JSON.stringify(r.mismatches ?? r.error));
    });
  });

  describe('when the manifest carries a protobuf case', () => {
    it('should give the .proto and the handler\'s answer, and for DEADLINE_EXCEEDED only that the handler never answers', () => {
      const m = buildManifest([...casesOf(doc('Get', { status_code: 'OK', message: { id: 'a1' } })), ...casesOf(doc('Get', { status_code: 'DEADLINE_EXCEEDED' }))]);
      const [ok, late] = m.protocols.map((p) => p.server as Record<string, any>);
      assert.match(ok!.proto, /service Items \{\n  rpc Get \(GetItem\) returns \(Item\);/);
      assert.deepEqual(ok!.handler.message, { id: 'a1' });
      assert.deepEqual(late!.handler, { never_answers: true });
    });
  });
});
