/** compression inside keel's createApp: ServerConfig.compression and the per-route record. */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import { createApp } from '../../lib/app/app.js';
import type { ServerHandle } from '../../lib/server/server.js';

const PAYLOAD = { message: 'Compressed payload', payload: 'a'.repeat(100) };

function get(url: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, async (res) => {
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) });
    }).on('error', reject);
  });
}

describe('compression under createApp', () => {
  let handle: ServerHandle;
  before(async () => {
    const app = createApp({ port: 0, compression: { min_size: 4096 } }, (app) => {
      app.get('/compression/gzip', () => PAYLOAD, { compression: { gzip: true, brotli: false, min_size: 0, quality: 4 } });
      app.get('/compression/skip', () => ({ message: 'Small payload', payload: 'tiny' }), { compression: { gzip: true, brotli: false, min_size: 4096, quality: 6 } });
      app.get('/server-level', () => ({ items: 'b'.repeat(5000) }));
      app.get('/server-level/small', () => PAYLOAD);
      app.get('/compression/off', () => ({ items: 'c'.repeat(5000) }), { compression: { enabled: false } });
    });
    handle = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
  });
  after(() => handle.close());

  it('should gzip a route with its own record, with Vary', async () => {
    const res = await get(`${handle.url}/compression/gzip`, { 'Accept-Encoding': 'gzip' });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-encoding'], 'gzip');
    assert.equal(res.headers.vary, 'Accept-Encoding');
    assert.deepEqual(JSON.parse(zlib.gunzipSync(res.body).toString()), PAYLOAD);
  });

  it('should not brotli-encode on that route even when asked', async () => {
    const res = await get(`${handle.url}/compression/gzip`, { 'Accept-Encoding': 'br' });
    assert.equal(res.headers['content-encoding'], undefined);
    assert.deepEqual(JSON.parse(res.body.toString()), PAYLOAD);
  });

  it('should leave a body under the route min_size uncompressed', async () => {
    const res = await get(`${handle.url}/compression/skip`, { 'Accept-Encoding': 'gzip' });
    assert.equal(res.headers['content-encoding'], undefined);
    assert.deepEqual(JSON.parse(res.body.toString()), { message: 'Small payload', payload: 'tiny' });
  });

  it('should use the server-level record (brotli preferred) on other routes', async () => {
    const res = await get(`${handle.url}/server-level`, { 'Accept-Encoding': 'gzip, br' });
    assert.equal(res.headers['content-encoding'], 'br');
    assert.deepEqual(JSON.parse(zlib.brotliDecompressSync(res.body).toString()), { items: 'b'.repeat(5000) });
  });

  it('should apply the server-level min_size', async () => {
    const res = await get(`${handle.url}/server-level/small`, { 'Accept-Encoding': 'gzip, br' });
    assert.equal(res.headers['content-encoding'], undefined);
  });

  it('should not compress a route whose record says enabled: false, even above the server min_size', async () => {
    const res = await get(`${handle.url}/compression/off`, { 'Accept-Encoding': 'gzip, br' });
    assert.equal(res.headers['content-encoding'], undefined);
    assert.deepEqual(JSON.parse(res.body.toString()), { items: 'c'.repeat(5000) });
  });
});
