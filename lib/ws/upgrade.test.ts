import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveRouter } from '../../test/helpers/ws-router.js';
import { connect } from 'node:net';
import WebSocket from 'ws';
import { HttpError } from '../http/errors.js';
import type { Middleware } from '../http/request.js';
import { middlewareGuard, originGuard } from './guard.js';
import type { WebSocketMessage } from './session.js';
import { createWebSocketUpgradeHandler, WebSocketRouter } from './upgrade.js';
import { rawHttpExchange, type RawHttpAnswer } from '../../test/helpers/raw-http.js';

let server: Server;
let close: () => Promise<void>;
let router: WebSocketRouter;
let base: string;
const seen: WebSocketMessage[][] = [];

const requestId: Middleware = function requestId(req, res, next) {
  req.requestId = 'req-42';
  res.setHeader('X-Request-ID', 'req-42');
  next();
};
const apiKey: Middleware = function apiKey(req, res, next) {
  if (req.headers['x-api-key'] === 'secret') return next();
  res.statusCode = 401;
  res.setHeader('Content-Type', 'application/problem+json');
  res.end(JSON.stringify({ type: 'about:blank', title: 'Unauthorized', status: 401 }));
};

before(async () => {
  router = new WebSocketRouter()
    .on('/echo', createWebSocketUpgradeHandler(async (ws) => {
      const log: WebSocketMessage[] = [];
      seen.push(log);
      for await (const m of ws) {
        log.push(m);
        if (m.type === 'text' && m.data === 'close-me') ws.close(4001, 'asked to');
        else if (m.type === 'text' && m.data === 'ping-me') await ws.send({ type: 'ping', data: Buffer.from('hb') });
        else if (m.type === 'text' || m.type === 'binary') await ws.send(m);
      }
    }, { maxPayload: 1024 }))
    .on('/rooms/:room', createWebSocketUpgradeHandler(async (ws) => {
      await ws.send(`room ${ws.params.room} for ${ws.request.requestId ?? 'anonymous'}`);
      ws.close(1000, 'bye');
    }, { guards: [middlewareGuard([requestId])] }))
    .on('/private', createWebSocketUpgradeHandler((ws) => ws.close(), { guards: [middlewareGuard([requestId, apiKey])] }))
    .on('/origin', createWebSocketUpgradeHandler((ws) => ws.close(), { guards: [originGuard({ allowed_origins: ['https://app.example'] })] }))
    .on('/thrower', createWebSocketUpgradeHandler(() => { throw new Error('secret detail'); }))
    .on('/teapot', createWebSocketUpgradeHandler((ws) => ws.close(), { guards: [() => { throw new HttpError(418, 'no'); }] }));
  const served = await serveRouter(router, (_req, res) => res.end());
  server = served.server;
  base = served.base;
  close = served.close;
});
after(() => close());

function open(path: string, options: WebSocket.ClientOptions = {}): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(base + path, options);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}
function closed(ws: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
}
function nextMessage(ws: WebSocket): Promise<{ data: Buffer; isBinary: boolean }> {
  return new Promise((resolve) => ws.once('message', (data: Buffer, isBinary) => resolve({ data, isBinary })));
}
/** The status line of a refused upgrade. */
function refused(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(base + path, { headers });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers as Record<string, string>, body }));
    });
    ws.once('open', () => reject(new Error('upgrade was accepted')));
    ws.once('error', () => {});
  });
}

describe('when a client exchanges messages', () => {
  it('should echo text as text', async () => {
    const ws = await open('/echo');
    ws.send('hello');
    const m = await nextMessage(ws);
    assert.equal(m.isBinary, false);
    assert.equal(m.data.toString(), 'hello');
    ws.close(1000);
    await closed(ws);
  });
  it('should echo binary as binary', async () => {
    const ws = await open('/echo');
    ws.send(Buffer.from([0, 1, 2, 255]));
    const m = await nextMessage(ws);
    assert.equal(m.isBinary, true);
    assert.deepEqual([...m.data], [0, 1, 2, 255]);
    ws.close();
    await closed(ws);
  });
  it('should deliver ping and pong to the handler and let it send a ping', async () => {
    const ws = await open('/echo');
    const gotPing = new Promise<Buffer>((r) => ws.once('ping', r));
    const autoPong = new Promise<Buffer>((r) => ws.once('pong', r));
    ws.ping(Buffer.from('p1'));
    assert.equal((await autoPong).toString(), 'p1'); // ws answers pings itself (RFC 6455 §5.5.3)
    ws.pong(Buffer.from('p2'));
    ws.send('ping-me');
    assert.equal((await gotPing).toString(), 'hb');
    ws.close(1000, 'done');
    await closed(ws);
    await new Promise((r) => setImmediate(r));
    const log = seen.at(-1)!;
    assert.deepEqual(log.filter((m) => m.type === 'ping' || m.type === 'pong').map((m) => [m.type, (m as { data: Buffer }).data.toString()]), [
      ['ping', 'p1'], ['pong', 'p2'], ['pong', 'hb'], // the last: the client's automatic answer to our ping
    ]);
    assert.deepEqual(log.at(-1), { type: 'close', code: 1000, reason: 'done' });
  });
  it('should close with the handler\'s code and reason', async () => {
    const ws = await open('/echo');
    const done = closed(ws);
    ws.send('close-me');
    assert.deepEqual(await done, { code: 4001, reason: 'asked to' });
  });
  it('should report 1005 when the peer closes without a code', async () => {
    const ws = await open('/echo');
    ws.close();
    await closed(ws);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(seen.at(-1)!.at(-1), { type: 'close', code: 1005, reason: '' });
  });
});

describe('when a frame breaks the rules', () => {
  it('should close with 1009 for a message over maxPayload', async () => {
    const ws = await open('/echo');
    const done = closed(ws);
    ws.send('x'.repeat(2048));
    assert.equal((await done).code, 1009);
  });
  it('should close with 1007 for a text frame that is not UTF-8', async () => {
    const port = (server.address() as AddressInfo).port;
    // Hand-written handshake and frame: ws clients refuse to send invalid UTF-8.
    const sock = connect(port, '127.0.0.1');
    const key = Buffer.from('0123456789abcdef').toString('base64');
    sock.write(`GET /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    const chunks: Buffer[] = [];
    sock.on('data', (c: Buffer) => chunks.push(c));
    await new Promise<void>((r) => sock.once('data', () => r()));
    const payload = Buffer.from([0xc3, 0x28]); // invalid 2-byte sequence
    const mask = Buffer.from([1, 2, 3, 4]);
    const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
    sock.write(Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]));
    await new Promise((r) => sock.once('close', r));
    const all = Buffer.concat(chunks);
    const frameStart = all.indexOf('\r\n\r\n') + 4;
    const frame = all.subarray(frameStart);
    assert.equal(frame[0], 0x88, 'a close frame');
    assert.equal(frame.readUInt16BE(2), 1007);
  });
  it('should close with 1011 and no detail when the handler throws', async () => {
    const ws = await open('/thrower');
    const { code, reason } = await closed(ws);
    assert.equal(code, 1011);
    assert.equal(reason.includes('secret'), false);
  });
});

describe('when routing upgrades', () => {
  it('should pass path parameters and guard results to the handler and the 101 response', async () => {
    const ws = new WebSocket(`${base}/rooms/blue`);
    const upgrade = new Promise<Record<string, unknown>>((r) => ws.once('upgrade', (res) => r(res.headers)));
    const msg = await nextMessage(ws);
    assert.equal(msg.data.toString(), 'room blue for req-42');
    assert.equal((await upgrade)['x-request-id'], 'req-42');
    await closed(ws);
  });
  it('should answer 404 problem details for an unknown path', async () => {
    const r = await refused('/nowhere');
    assert.equal(r.status, 404);
    assert.match(r.headers['content-type']!, /application\/problem\+json/);
    assert.equal(JSON.parse(r.body).status, 404);
  });
});

describe('when an upgrade guard rejects', () => {
  it('should answer with the middleware\'s own 401 response', async () => {
    const r = await refused('/private');
    assert.equal(r.status, 401);
    assert.equal(r.headers['x-request-id'], 'req-42');
    assert.equal(JSON.parse(r.body).title, 'Unauthorized');
  });
  it('should accept the upgrade when the middleware passes', async () => {
    const ws = await open('/private', { headers: { 'X-API-Key': 'secret' } });
    await closed(ws);
  });
  it('should answer 403 for a browser origin the CORS record does not allow', async () => {
    const r = await refused('/origin', { Origin: 'https://evil.example' });
    assert.equal(r.status, 403);
    assert.match(JSON.parse(r.body).detail, /evil\.example/);
  });
  it('should accept an allowed origin and clients without an Origin header', async () => {
    await closed(await open('/origin', { headers: { Origin: 'https://app.example' } }));
    await closed(await open('/origin'));
  });
  it('should turn a thrown HttpError into problem details with its status', async () => {
    const r = await refused('/teapot');
    assert.equal(r.status, 418);
    assert.equal(JSON.parse(r.body).detail, 'no');
  });
});

/** Send `request` on a raw TCP socket and read the whole answer (the server closes after a refusal). */
function rawExchange(request: string): Promise<RawHttpAnswer> {
  return rawHttpExchange((server.address() as AddressInfo).port, request);
}
function handshake(path: string, { method = 'GET', drop = [] as string[], add = [] as string[] } = {}): string {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: localhost', 'Connection: Upgrade', 'Upgrade: websocket',
    'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=='].filter((l) => !drop.some((d) => l.startsWith(d)));
  return [...lines, ...add].join('\r\n') + '\r\n\r\n';
}

describe('when a handshake is malformed (checked by ws)', () => {
  const cases: [string, string, number, RegExp][] = [
    ['a method other than GET', handshake('/rooms/x', { method: 'POST' }), 405, /GET request/],
    ['no Sec-WebSocket-Key', handshake('/rooms/x', { drop: ['Sec-WebSocket-Key'] }), 400, /Sec-WebSocket-Key/],
    ['a bad Sec-WebSocket-Key', handshake('/rooms/x', { drop: ['Sec-WebSocket-Key'], add: ['Sec-WebSocket-Key: short'] }), 400, /Sec-WebSocket-Key/],
    ['an unknown Sec-WebSocket-Version', handshake('/rooms/x', { drop: ['Sec-WebSocket-Version'], add: ['Sec-WebSocket-Version: 7'] }), 400, /Sec-WebSocket-Version/],
    ['a malformed Sec-WebSocket-Protocol', handshake('/rooms/x', { add: ['Sec-WebSocket-Protocol: a,,b'] }), 400, /Sec-WebSocket-Protocol/],
    ['an Upgrade other than websocket', handshake('/rooms/x', { drop: ['Upgrade:'], add: ['Upgrade: h2c'] }), 400, /Upgrade header/],
  ];
  for (const [what, request, status, detail] of cases) {
    it(`should answer ${status} problem+json, not text/html, for ${what}`, async () => {
      const r = await rawExchange(request);
      assert.equal(r.status, status);
      assert.equal(r.headers['content-type'], 'application/problem+json');
      const problem = JSON.parse(r.body);
      assert.equal(problem.status, status);
      assert.match(problem.detail, detail);
      // The guards ran before ws's checks: their headers are on the refusal too.
      assert.equal(r.headers['x-request-id'], 'req-42');
    });
  }
  it('should name the versions it speaks and the method it allows', async () => {
    assert.equal((await rawExchange(handshake('/echo', { drop: ['Sec-WebSocket-Version'], add: ['Sec-WebSocket-Version: 7'] }))).headers['sec-websocket-version'], '13, 8');
    assert.equal((await rawExchange(handshake('/echo', { method: 'PUT' }))).headers.allow, 'GET');
  });
  it('should answer an unknown path with a 404 problem over a raw socket', async () => {
    const r = await rawExchange(handshake('/nowhere'));
    assert.equal(r.status, 404);
    assert.equal(r.headers['content-type'], 'application/problem+json');
  });
});

describe('when an upgrade arrives after the route was closed (shutdown)', () => {
  it('should answer 503 problem+json with Retry-After', async () => {
    const handler = createWebSocketUpgradeHandler((ws) => ws.close());
    const closing = createServer().listen(0, '127.0.0.1');
    closing.on('upgrade', handler);
    await new Promise((r) => closing.once('listening', r));
    await handler.close();
    const r = await new Promise<{ status: number; headers: Record<string, string>; body: string }>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${(closing.address() as AddressInfo).port}/`);
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers as Record<string, string>, body }));
      });
      ws.once('error', () => {});
    });
    await new Promise((r) => closing.close(r));
    assert.equal(r.status, 503);
    assert.equal(r.headers['content-type'], 'application/problem+json');
    assert.equal(r.headers['retry-after'], '1');
    assert.equal(JSON.parse(r.body).detail, 'The server is shutting down');
  });
});

describe('when a route has maxConnections open', () => {
  it('should refuse one more with 503 problem+json and accept again once one closes', async () => {
    const handler = createWebSocketUpgradeHandler(async (ws) => {
      for await (const _ of ws) { /* hold */ }
    }, { maxConnections: 2 });
    const srv = createServer().listen(0, '127.0.0.1');
    srv.on('upgrade', handler);
    await new Promise((r) => srv.once('listening', r));
    const url = `ws://127.0.0.1:${(srv.address() as AddressInfo).port}/`;
    const openOne = () => new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.once('open', () => resolve(ws));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c));
        res.on('end', () => reject(Object.assign(new Error('refused'), { status: res.statusCode, type: res.headers['content-type'], retry: res.headers['retry-after'], body })));
      });
    });
    const [a, b] = [await openOne(), await openOne()];
    await assert.rejects(openOne(), (e: { status: number; type: string; retry: string; body: string }) => {
      assert.deepEqual([e.status, e.type, e.retry], [503, 'application/problem+json', '5']);
      assert.match(JSON.parse(e.body).detail, /2 connections open/);
      return true;
    });
    a.close();
    await closed(a);
    // The server sees the close after the client: wait until a place is free again (bounded).
    let c: WebSocket | undefined;
    for (let i = 0; i < 50 && !c; i++) c = await openOne().catch(() => new Promise<undefined>((r) => setTimeout(() => r(undefined), 20)));
    assert.ok(c, 'a connection is accepted again');
    b.terminate();
    c.terminate();
    await handler.close();
    await new Promise((r) => srv.close(r));
  });
  it('should refuse a maxConnections that is not a positive integer', () => {
    for (const bad of [0, -1, 2.5]) assert.throws(() => createWebSocketUpgradeHandler(() => {}, { maxConnections: bad }), /maxConnections must be a positive integer/);
  });
});
