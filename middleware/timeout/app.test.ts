/** timeout inside keel's createApp: ServerConfig.request_timeout and the per-route override. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { createApp } from '../../lib/app/app.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('timeout under createApp: when request_timeout is 1 second', () => {
  const late: { returned?: boolean } = {};
  const router = createApp({ request_timeout: 1 }, (app) => {
    app.get('/timeouts/fast', async () => {
      await sleep(100);
      return { status: 'ok', duration: 'fast' };
    });
    app.get('/timeouts/slow', async () => {
      await sleep(1300);
      late.returned = true;
      return { status: 'late' };
    });
    app.get('/timeouts/none', async () => {
      await sleep(1300);
      return { status: 'ok', duration: 'slow but allowed' };
    }, { request_timeout: null });
  }).intoRouter();

  it('should let a fast handler answer', async () => {
    const res = await request(router).get('/timeouts/fast');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { status: 'ok', duration: 'fast' });
  });

  it('should answer 408 problem details for a slow handler and drop its late result', async () => {
    const res = await request(router).get('/timeouts/slow');
    assert.equal(res.status, 408);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(res.headers.connection, 'close');
    assert.equal(res.body.status, 408);
    assert.equal(res.body.title, 'Request Timeout');
    await sleep(500);
    assert.equal(late.returned, true);
  });

  it('should not time out a route whose request_timeout is null', async () => {
    const res = await request(router).get('/timeouts/none');
    assert.equal(res.status, 200);
  });
});

describe('timeout under createApp: when only a route sets request_timeout', () => {
  it('should time out that route alone', async () => {
    const router = createApp({}, (app) => {
      app.get('/slow', async () => {
        await sleep(1300);
        return { ok: true };
      }, { request_timeout: 1 });
    }).intoRouter();
    const res = await request(router).get('/slow');
    assert.equal(res.status, 408);
  });
});
