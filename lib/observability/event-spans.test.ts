import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { createApp, RedisPubSub } from '../index.js';
import { jobTracing } from './job-spans.js';
import { OpenTelemetryConfig } from '../records/observability.js';
import { NO_REDIS, startRedis, type RedisServer } from '../../test/helpers/redis-server.js';
import { memorySdk } from '../../test/helpers/otel-sdk.js';

const silent = pino({ level: 'silent' });

describe('when spans are on and events are published', () => {
  const sdk = memorySdk();
  const { exporter } = sdk;
  before(() => {
    sdk.register();
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  });
  after(async () => {
    await sdk.unregister();
    propagation.disable();
  });
  beforeEach(() => exporter.reset());
  async function finished(ready: (spans: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> {
    for (let i = 0; i < 300 && !ready(exporter.getFinishedSpans()); i++) await new Promise((r) => setTimeout(r, 10));
    return exporter.getFinishedSpans();
  }

  it("should record app.publish() on the App's in-memory pub/sub as a PRODUCER span of the request's trace", async () => {
    const app = createApp({ opentelemetry: {} }, (a) => {
      a.post('/news', async () => {
        await a.publish('news', { title: 'hi' });
        return { ok: true };
      });
    }, { logger: silent });
    const events = app.pubsub.subscribe('news');
    assert.equal((await app.inject({ method: 'POST', url: '/news' })).statusCode, 200);
    assert.deepEqual((await events.next()).value, { title: 'hi' });
    await events.return!();
    const spans = await finished((l) => l.some((s) => s.kind === SpanKind.SERVER));
    const producer = spans.find((s) => s.kind === SpanKind.PRODUCER)!;
    assert.equal(producer.name, 'publish news');
    assert.deepEqual({ ...producer.attributes }, { 'messaging.system': 'keel', 'messaging.operation.type': 'send', 'messaging.operation.name': 'publish', 'messaging.destination.name': 'news' });
    const server = spans.find((s) => s.kind === SpanKind.SERVER)!;
    assert.equal(producer.spanContext().traceId, server.spanContext().traceId);
  });

  describe('across instances through a real redis-server', { skip: NO_REDIS }, () => {
    let redis: RedisServer;
    let a: RedisPubSub;
    let b: RedisPubSub;
    before(async () => {
      redis = await startRedis();
      a = new RedisPubSub({ connection: redis.url, logger: silent });
      b = new RedisPubSub({ connection: redis.url, logger: silent });
      const tracing = jobTracing(OpenTelemetryConfig.parse({}, 'OpenTelemetryConfig'));
      a.traceWith(tracing);
      b.traceWith(tracing);
    });
    after(async () => {
      await a?.close();
      await b?.close();
      await redis?.stop();
    });

    it("should continue the publisher's trace in the receiving instance's CONSUMER span (the context rides in the message's tag)", async () => {
      const onB = b.subscribe('orders');
      const first = onB.next(); // subscribes on B before A publishes
      for (let i = 0; i < 100 && (await redis.client.pubsub('NUMSUB', 'keel:ps:orders') as [string, number])[1] < 1; i++) await new Promise((r) => setTimeout(r, 20));
      await trace.getTracer('app').startActiveSpan('checkout', async (root) => {
        await a.publish('orders', { id: 1 });
        root.end();
      });
      assert.deepEqual((await first).value, { id: 1 });
      await onB.return!();
      const spans = await finished((l) => l.some((s) => s.kind === SpanKind.CONSUMER));
      const root = spans.find((s) => s.name === 'checkout')!;
      const producer = spans.find((s) => s.kind === SpanKind.PRODUCER)!;
      const consumer = spans.find((s) => s.kind === SpanKind.CONSUMER)!;
      assert.equal(producer.name, 'publish orders');
      assert.equal(producer.attributes['messaging.system'], 'redis');
      assert.equal(producer.parentSpanContext?.spanId, root.spanContext().spanId);
      assert.equal(consumer.name, 'process orders');
      assert.equal(consumer.parentSpanContext?.spanId, producer.spanContext().spanId);
      assert.equal(consumer.spanContext().traceId, root.spanContext().traceId);
      assert.equal(producer.status.code, SpanStatusCode.UNSET);
    });
  });
});
