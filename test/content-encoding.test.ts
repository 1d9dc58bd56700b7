/**
 * Request bodies with a Content-Encoding (issue 13 item 8: a gzip body got "400 Malformed JSON"):
 * gzip / x-gzip / deflate / br are decoded and their *decoded* size counts against max_body_size;
 * other and stacked codings get a 415 listing the accepted ones (RFC 9110 §15.5.16, §12.5.3).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { pino } from 'pino';
import { createApp, type ServerHandle } from '../lib/index.js';
import '../lib/jsonrpc/index.js';

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; body: Record<string, unknown> }

function send(port: number, path: string, body: Buffer, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { 'Content-Type': 'application/json', 'Content-Length': String(body.length), ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode!, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
      });
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('no answer')));
    req.end(body);
  });
}

const LIMIT = 1024 * 1024;
const json = Buffer.from(JSON.stringify({ name: 'Ada', tags: ['x', 'y'] }));

describe('when a request body is sent with a content coding', () => {
  let server: ServerHandle;
  before(async () => {
    server = await createApp({ port: 0, max_body_size: LIMIT }, (app) => {
      app.post('/echo', (d) => ({ body: d.body, bytes: d.rawBody?.length }), { body: { type: 'object' } });
      app.rpc('sum', (p) => (p as number[]).reduce((a, b) => a + b, 0));
    }, { logger: pino({ level: 'silent' }) }).listen({ handleSignals: false });
  });
  after(() => server.close());

  const codings: [string, Buffer][] = [
    ['gzip', gzipSync(json)],
    ['x-gzip', gzipSync(json)],
    ['GZIP', gzipSync(json)],
    ['deflate', deflateSync(json)],
    ['br', brotliCompressSync(json)],
    ['identity', json],
    ['identity, gzip', gzipSync(json)],
  ];
  for (const [coding, bytes] of codings) {
    it(`should decode a JSON body sent with Content-Encoding: ${coding}`, async () => {
      const res = await send(server.port, '/echo', bytes, { 'Content-Encoding': coding });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, { body: { name: 'Ada', tags: ['x', 'y'] }, bytes: json.length });
    });
  }

  it('should decode a gzip JSON-RPC body', async () => {
    const res = await send(server.port, '/rpc', gzipSync(JSON.stringify({ jsonrpc: '2.0', method: 'sum', params: [1, 2, 3], id: 1 })), { 'Content-Encoding': 'gzip' });
    assert.equal(res.status, 200);
    assert.equal(res.body.result, 6);
  });

  // The bomb: 10 MB of zeros is about 10 KB gzipped; only the decoded size shows it is over the cap.
  for (const [coding, compress] of [['gzip', gzipSync], ['br', brotliCompressSync], ['deflate', deflateSync]] as const) {
    it(`should cut a ${coding} bomb (10 MB of zeros) off at the 1 MB cap with a 413`, async () => {
      const bomb = compress(Buffer.alloc(10 * 1024 * 1024));
      assert.ok(bomb.length < 64 * 1024, `${coding} bomb is ${bomb.length} bytes`);
      const res = await send(server.port, '/echo', bomb, { 'Content-Encoding': coding });
      assert.equal(res.status, 413);
      assert.equal(res.body.type, 'https://keel.dev/errors/payload-too-large');
      assert.equal(res.body.limit, LIMIT);
      assert.match(String(res.body.detail), /once decoded/);
    });
  }

  // Empty stored blocks decode to nothing: only the wire count bounds the work such a body causes.
  it('should count the bytes on the wire too (1.25 MB of empty deflate blocks that decode to nothing)', async () => {
    const empty = gzipSync(Buffer.alloc(0));
    const blocks = Buffer.alloc(5 * 250_000);
    for (let i = 0; i < 250_000; i++) blocks.writeUInt16BE(0xffff, i * 5 + 3);
    const body = Buffer.concat([empty.subarray(0, 10), blocks, empty.subarray(10)]);
    const res = await send(server.port, '/echo', body, { 'Content-Encoding': 'gzip' });
    assert.equal(res.status, 413);
    assert.equal(res.body.limit, LIMIT);
  });

  it('should decode such a body when it stays under the cap', async () => {
    const empty = gzipSync(json);
    const blocks = Buffer.alloc(5 * 1000);
    for (let i = 0; i < 1000; i++) blocks.writeUInt16BE(0xffff, i * 5 + 3);
    const res = await send(server.port, '/echo', Buffer.concat([empty.subarray(0, 10), blocks, empty.subarray(10)]), { 'Content-Encoding': 'gzip' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.body, { name: 'Ada', tags: ['x', 'y'] });
  });

  for (const coding of ['zstd', 'compress', 'chunked', 'gzip;q=1']) {
    it(`should answer Content-Encoding: ${coding} with a 415 listing the accepted codings`, async () => {
      const res = await send(server.port, '/echo', json, { 'Content-Encoding': coding });
      assert.equal(res.status, 415);
      assert.equal(res.headers['accept-encoding'], 'gzip, deflate, br');
      assert.equal(res.body.type, 'https://keel.dev/errors/unsupported-content-encoding');
      assert.deepEqual(res.body.accepted, ['gzip', 'deflate', 'br']);
    });
  }

  it('should answer stacked codings (gzip, br) with a 415', async () => {
    const res = await send(server.port, '/echo', brotliCompressSync(gzipSync(json)), { 'Content-Encoding': 'gzip, br' });
    assert.equal(res.status, 415);
    assert.equal(res.headers['accept-encoding'], 'gzip, deflate, br');
    assert.match(String(res.body.detail), /Stacked content codings \(gzip, br\)/);
  });

  it('should answer a body that is not valid gzip with a 400 naming the coding', async () => {
    const res = await send(server.port, '/echo', json, { 'Content-Encoding': 'gzip' });
    assert.equal(res.status, 400);
    assert.match(String(res.body.detail), /not valid gzip data/);
  });

  it('should answer a truncated gzip body with a 400', async () => {
    const whole = gzipSync(json);
    const res = await send(server.port, '/echo', whole.subarray(0, whole.length - 6), { 'Content-Encoding': 'gzip' });
    assert.equal(res.status, 400);
  });

  it('should keep serving after all of the above', async () => {
    const res = await send(server.port, '/echo', json, {});
    assert.equal(res.status, 200);
  });
});
