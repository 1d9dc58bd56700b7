/**
 * bodyLimit inside keel's createApp, as app.use() middleware in front of keel's own body reader
 * (which applies ServerConfig.max_body_size / the route's max_body_size itself).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createApp } from '../../lib/app/app.js';
import type { ServerHandle } from '../../lib/server/server.js';
import { bodyLimit } from './index.js';

function post(url: string, parts: string[], headers: Record<string, string> = {}): Promise<{ status: number; type?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers } }, async (res) => {
      let body = '';
      for await (const c of res) body += c;
      resolve({ status: res.statusCode!, type: res.headers['content-type'], body });
    });
    req.on('error', reject);
    for (const p of parts) req.write(p);
    req.end();
  });
}

describe('bodyLimit under createApp', () => {
  let handle: ServerHandle;
  before(async () => {
    const app = createApp({ port: 0 }, (app) => {
      app.use(bodyLimit({ max_body_size: 64 }));
      app.post('/body-limit', (d) => ({ accepted: true, note: (d.body as { note: string }).note, raw: d.rawBody?.length }), {
        body: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'], additionalProperties: false },
      });
    });
    handle = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
  });
  after(() => handle.close());

  it('should let keel parse and validate a chunked body under the cap', async () => {
    const res = await post(`${handle.url}/body-limit`, ['{"note":', '"small"}']);
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), { accepted: true, note: 'small', raw: 16 });
  });

  it('should let keel parse a body with Content-Length under the cap', async () => {
    const body = '{"note":"small"}';
    const res = await post(`${handle.url}/body-limit`, [body], { 'Content-Length': String(body.length) });
    assert.equal(res.status, 200);
  });

  it('should answer 413 problem details for a chunked body over the cap', async () => {
    const res = await post(`${handle.url}/body-limit`, ['{"note":"', 'x'.repeat(100), '"}']);
    assert.equal(res.status, 413);
    assert.equal(res.type, 'application/problem+json');
    assert.equal(JSON.parse(res.body).limit, 64);
  });

  it('should answer 413 for a declared Content-Length over the cap', async () => {
    const body = JSON.stringify({ note: 'x'.repeat(100) });
    const res = await post(`${handle.url}/body-limit`, [body], { 'Content-Length': String(body.length) });
    assert.equal(res.status, 413);
  });

  it('should still validate what it lets through (422 from keel)', async () => {
    const res = await post(`${handle.url}/body-limit`, ['{"other":1}']);
    assert.equal(res.status, 422);
  });
});
