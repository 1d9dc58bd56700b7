import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { getRPCMetadata, RPCType, setRPCMetadata } from '@opentelemetry/core';
import { registeredSpanKit, spanKit, type HttpRpcMetadata, type KitSpan } from './spans.js';
import { memorySdk } from '../../test/helpers/otel-sdk.js';

// The primitives keel's App (lib/observability/tracing.ts) and keel/express (express/tracing.ts) share, against
// OpenTelemetry's own SDK and @opentelemetry/core's RPC metadata (what instrumentation-http puts in the context).

describe('when no OTel context manager is registered', () => {
  it('should give no kit from registeredSpanKit (keel/express then traces nothing)', () => {
    assert.equal(registeredSpanKit('keel/express'), undefined);
  });
});

describe('when an OTel SDK is registered', () => {
  const sdk = memorySdk();
  const { exporter } = sdk;

  before(() => {
    sdk.register();
  });
  after(async () => {
    await sdk.unregister();
  });
  beforeEach(() => exporter.reset());

  /** A SERVER span as instrumentation-http starts it: active, with `{ type: HTTP, span }` as the RPC metadata. */
  function httpContext(): { span: KitSpan; ctx: object } {
    const span = trace.getTracer('http').startSpan('GET', { kind: SpanKind.SERVER });
    return { span: span as unknown as KitSpan, ctx: setRPCMetadata(trace.setSpan(ROOT_CONTEXT, span), { type: RPCType.HTTP, span }) };
  }
  const finished = (name: string) => exporter.getFinishedSpans().find((s) => s.name === name);

  it("should give the same kit from registeredSpanKit as spanKit, under the tracer's name", () => {
    const kit = registeredSpanKit('keel/express-test');
    assert.equal(kit, spanKit('keel/express-test'));
    const { span } = kit!.startInternal('work');
    span.end();
    assert.equal(finished('work')?.instrumentationScope.name, 'keel/express-test');
  });

  it("should find instrumentation-http's span through @opentelemetry/core's RPC metadata, and nothing else", () => {
    const kit = spanKit('keel');
    const { span, ctx } = httpContext();
    assert.equal(kit.httpServerSpan(ctx)?.span, span);
    assert.equal(kit.spanOf(ctx), span);
    const other = trace.setSpan(ROOT_CONTEXT, trace.getTracer('app').startSpan('job'));
    assert.equal(kit.httpServerSpan(other), undefined);
    assert.equal(kit.httpServerSpan(setRPCMetadata(other, { type: 'grpc' as RPCType, span: trace.getSpan(other)! })), undefined);
    assert.equal(kit.spanOf(ROOT_CONTEXT), undefined);
    span.end();
  });

  it('should name the span and set http.route at once with setRoute, and only hand the route over with setRpcRoute', () => {
    const kit = spanKit('keel');
    const { span, ctx } = httpContext();
    const meta = kit.httpServerSpan(ctx)!;
    kit.setRpcRoute(meta, '/api');
    assert.equal(getRPCMetadata(ctx as never)?.route, '/api');
    // a later layer drops the route: instrumentation-http then leaves its span as it is
    kit.setRpcRoute(meta, undefined);
    assert.equal((getRPCMetadata(ctx as never) as HttpRpcMetadata).route, undefined);
    span.end();
    const rpcOnly = finished('GET')!;
    assert.equal(rpcOnly.attributes['http.route'], undefined);

    const second = httpContext();
    kit.setRoute(kit.httpServerSpan(second.ctx)!, 'GET', '/users/{id:int}');
    assert.equal(getRPCMetadata(second.ctx as never)?.route, '/users/{id:int}');
    second.span.end();
    assert.equal(finished('GET /users/{id:int}')?.attributes['http.route'], '/users/{id:int}');
  });

  it('should start INTERNAL children of the given context, with their attributes, and run work in theirs', () => {
    const kit = spanKit('keel');
    const { span: server, ctx } = httpContext();
    const { span, context: inner } = kit.startInternal('middleware - auth', { 'express.type': 'middleware' }, ctx);
    assert.equal(kit.run(inner, () => kit.spanOf()), span);
    span.end();
    server.end();
    const done = finished('middleware - auth')!;
    assert.equal(done.kind, SpanKind.INTERNAL);
    assert.deepEqual({ ...done.attributes }, { 'express.type': 'middleware' });
    assert.equal(done.parentSpanContext?.spanId, server.spanContext().spanId);
  });

  it('should record an Error, a value with a fallback message, and a bare value (as instrumentation-express does)', () => {
    const kit = spanKit('keel');
    const cases: [string, unknown, string | undefined][] = [['error', new TypeError('bad'), 'x'], ['fallback', 'secret', 'middleware failed'], ['bare', 'boom', undefined]];
    for (const [name, err, fallback] of cases) {
      const { span } = kit.startInternal(name);
      kit.recordError(span, err, fallback);
      // instrumentation-http sets a bare ERROR for a 5xx later: the message stays
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
    const event = (name: string) => finished(name)!.events.find((e) => e.name === 'exception')!.attributes!;
    assert.deepEqual(finished('error')!.status, { code: SpanStatusCode.ERROR, message: 'bad' });
    assert.equal(event('error')['exception.type'], 'TypeError');
    assert.deepEqual(finished('fallback')!.status, { code: SpanStatusCode.ERROR, message: 'middleware failed' });
    assert.deepEqual([event('fallback')['exception.type'], event('fallback')['exception.message']], ['Error', 'middleware failed']);
    assert.deepEqual(finished('bare')!.status, { code: SpanStatusCode.ERROR, message: 'boom' });
    assert.deepEqual([event('bare')['exception.type'], event('bare')['exception.message']], [undefined, 'boom']);
  });
});
