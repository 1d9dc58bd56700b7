import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { App, type ServerHandle } from '../index.js';
import { memorySdk } from '../../test/helpers/otel-sdk.js';

describe('when spans are on and a request carries GraphQL or JSON-RPC operations', () => {
  const sdk = memorySdk();
  const { exporter } = sdk;
  let server: ServerHandle;

  before(async () => {
    sdk.register();
    const app = new App({ port: 0, host: '127.0.0.1', opentelemetry: {} }, { logger: pino({ level: 'silent' }) })
      .registerGraphqlSdlRoute('/graphql', 'POST', 'type Query { user(id: Int!): String, broken: String }', { user: 'user 7', broken: 'x' }, {
        introspection_enabled: true, field_errors: [{ path: 'broken', message: 'no access to broken' }],
      })
      .rpc('greet', ({ name }: { name: string }) => `hello ${name}`)
      .rpc('fail', async () => {
        throw new Error('secret detail');
      });
    server = await app.listen({ handleSignals: false });
  });
  after(async () => {
    await server?.close();
    await sdk.unregister();
  });
  beforeEach(() => exporter.reset());

  const post = (path: string, body: unknown) => fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  async function finished(ready: (spans: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> {
    for (let i = 0; i < 200 && !ready(exporter.getFinishedSpans()); i++) await new Promise((r) => setTimeout(r, 10));
    return exporter.getFinishedSpans();
  }

  it("should name a GraphQL operation's span `<type> <name>` with graphql.operation.type and .name", async () => {
    const res = await post('/graphql', { query: 'query getUser { user(id: 7) }', operationName: 'getUser' });
    assert.deepEqual(await res.json(), { data: { user: 'user 7' } });
    const spans = await finished((l) => l.some((s) => s.kind === SpanKind.SERVER));
    const op = spans.find((s) => s.name === 'query getUser');
    assert.ok(op, spans.map((s) => s.name).join(', '));
    assert.equal(op.kind, SpanKind.INTERNAL);
    assert.deepEqual({ ...op.attributes }, { 'graphql.operation.type': 'query', 'graphql.operation.name': 'getUser' });
    const server = spans.find((s) => s.kind === SpanKind.SERVER)!;
    assert.equal(server.name, 'POST /graphql');
    assert.equal(op.spanContext().traceId, server.spanContext().traceId);
    assert.equal(spans.filter((s) => s.kind === SpanKind.SERVER).length, 1);
  });

  it('should name an anonymous operation by its type, and mark one that answered errors', async () => {
    await post('/graphql', { query: '{ broken }' });
    const spans = await finished((l) => l.some((s) => s.kind === SpanKind.SERVER));
    const op = spans.find((s) => s.name === 'query')!;
    assert.deepEqual({ ...op.attributes }, { 'graphql.operation.type': 'query' });
    assert.equal(op.status.code, SpanStatusCode.ERROR);
    assert.equal(op.status.message, 'no access to broken');
  });

  it('should give each JSON-RPC call of a batch its span (rpc.system jsonrpc, rpc.method, the error code of an error answer)', async () => {
    const res = await post('/rpc', [{ jsonrpc: '2.0', method: 'greet', params: { name: 'Ada' }, id: 1 }, { jsonrpc: '2.0', method: 'fail', id: 'b' }]);
    const body = await res.json() as { error?: { message: string } }[];
    assert.doesNotMatch(JSON.stringify(body), /secret detail/);
    const spans = await finished((l) => l.some((s) => s.kind === SpanKind.SERVER));
    const greet = spans.find((s) => s.name === 'greet')!;
    assert.deepEqual({ ...greet.attributes }, { 'rpc.system': 'jsonrpc', 'rpc.jsonrpc.version': '2.0', 'rpc.method': 'greet', 'rpc.jsonrpc.request_id': '1' });
    assert.equal(greet.status.code, SpanStatusCode.UNSET);
    const fail = spans.find((s) => s.name === 'fail')!;
    assert.equal(fail.attributes['rpc.jsonrpc.error_code'], -32603);
    assert.equal(fail.attributes['rpc.jsonrpc.request_id'], 'b');
    assert.equal(fail.status.code, SpanStatusCode.ERROR);
    const server = spans.find((s) => s.kind === SpanKind.SERVER)!;
    for (const s of [greet, fail]) assert.equal(s.spanContext().traceId, server.spanContext().traceId);
  });
});
