/**
 * The read phase's 413: on a route without on_error hooks it is answered from its problem (no error is
 * built); with hooks, the hook gets the HttpError. The client sees the same bytes either way.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { App } from '../../app/app.js';
import { HttpError } from '../../http/errors.js';

const big = JSON.stringify({ note: 'x'.repeat(400) });

function router(withHook: boolean, seen: unknown[] = []) {
  const app = new App({ port: 0, max_body_size: 256 });
  if (withHook) app.onError((ctx) => void seen.push((ctx as { error?: unknown }).error));
  app.post('/notes', (d) => ({ got: d.body }));
  return app.intoRouter();
}

describe('when a declared body is over max_body_size', () => {
  it('should answer the same 413 problem with and without on_error hooks', async () => {
    const seen: unknown[] = [];
    const plain = await request(router(false)).post('/notes').set('Content-Type', 'application/json').send(big);
    const hooked = await request(router(true, seen)).post('/notes').set('Content-Type', 'application/json').send(big);
    assert.equal(plain.status, 413);
    assert.equal(plain.text, hooked.text);
    assert.equal(plain.headers['content-type'], 'application/problem+json');
    assert.equal(plain.headers['content-length'], hooked.headers['content-length']);
    assert.deepEqual(JSON.parse(plain.text), {
      type: 'https://keel.dev/errors/payload-too-large', title: 'Payload Too Large', status: 413,
      detail: `Request body of ${Buffer.byteLength(big)} bytes exceeds the limit of 256 bytes`, limit: 256,
    });
    assert.equal(seen.length, 1);
    assert.ok(seen[0] instanceof HttpError && seen[0].status === 413);
  });

  it('should keep the connection for the next request once the rest of the body is read', async () => {
    const agent = request.agent(router(false));
    const first = await agent.post('/notes').set('Content-Type', 'application/json').send(big);
    const second = await agent.post('/notes').set('Content-Type', 'application/json').send('{"a":1}');
    assert.equal(first.status, 413);
    assert.equal(second.status, 200);
    assert.deepEqual(second.body, { got: { a: 1 } });
  });
});
