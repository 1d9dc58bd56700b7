/**
 * Attack replay: over-long request targets (RFC 9110 §15.5.15). With the default max_uri_length (8192
 * characters) a target between the limit and node's header section (16 KiB, request line included) is
 * a 414 problem before routing; past it node's parser stops reading and answers 431 (it cannot tell the
 * request line from a header). Over h2c a 60 KB `:path` (within node's 64 KiB header list) is a 414, and
 * a WebSocket handshake over the limit is refused with the 414 before its upgrade handler runs. After
 * each, the server answers the next client.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { App } from '../../lib/app/app.js';
import type { ServerHandle } from '../../lib/index.js';
import '../../lib/grpc/index.js';
import { GREETER_PROTO } from '../../lib/grpc/testkit.js';
import { bodyOf, rawExchange, statusOf } from './sockets.js';

const query = (length: number, prefix = '/items?q=') => prefix + 'x'.repeat(length - prefix.length);
const uriTooLong = (length: number, limit: number) => ({
  type: 'https://keel.dev/errors/uri-too-long',
  title: 'URI Too Long',
  status: 414,
  detail: `Request target of ${length} characters exceeds the limit of ${limit} characters`,
  limit,
});

describe('hostile: over-long request targets', () => {
  let server: ServerHandle;
  let upgrades = 0;
  before(async () => {
    // h2c shares the port once gRPC is on (ServerConfig.grpc); everything else is at its default.
    const app = new App({ host: '127.0.0.1', port: 0, grpc: {} });
    app.get('/items', () => ({ ok: true }));
    app.upgrade('/ws', (_req, socket) => {
      upgrades++;
      socket.end('HTTP/1.1 418 I\'m a teapot\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    });
    app.grpc(GREETER_PROTO, 'keel.examples.v1.Greeter', { SayHello: ({ name }: { name: string }) => ({ message: `Hello, ${name}` }), async *SayHelloMany() {} });
    server = await app.listen({ handleSignals: false });
  });
  after(() => server.close());

  const get = (target: string) => rawExchange(server.port, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, { ms: 10_000 });
  async function stillServing(): Promise<void> {
    const a = await get('/items');
    assert.equal(statusOf(a.text), 200);
  }

  it('should answer a 16,000-character target with the 414 problem', async () => {
    const a = await get(query(16_000));
    assert.equal(statusOf(a.text), 414);
    assert.deepEqual(bodyOf(a.text), uriTooLong(16_000, 8192));
    await stillServing();
  });

  it('should answer a 60,000-character target with node\'s 431 and close (the parser stops before a request exists)', async () => {
    const a = await get(query(60_000));
    assert.equal(statusOf(a.text), 431);
    assert.equal(bodyOf(a.text).type, 'https://keel.dev/errors/request-header-fields-too-large');
    assert.match(a.text, /\r\nConnection: close\r\n/i);
    assert.ok(a.closed, 'the server closed the connection');
    await stillServing();
  });

  function h2get(path: string): Promise<{ status: number; type: string; body: string }> {
    return new Promise((resolve, reject) => {
      const session = http2.connect(server.url);
      session.on('error', reject);
      const req = session.request({ ':path': path });
      let status = 0;
      let type = '';
      let body = '';
      req.setEncoding('utf8');
      req.setTimeout(10_000, () => req.close(http2.constants.NGHTTP2_CANCEL));
      req.on('response', (h) => ((status = Number(h[':status'])), (type = String(h['content-type']))));
      req.on('data', (c: string) => (body += c));
      req.on('close', () => (session.close(), status ? resolve({ status, type, body }) : reject(new Error(`no answer (stream closed with ${req.rstCode})`))));
      req.end();
    });
  }

  it('should serve an h2c :path of exactly the limit and refuse one character more with the 414 problem', async () => {
    assert.equal((await h2get(query(8192))).status, 200);
    const over = await h2get(query(8193));
    assert.equal(over.status, 414);
    assert.equal(over.type, 'application/problem+json');
    assert.deepEqual(JSON.parse(over.body), uriTooLong(8193, 8192));
  });

  it('should answer a 60 KB h2c :path with the 414 problem', async () => {
    const answer = await h2get(query(60_000));
    assert.equal(answer.status, 414);
    assert.deepEqual(JSON.parse(answer.body), uriTooLong(60_000, 8192));
    await stillServing();
  });

  it('should refuse a WebSocket handshake whose target is over the limit before its upgrade handler runs', async () => {
    const handshake = (target: string) => rawExchange(server.port, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`, { ms: 10_000 });
    const refused = await handshake(query(8193, '/ws?q='));
    assert.equal(statusOf(refused.text), 414);
    assert.deepEqual(bodyOf(refused.text), uriTooLong(8193, 8192));
    assert.equal(upgrades, 0);
    assert.equal(statusOf((await handshake(query(8192, '/ws?q='))).text), 418);
    assert.equal(upgrades, 1);
  });
});
