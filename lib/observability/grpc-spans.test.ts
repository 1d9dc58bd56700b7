import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { createApp, type ServerHandle } from '../index.js';
import { clientFor, connect, unary, GREETER_PROTO } from '../grpc/testkit.js';
import { memorySdk } from '../../test/helpers/otel-sdk.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

describe('when spans are on and the App serves gRPC calls', () => {
  const sdk = memorySdk();
  const { exporter } = sdk;
  let handle: ServerHandle;
  let client: grpc.Client & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

  before(async () => {
    sdk.register();
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const app = createApp({ port: 0, host: '127.0.0.1', grpc: {}, opentelemetry: {} }, (a) => {
      a.grpc(GREETER_PROTO, 'keel.examples.v1.Greeter', {
        SayHello: async ({ name }: { name: string }) => {
          await new Promise((r) => setImmediate(r));
          trace.getTracer('app').startActiveSpan('lookup', (s) => s.end());
          if (name === 'crash') throw new Error('db down');
          return { message: `Hello, ${name}` };
        },
      });
    }, { logger: pino({ level: 'silent' }) });
    handle = await app.listen({ handleSignals: false });
    client = connect(clientFor(GREETER_PROTO, 'keel.examples.v1.Greeter'), `127.0.0.1:${handle.port}`);
  });
  after(async () => {
    client?.close();
    await handle?.close();
    await sdk.unregister();
    propagation.disable();
  });
  beforeEach(() => exporter.reset());
  async function finished(ready: (spans: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> {
    for (let i = 0; i < 300 && !ready(exporter.getFinishedSpans()); i++) await new Promise((r) => setTimeout(r, 10));
    return exporter.getFinishedSpans();
  }

  it('should export one SERVER span per call named package.Service/Method (rpc.system grpc, rpc.service, rpc.method), child of the caller\'s traceparent', async () => {
    const m = new grpc.Metadata();
    m.set('traceparent', `00-${TRACE_ID}-${PARENT_ID}-01`);
    const r = await unary(client, 'SayHello', { name: 'Ada' }, m);
    assert.equal(r.value?.message, 'Hello, Ada');
    const spans = await finished((l) => l.some((s) => s.kind === SpanKind.SERVER));
    const server = spans.filter((s) => s.kind === SpanKind.SERVER);
    assert.equal(server.length, 1);
    const [call] = server;
    assert.equal(call!.name, 'keel.examples.v1.Greeter/SayHello');
    assert.deepEqual({ ...call!.attributes }, { 'rpc.system': 'grpc', 'rpc.service': 'keel.examples.v1.Greeter', 'rpc.method': 'SayHello', 'rpc.grpc.status_code': 0 });
    assert.equal(call!.spanContext().traceId, TRACE_ID);
    assert.equal(call!.parentSpanContext?.spanId, PARENT_ID);
    assert.equal(call!.status.code, SpanStatusCode.UNSET);
    const lookup = spans.find((s) => s.name === 'lookup')!;
    assert.equal(lookup.parentSpanContext?.spanId, call!.spanContext().spanId, 'the handler runs in the call\'s span');
  });

  it('should mark a call the handler failed as an error (UNKNOWN), without its message reaching the client', async () => {
    const r = await unary(client, 'SayHello', { name: 'crash' });
    assert.equal(r.error?.code, grpc.status.UNKNOWN);
    assert.doesNotMatch(String(r.error?.details), /db down/);
    const [call] = (await finished((l) => l.some((s) => s.kind === SpanKind.SERVER))).filter((s) => s.kind === SpanKind.SERVER);
    assert.equal(call!.attributes['rpc.grpc.status_code'], grpc.status.UNKNOWN);
    assert.equal(call!.status.code, SpanStatusCode.ERROR);
    assert.equal(call!.status.message, 'db down');
    assert.equal(call!.events.find((e) => e.name === 'exception')?.attributes?.['exception.message'], 'db down');
  });
});
