import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { createApp, type App, type ServerHandle } from '../index.js';
import { memorySdk } from '../../test/helpers/otel-sdk.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

describe('when ServerConfig.opentelemetry is on and the app registered an OTel SDK', () => {
  const sdk = memorySdk();
  const { exporter } = sdk;
  let app: App;
  let server: ServerHandle;

  before(async () => {
    sdk.register();
    app = createApp({ port: 0, opentelemetry: {}, enable_http_trace: true }, (a) => {
      a.get('/users/{id}', (d) => ({ id: d.pathParams.id }));
      a.get('/boom', () => {
        throw new Error('boom');
      });
      a.get('/db', async () => {
        await new Promise((r) => setImmediate(r));
        // The app's own instrumentation (a database client) starting a span inside the handler.
        trace.getTracer('app').startActiveSpan('SELECT users', (s) => s.end());
        return { ok: true };
      });
    });
    server = await app.listen({ handleSignals: false });
  });
  after(async () => {
    await server?.close();
    await sdk.unregister();
  });
  beforeEach(() => exporter.reset());

  /** The SERVER spans exported once the answers are complete ('close' may follow the client's read by a tick). */
  async function spans(count: number): Promise<ReadableSpan[]> {
    const servers = () => exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER);
    for (let i = 0; i < 200 && servers().length < count; i++) await new Promise((r) => setTimeout(r, 10));
    return servers();
  }
  const internal = () => exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.INTERNAL);

  it('should export one server span named by method and route pattern, child of the traceparent', async () => {
    const res = await fetch(`${server.url}/users/42?secret=x`, { headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`, 'user-agent': 'probe/1' } });
    assert.equal(res.status, 200);
    const [span, ...more] = await spans(1);
    assert.equal(more.length, 0, 'one span per request');
    assert.equal(span!.name, 'GET /users/{id}');
    assert.equal(span!.kind, SpanKind.SERVER);
    assert.equal(span!.spanContext().traceId, TRACE_ID);
    assert.equal(span!.parentSpanContext?.spanId, PARENT_ID);
    assert.equal(span!.parentSpanContext?.isRemote, true);
    assert.deepEqual(
      { ...span!.attributes },
      {
        'http.request.method': 'GET', 'url.path': '/users/42', 'url.scheme': 'http', 'network.protocol.version': '1.1',
        'client.address': span!.attributes['client.address'], 'user_agent.original': 'probe/1',
        'server.address': '127.0.0.1', 'server.port': Number(new URL(server.url).port),
        'http.route': '/users/{id}', 'http.response.status_code': 200,
      },
    );
    // keel's own work: INTERNAL children of the SERVER span (the default security headers, httpTrace, the handler).
    const children = internal();
    assert.deepEqual(children.map((s) => s.name).sort(), ['middleware - httpTraceMiddleware', 'middleware - securityHeaders', 'request handler - /users/{id}']);
    for (const child of children) {
      assert.equal(child.parentSpanContext?.spanId, span!.spanContext().spanId);
      assert.equal(child.attributes['http.route'], '/users/{id}');
    }
    assert.match(String(span!.attributes['client.address']), /127\.0\.0\.1/);
    assert.equal(span!.status.code, SpanStatusCode.UNSET);
    // httpTrace answers the exported span's ids, so logs, the response and the trace agree.
    assert.equal(res.headers.get('traceparent'), `00-${TRACE_ID}-${span!.spanContext().spanId}-01`);
  });

  it('should make the spans a handler starts (after an await) children of keel\'s request span', async () => {
    assert.equal((await fetch(`${server.url}/db`)).status, 200);
    const [request] = await spans(1);
    const handler = internal().find((s) => s.name === 'request handler - /db')!;
    const db = exporter.getFinishedSpans().find((s) => s.name === 'SELECT users')!;
    assert.ok(request && handler && db, exporter.getFinishedSpans().map((s) => s.name).join(', '));
    assert.equal(request.name, 'GET /db');
    assert.equal(db.spanContext().traceId, request.spanContext().traceId);
    assert.equal(handler.parentSpanContext?.spanId, request.spanContext().spanId);
    assert.equal(db.parentSpanContext?.spanId, handler.spanContext().spanId);
  });

  it('should start a new trace without a (valid) traceparent', async () => {
    await fetch(`${server.url}/users/1`, { headers: { traceparent: '00-zzzz-bad-01' } });
    const [span] = await spans(1);
    assert.notEqual(span!.spanContext().traceId, TRACE_ID);
    assert.equal(span!.parentSpanContext, undefined);
  });

  it('should mark a 5xx answer as an error with its exception, and name an unmatched request by its method only', async () => {
    const answer = await fetch(`${server.url}/boom`);
    assert.equal(answer.status, 500);
    assert.doesNotMatch(await answer.text(), /boom/, 'no internals in the answer');
    assert.equal((await fetch(`${server.url}/nowhere`)).status, 404);
    const list = await spans(2);
    const boom = list.find((s) => s.attributes['url.path'] === '/boom')!;
    assert.equal(boom.name, 'GET /boom');
    assert.equal(boom.status.code, SpanStatusCode.ERROR);
    assert.equal(boom.attributes['error.type'], '500');
    assert.equal(boom.status.message, 'boom');
    const exception = boom.events.find((e) => e.name === 'exception');
    assert.equal(exception?.attributes?.['exception.message'], 'boom');
    assert.match(String(exception?.attributes?.['exception.stacktrace']), /tracing\.test\.ts/);
    const handler = internal().find((s) => s.name === 'request handler - /boom')!;
    assert.equal(handler.status.code, SpanStatusCode.ERROR);
    assert.equal(handler.status.message, 'boom');
    const miss = list.find((s) => s.attributes['url.path'] === '/nowhere')!;
    assert.equal(miss.name, 'GET');
    assert.equal(miss.attributes['http.route'], undefined);
    assert.equal(miss.status.code, SpanStatusCode.UNSET, 'a 4xx is not the server span\'s error');
  });
});

describe('when ServerConfig.opentelemetry is off', () => {
  it('should create no span even with an SDK registered', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    trace.setGlobalTracerProvider(provider);
    try {
      const app = createApp({}, (a) => a.get('/hello', () => ({ hello: 'world' })));
      assert.equal((await app.inject({ method: 'GET', url: '/hello' })).statusCode, 200);
      assert.equal(exporter.getFinishedSpans().length, 0);
    } finally {
      await provider.shutdown();
      trace.disable();
    }
  });
});
