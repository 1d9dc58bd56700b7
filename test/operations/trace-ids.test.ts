/**
 * Issue 47, item 4: tracing on and no OpenTelemetry SDK registered (the API alone answers with
 * NonRecordingSpans). keel used to answer `traceparent: 00-000…0-000…0-01` and log an all-zero trace id,
 * and with a caller's traceparent log a span_id equal to parent_span_id. Now neither the answer nor the
 * log carries an all-zero id, the caller's trace id is kept, and the span id is this request's own.
 * Its own process: no test in it registers an SDK (the OTel API's globals are per process).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createApp, type App, type ServerHandle } from '../../lib/index.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const ZERO = /^0+$/;

describe('when tracing is on and no OpenTelemetry SDK is registered', () => {
  const lines: Record<string, unknown>[] = [];
  let app: App;
  let server: ServerHandle;
  before(async () => {
    const stream = new Writable({
      write(chunk: Buffer, _e, done) {
        for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    app = createApp({ port: 0, host: '127.0.0.1', opentelemetry: {}, enable_http_trace: true, enable_request_id: true }, (a) => {
      a.get('/users/{id}', (d) => ({ id: d.pathParams.id }));
      a.get('/boom/{id}', () => {
        throw new Error('a handler failed on purpose');
      });
    }, { logger: pino({ level: 'info' }, stream) });
    server = await app.listen({ handleSignals: false });
  });
  after(() => server?.close());

  const record = (path: string) => lines.findLast((l) => l.path === path && l.trace_id !== undefined)!;

  it('should answer a valid traceparent and log the same non-zero ids without a caller\'s trace', async () => {
    const res = await fetch(`${server.url}/users/1?token=secret123`);
    assert.equal(res.status, 200);
    const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(res.headers.get('traceparent') ?? '');
    assert.ok(m, `traceparent: ${res.headers.get('traceparent')}`);
    assert.doesNotMatch(m[1]!, ZERO, 'all-zero trace id');
    assert.doesNotMatch(m[2]!, ZERO, 'all-zero span id');
    await new Promise((r) => setTimeout(r, 50));
    const line = record('/users/1');
    assert.equal(line.trace_id, m[1]);
    assert.equal(line.span_id, m[2]);
  });

  it('should keep the caller\'s trace id and log a span id of its own, not the caller\'s', async () => {
    const res = await fetch(`${server.url}/users/2`, { headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` } });
    assert.equal(res.status, 200);
    const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(res.headers.get('traceparent') ?? '');
    assert.ok(m);
    assert.equal(m[1], TRACE_ID);
    assert.notEqual(m[2], PARENT_ID);
    await new Promise((r) => setTimeout(r, 50));
    const line = record('/users/2');
    assert.equal(line.trace_id, TRACE_ID);
    assert.equal(line.parent_span_id, PARENT_ID);
    assert.notEqual(line.span_id, line.parent_span_id);
  });

  it('should log "request failed" with the request record\'s fields: status, method, route, request_id, trace_id', async () => {
    const res = await fetch(`${server.url}/boom/7`, { headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` } });
    assert.equal(res.status, 500);
    await new Promise((r) => setTimeout(r, 50));
    const failed = lines.find((l) => l.msg === 'request failed')!;
    const request = record('/boom/7');
    assert.ok(failed, JSON.stringify(lines.map((l) => l.msg)));
    assert.equal(failed.status, 500);
    assert.equal(failed.method, 'GET');
    assert.equal(failed.route, '/boom/{id}');
    assert.equal(failed.trace_id, TRACE_ID);
    assert.equal(failed.request_id, request.request_id);
    assert.equal(failed.requestId, undefined, 'one convention: request_id');
  });
});
