import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { SignJWT } from 'jose';
import { jwtAuth } from '../../middleware/jwt-auth/index.js';
import { apiKeyAuth } from '../../middleware/api-key-auth/index.js';
import { GrpcError, GrpcStatus, HTTP2_PREFACE, createGrpcRouter, guardFromMiddleware, type GrpcGuardContext } from './index.js';
import { clientFor, connect, probeServer, start, unary, HEALTH_PROTO } from './testkit.js';

type Probe = Awaited<ReturnType<typeof probeServer>>;
const HEALTH_PROTO_SERVICE = 'grpc.health.v1.Health';

function h2get(address: string, path: string, headers: Record<string, string> = {}) {
  return new Promise<{ headers: http2.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const session = http2.connect(`http://${address}`);
    session.on('error', reject);
    const req = session.request({ ':path': path, ...headers });
    let head: http2.IncomingHttpHeaders = {};
    let body = '';
    req.setEncoding('utf8');
    req.on('response', (h) => (head = h));
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      session.close();
      resolve({ headers: head, body });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('when HTTP/1.1 and gRPC share the port', () => {
  let s: Probe;
  before(async () => {
    s = await probeServer();
    s.server.removeAllListeners('request');
    s.server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      let n = 0;
      req.on('data', (c: Buffer) => (n += c.length));
      req.on('end', () => {
        // HTTP/1-only: dropped on HTTP/2 responses instead of throwing.
        if (req.url === '/conn-close') res.setHeader('Connection', 'close');
        res.setHeader('x-http-version', req.httpVersion);
        res.end(`${req.method} ${req.url} ${n}`);
      });
    });
    s.server.on('upgrade', (_req, socket: net.Socket) => {
      socket.end('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n');
    });
  });
  after(() => s.close());

  it('should serve HTTP/1.1 requests, several on one keep-alive connection', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string) =>
      new Promise<string>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port: s.port, path, agent }, (res) => {
          let b = '';
          res.on('data', (c) => (b += c));
          res.on('end', () => resolve(b));
        }).on('error', reject);
      });
    assert.equal(await get('/a'), 'GET /a 0');
    assert.equal(await get('/b'), 'GET /b 0');
    agent.destroy();
  });

  it('should pass an HTTP/1.1 request body that arrives in many packets', async () => {
    const body = Buffer.alloc(3_000_000, 0x61);
    const text = await new Promise<string>((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: s.port, path: '/upload', method: 'POST' }, (res) => {
        let b = '';
        res.on('data', (c) => (b += c));
        res.on('end', () => resolve(b));
      });
      req.on('error', reject);
      req.end(body);
    });
    assert.equal(text, 'POST /upload 3000000');
  });

  it('should leave HTTP/1.1 upgrades to the server', async () => {
    const head = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(s.port, '127.0.0.1', () => socket.write('GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n'));
      let b = '';
      socket.on('data', (c) => (b += c));
      socket.on('end', () => resolve(b));
      socket.on('error', reject);
    });
    assert.match(head, /^HTTP\/1\.1 101/);
  });

  it('should answer gRPC calls on the same port', async () => {
    const r = await unary(s.client, 'Unary', { text: 'same port' });
    assert.equal(r.value.text, 'same port');
  });

  it('should give non-gRPC HTTP/2 requests to the HTTP/1 request listener (compatibility API)', async () => {
    const r = await h2get(s.address, '/over-h2');
    assert.equal(r.headers[':status'], 200);
    assert.equal(r.headers['x-http-version'], '2.0');
    assert.equal(r.body, 'GET /over-h2 0');
  });
});

describe('when an HTTP/1 listener sets Connection on an HTTP/2 response', () => {
  it('should drop the header and answer', async () => {
    const s = await probeServer();
    s.server.removeAllListeners('request');
    s.server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
      res.setHeader('Connection', 'close');
      res.setHeader('Keep-Alive', 'timeout=5');
      res.end('ok');
    });
    const r = await h2get(s.address, '/');
    await s.close();
    assert.equal(r.headers[':status'], 200);
    assert.equal(r.body, 'ok');
    assert.equal(r.headers.connection, undefined);
  });
});

describe('when non-gRPC HTTP/2 is rejected (http2Fallback: reject)', () => {
  it('should answer 505 with a problem document', async () => {
    const s = await probeServer({}, { http2Fallback: 'reject' });
    const r = await h2get(s.address, '/page');
    await s.close();
    assert.equal(r.headers[':status'], 505);
    assert.equal(r.headers['content-type'], 'application/problem+json');
    assert.equal(JSON.parse(r.body).status, 505);
  });
});

/** HTTP/2 frame types the peer sent (RFC 9113 §4.1: 9-byte header, type at offset 3, flags at 4). */
function frames(bytes: Buffer): { type: number; flags: number }[] {
  const out: { type: number; flags: number }[] = [];
  for (let i = 0; i + 9 <= bytes.length; ) {
    const len = bytes.readUIntBE(i, 3);
    out.push({ type: bytes[i + 3]!, flags: bytes[i + 4]! });
    i += 9 + len;
  }
  return out;
}

describe('when keepalive is on', () => {
  let s: Probe;
  before(async () => {
    s = await probeServer({ keepalive_interval: 1, keepalive_timeout: 1 });
  });
  after(() => s.close());

  it('should PING an HTTP/2 peer and close the connection when no PING ACK comes back', async () => {
    const socket = net.connect(s.port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (c: Buffer) => received.push(c));
    socket.on('error', () => {});
    // The preface and an empty SETTINGS frame, then silence: PINGs are never acknowledged.
    socket.write(Buffer.concat([HTTP2_PREFACE, Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0])]));
    await new Promise((resolve) => socket.on('close', resolve));
    const pings = frames(Buffer.concat(received)).filter((f) => f.type === 6 && (f.flags & 1) === 0);
    assert.ok(pings.length >= 1, 'a PING was sent');
  });

  it('should keep a connection whose client answers PINGs', async () => {
    const first = await unary(s.client, 'Unary', { text: 'a' });
    await new Promise((r) => setTimeout(r, 2500));
    const second = await unary(s.client, 'Unary', { text: 'b' });
    assert.equal(first.value.text, 'a');
    assert.equal(second.value.text, 'b');
    assert.equal(s.grpc.sessions.size, 1);
  });
});

describe('when the server shuts down gracefully', () => {
  it('should let an in-flight call finish, then close', async () => {
    const s = await probeServer();
    const call = unary(s.client, 'Unary', { text: 'slow', delay_ms: -2 });
    for (let i = 0; i < 200 && s.log.release.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    let shutDown = false;
    const shutdown = s.grpc.shutdown(10_000).then(() => (shutDown = true));
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(shutDown, false);
    s.log.release[0]!();
    const r = await call;
    await shutdown;
    assert.equal(r.value?.text, 'slow');
    assert.equal(s.grpc.sessions.size, 0);
    await s.close();
  });

  it('should answer UNAVAILABLE to a call that arrives while it drains', async () => {
    const s = await probeServer();
    const first = unary(s.client, 'Unary', { delay_ms: -2 });
    for (let i = 0; i < 200 && s.log.release.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const shutdown = s.grpc.shutdown(10_000);
    const late = await unary(s.client, 'Unary', { text: 'late' });
    s.log.release[0]!();
    await first;
    await shutdown;
    await s.close();
    assert.equal(late.error?.code, GrpcStatus.UNAVAILABLE);
  });
});

describe('when a guard protects the calls', () => {
  const seen: GrpcGuardContext[] = [];
  let s: Probe;
  before(async () => {
    s = await probeServer({}, {
      guard: (ctx) => {
        seen.push(ctx);
        if (ctx.metadata.authorization !== 'Bearer good') throw new GrpcError(GrpcStatus.UNAUTHENTICATED, 'bad credentials');
        return { sub: 'user-1' };
      },
    });
  });
  after(() => s.close());

  it('should reject a call without credentials before the handler runs', async () => {
    const calls = s.log.calls.length;
    const r = await unary(s.client, 'Unary', {});
    assert.equal(r.error?.code, GrpcStatus.UNAUTHENTICATED);
    assert.equal(r.error?.details, 'bad credentials');
    assert.equal(s.log.calls.length, calls);
  });

  it('should give what the guard returned to the handler as call.auth', async () => {
    const m = new grpc.Metadata();
    m.set('authorization', 'Bearer good');
    const r = await unary(s.client, 'Unary', {}, m);
    assert.equal(r.error, undefined);
    assert.deepEqual(s.log.calls.at(-1)!.auth, { sub: 'user-1' });
    assert.equal(seen.at(-1)!.path, '/keel.test.v1.Probe/Unary');
  });

  it('should let health checks through without credentials', async () => {
    const client = connect(clientFor(HEALTH_PROTO, HEALTH_PROTO_SERVICE), s.address);
    const r = await unary(client, 'Check', { service: '' });
    client.close();
    assert.equal(r.value?.status, 'SERVING');
  });
});

describe('when the guard is keel\'s JWT and API-key middleware', () => {
  const secret = 'a-test-secret-that-is-at-least-32-bytes-long';
  let s: Probe;
  before(async () => {
    s = await probeServer({}, { guard: guardFromMiddleware([jwtAuth({ secret })]) });
  });
  after(() => s.close());
  const bearer = (token: string) => {
    const m = new grpc.Metadata();
    m.set('authorization', `Bearer ${token}`);
    return m;
  };

  it('should accept a valid token and expose its claims', async () => {
    const token = await new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('5m').sign(new TextEncoder().encode(secret));
    const r = await unary(s.client, 'Unary', { text: 'jwt' }, bearer(token));
    assert.equal(r.error, undefined);
    assert.equal((s.log.calls.at(-1)!.auth as { sub: string }).sub, 'alice');
  });

  it('should answer UNAUTHENTICATED to a missing token', async () => {
    const r = await unary(s.client, 'Unary', {});
    assert.equal(r.error?.code, GrpcStatus.UNAUTHENTICATED);
    assert.equal(r.error!.details, "Expected 'Authorization: Bearer <token>'");
    assert.deepEqual(r.error!.metadata.get('www-authenticate'), ['Bearer']);
  });

  it('should answer UNAUTHENTICATED to a token signed with another secret', async () => {
    const token = await new SignJWT({ sub: 'mallory' }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('x'.repeat(40)));
    const r = await unary(s.client, 'Unary', {}, bearer(token));
    assert.equal(r.error?.code, GrpcStatus.UNAUTHENTICATED);
  });

  it('should check x-api-key with apiKeyAuth', async () => {
    const keyed = await probeServer({}, { guard: guardFromMiddleware([apiKeyAuth({ keys: ['key-123'] })]) });
    const good = new grpc.Metadata();
    good.set('x-api-key', 'key-123');
    const bad = new grpc.Metadata();
    bad.set('x-api-key', 'nope');
    const ok = await unary(keyed.client, 'Unary', { text: 'k' }, good);
    const rejected = await unary(keyed.client, 'Unary', {}, bad);
    const missing = await unary(keyed.client, 'Unary', {});
    await keyed.close();
    assert.equal(ok.error, undefined);
    assert.equal(rejected.error?.code, GrpcStatus.UNAUTHENTICATED);
    assert.equal(rejected.error?.details, 'The provided API key is not valid');
    assert.equal(missing.error?.code, GrpcStatus.UNAUTHENTICATED);
  });
});

describe('when request ids are on', () => {
  let s: Probe;
  before(async () => {
    s = await probeServer({}, { requestId: true });
  });
  after(() => s.close());

  it('should echo the x-request-id of the call', async () => {
    const m = new grpc.Metadata();
    m.set('x-request-id', 'req-987654321');
    const r = await unary(s.client, 'Unary', {}, m);
    assert.deepEqual(r.headers?.get('x-request-id'), ['req-987654321']);
    assert.equal(s.log.calls.at(-1)!.requestId, 'req-987654321');
  });

  it('should generate one when the call has none', async () => {
    const r = await unary(s.client, 'Unary', {});
    assert.match(String(r.headers?.get('x-request-id')[0]), /^[0-9a-f-]{36}$/);
  });
});

describe('when a router has no services of its own', () => {
  it('should still serve health on a dual server', async () => {
    const router = createGrpcRouter();
    const srv = await start(router);
    const client = connect(clientFor(HEALTH_PROTO, HEALTH_PROTO_SERVICE), srv.address);
    const r = await unary(client, 'Check', { service: '' });
    client.close();
    await srv.close();
    assert.equal(router.empty, true);
    assert.equal(r.value?.status, 'SERVING');
  });
});
