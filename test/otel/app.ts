/**
 * A keel App for the span tests (./standard-setup.test.ts), run in a child process after ./register.mjs:
 * `/users/{id:int}`, a 500, a route that enqueues a job (in process, or BullMQ on REDIS_URL). It sends
 * `{ url }` once listening, and answers `'spans'` with the finished spans as plain objects.
 */
import { pino } from 'pino';
import { createApp, response } from '../../lib/index.js';
import { bullmqBackground } from '../../lib/background/index.js';

interface Exported {
  name: string; kind: number; spanContext(): { traceId: string; spanId: string };
  parentSpanContext?: { spanId: string }; attributes: Record<string, unknown>;
  status: { code: number; message?: string }; events: { name: string; attributes?: Record<string, unknown> }[];
  instrumentationScope: { name: string };
}
const exporter = (globalThis as unknown as { __keelTestSpans: { getFinishedSpans(): Exported[] } }).__keelTestSpans;

const redis = process.env.REDIS_URL;
const app = createApp({ port: 0, opentelemetry: {}, background_tasks: { enabled: true } }, (a) => {
  a.get('/users/{id:int}', (d) => ({ id: d.pathParams.id }));
  a.get('/boom', () => {
    throw new Error('database password rejected for user admin');
  });
  a.job('welcome', async (payload: { user: number }) => {
    await new Promise((r) => setTimeout(r, 5));
    process.send!({ ran: payload.user });
  });
  a.post('/users/{id:int}/welcome', async (d) => {
    await d.background!.enqueue('welcome', { user: d.pathParams.id });
    return response({ queued: true }, { status: 202 });
  });
}, { logger: pino({ level: 'silent' }), ...(redis ? { background: bullmqBackground({ connection: redis, queueName: `spans-${process.pid}` }) } : {}) });

const server = await app.listen({ handleSignals: false });
process.send!({ url: server.url });
process.on('message', async (m) => {
  if (m === 'spans') {
    process.send!({
      spans: exporter.getFinishedSpans().map((s) => ({
        name: s.name, kind: s.kind, traceId: s.spanContext().traceId, spanId: s.spanContext().spanId,
        parentSpanId: s.parentSpanContext?.spanId, attributes: s.attributes, status: s.status,
        events: s.events.map((e) => ({ name: e.name, attributes: e.attributes })), scope: s.instrumentationScope.name,
      })),
    });
  } else if (m === 'stop') {
    await server.close();
    process.exit(0);
  }
});
