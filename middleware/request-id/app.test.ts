/** requestId inside keel's createApp: server-level switch and the per-route RequestIdConfig override. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { createApp } from '../../lib/app/app.js';
import { requestId } from './index.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('requestId under createApp: when enable_request_id is true', () => {
  const router = createApp({ enable_request_id: true }, (app) => {
    app.get('/request-id/generated', (d) => ({ status: 'generated', id: d.requestId }));
    app.get('/request-id/preserved', (d) => ({ status: 'preserved', echo: d.requestId }));
    app.get('/request-id/disabled', (d) => ({ status: 'no-request-id', id: d.requestId ?? null }), { request_id: { enabled: false } });
  }).intoRouter();

  it('should generate a UUID, give it to the handler and send it back', async () => {
    const res = await request(router).get('/request-id/generated');
    assert.equal(res.status, 200);
    assert.match(res.headers['x-request-id'] ?? '', UUID);
    assert.equal(res.body.id, res.headers['x-request-id']);
  });

  it('should propagate a valid incoming X-Request-ID', async () => {
    const res = await request(router).get('/request-id/preserved').set('X-Request-ID', 'trace-123');
    assert.equal(res.headers['x-request-id'], 'trace-123');
    assert.deepEqual(res.body, { status: 'preserved', echo: 'trace-123' });
  });

  it('should replace an unsafe incoming id', async () => {
    const res = await request(router).get('/request-id/preserved').set('X-Request-ID', 'x"; drop');
    assert.match(res.headers['x-request-id'] ?? '', UUID);
  });

  it('should send no id on a route whose request_id is {enabled: false}', async () => {
    const res = await request(router).get('/request-id/disabled').set('X-Request-ID', 'external-id');
    assert.equal(res.headers['x-request-id'], undefined);
    assert.deepEqual(res.body, { status: 'no-request-id', id: null });
  });
});

describe('requestId under createApp: when enable_request_id is false (the default)', () => {
  it('should send no id unless a route turns it on', async () => {
    const router = createApp({}, (app) => {
      app.get('/off', (d) => ({ id: d.requestId ?? null }));
      app.get('/on', (d) => ({ id: d.requestId ?? null }), { request_id: { enabled: true } });
    }).intoRouter();
    const off = await request(router).get('/off').set('X-Request-ID', 'abc');
    assert.equal(off.headers['x-request-id'], undefined);
    assert.equal(off.body.id, null);
    const on = await request(router).get('/on').set('X-Request-ID', 'abc');
    assert.equal(on.headers['x-request-id'], 'abc');
    assert.equal(on.body.id, 'abc');
  });

  it('should run as extra app.use() middleware with a custom header', async () => {
    const router = createApp({}, (app) => {
      app.use(requestId({ header_name: 'X-Correlation-ID' }));
      app.get('/c', (_d, req) => ({ id: req.requestId }));
    }).intoRouter();
    const res = await request(router).get('/c').set('X-Correlation-ID', 'corr-7');
    assert.equal(res.headers['x-correlation-id'], 'corr-7');
    assert.equal(res.body.id, 'corr-7');
  });
});
