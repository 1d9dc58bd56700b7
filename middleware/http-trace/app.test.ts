/** httpTrace inside keel's createApp (`enable_http_trace`), logging through the App's pino logger. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { pino } from 'pino';
import { createApp, handlerError } from '../../lib/index.js';
import { HTTP_TRACE_MESSAGE } from './index.js';
import { captureLogs } from '../../test/helpers/log-capture.js';

const capture = () => captureLogs((rec) => rec.msg === HTTP_TRACE_MESSAGE);

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('httpTrace inside a keel App (enable_http_trace)', () => {
  const log = capture();
  const app = createApp(
    { port: 0, enable_http_trace: true, enable_request_id: true },
    (a) => {
      a.get('/users/{id}', (data) => ({ id: data.pathParams.id }));
      a.get('/gone', () => handlerError(410, 'gone'));
    },
    { logger: log.logger },
  );
  const router = app.intoRouter();

  it('should continue the trace, log the route pattern, status and request id', async () => {
    const res = await request(router).get('/users/7').set('traceparent', `00-${TRACE}-${SPAN}-01`).set('X-Request-ID', 'rid-123');
    const rec = await log.next();
    assert.equal(res.status, 200);
    assert.match(res.headers.traceparent ?? '', new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    assert.equal(rec.trace_id, TRACE);
    assert.equal(rec.parent_span_id, SPAN);
    assert.equal(rec.route, '/users/{id}');
    assert.equal(rec.path, '/users/7');
    assert.equal(rec.status, 200);
    assert.equal(rec.request_id, 'rid-123');
    assert.equal(res.headers['x-request-id'], 'rid-123');
  });

  it('should log a handler error response at warn with its route', async () => {
    const res = await request(router).get('/gone');
    const rec = await log.next();
    assert.equal(res.status, 410);
    assert.equal(rec.status, 410);
    assert.equal(rec.route, '/gone');
    assert.equal(rec.level, 40);
  });

  it('should not trace when enable_http_trace is false (the default)', async () => {
    const quiet = createApp({ port: 0 }, (a) => a.get('/x', () => ({ ok: true })), { logger: pino({ level: 'silent' }) });
    const res = await request(quiet.intoRouter()).get('/x').set('traceparent', `00-${TRACE}-${SPAN}-01`);
    assert.equal(res.headers.traceparent, undefined);
  });
});
