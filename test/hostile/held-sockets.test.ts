/**
 * Attack replay (issue 13, item 3): sockets held open after an early answer. node:http keeps reading
 * an unanswered request body to the end, however slow or large; keel discards at most
 * `unread_body_max_bytes` within `unread_body_timeout_ms` and then closes the socket. A body trickled
 * in *before* any answer is bounded by `request_receive_timeout_ms`. Raw sockets (node:net) on loopback.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { App } from '../../lib/app/app.js';
import { readRawBody } from '../../lib/http/body.js';
import type { ServerHandle } from '../../lib/server/server.js';
import { ConfigError } from '../../lib/http/errors.js';
import type { ConnectionLimitsInput } from '../../lib/server/connections.js';

interface Held {
  /** Everything the server sent. */
  received: string;
  /** ms from the first answer byte to the socket's close (undefined: still open at the test's limit). */
  closedAfterAnswerMs: number | undefined;
  /** Request bytes the client managed to write. */
  written: number;
}

/**
 * Send `head`, then `chunk` every `everyMs` (0: as fast as the socket takes them) until `maxBytes` or
 * the socket closes; give up after `waitMs`.
 */
function holdOpen(port: number, head: string, chunk: Buffer, everyMs: number, maxBytes: number, waitMs: number): Promise<Held> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    let answeredAt: number | undefined;
    let written = 0;
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ received, closedAfterAnswerMs: closed && answeredAt !== undefined ? Date.now() - answeredAt : undefined, written });
    };
    const giveUp = setTimeout(() => finish(false), waitMs);
    socket.on('data', (c: Buffer) => {
      answeredAt ??= Date.now();
      received += c.toString('latin1');
    });
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    const pump = () => {
      if (done || socket.destroyed) return;
      if (written >= maxBytes) return;
      if (everyMs > 0) {
        socket.write(chunk);
        written += chunk.length;
        timer = setTimeout(pump, everyMs);
        return;
      }
      while (written < maxBytes && !socket.destroyed) {
        written += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
    };
    socket.once('connect', () => {
      socket.write(head);
      pump();
    });
  });
}

async function serve(limits: ConnectionLimitsInput, config: Record<string, unknown> = {}): Promise<ServerHandle> {
  const app = new App({ host: '127.0.0.1', port: 0, max_body_size: 1024, ...config });
  app.get('/x', () => ({ ok: true }));
  app.post('/echo', (d) => ({ got: d.body }));
  // A node-level handler that reads its body the slow way: it answers only once the body is complete.
  app.mount('POST', '/raw', async (req, res) => {
    const body = await readRawBody(req, null);
    res.end(String(body.length));
  });
  return app.listen({ handleSignals: false, limits });
}

const MB = 1024 * 1024;
const chunked = (path: string, extra = '') => `POST ${path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n${extra}\r\n`;

describe('when a client trickles a body after an early answer', () => {
  let server: ServerHandle;
  before(async () => (server = await serve({ unread_body_timeout_ms: 1000 })));
  after(() => server.close());

  it('should answer the 404 with Connection: close and close the socket (chunked: size unknown, not drained)', async () => {
    const r = await holdOpen(server.port, chunked('/nope'), Buffer.from('1\r\na\r\n'), 200, 1e9, 6000);
    assert.match(r.received, /^HTTP\/1\.1 404 /);
    assert.match(r.received, /\r\nConnection: close\r\n/i);
    assert.ok(r.closedAfterAnswerMs !== undefined, 'the socket was still open after 6 s');
    assert.ok(r.closedAfterAnswerMs < 2500, `closed ${r.closedAfterAnswerMs} ms after the answer`);
  });

  it('should close the socket within the deadline for a small Content-Length body too (405)', async () => {
    const head = 'PUT /x HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n';
    const r = await holdOpen(server.port, head, Buffer.from('a'), 200, 100, 6000);
    assert.match(r.received, /^HTTP\/1\.1 405 /);
    assert.ok(r.closedAfterAnswerMs !== undefined && r.closedAfterAnswerMs < 2500, `closed after ${r.closedAfterAnswerMs} ms`);
  });

  it('should keep the connection when the small unread body arrives in time (discarded, then the next request)', async () => {
    const socket = net.connect(server.port, '127.0.0.1');
    let received = '';
    socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
    await new Promise((r) => socket.once('connect', r));
    socket.write('POST /nope HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n01234');
    await new Promise((r) => setTimeout(r, 100));
    socket.write('56789GET /x HTTP/1.1\r\nHost: t\r\n\r\n');
    const deadline = Date.now() + 3000;
    while (!/HTTP\/1\.1 200 /.test(received) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    socket.destroy();
    assert.match(received, /^HTTP\/1\.1 404 /);
    assert.doesNotMatch(received.split('\r\n\r\n')[0]!, /Connection: close/i);
    assert.match(received, /HTTP\/1\.1 200 /, 'the second request was served on the same connection');
  });
});

describe('when a client sends a 50 MB chunked body after a 401', () => {
  let server: ServerHandle;
  before(async () => (server = await serve({}, { api_key_auth: { keys: ['k-123456789'] } })));
  after(() => server.close());

  it('should close the connection after unread_body_max_bytes instead of reading it to the end', async () => {
    const piece = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 0x61), Buffer.from('\r\n')]);
    const r = await holdOpen(server.port, chunked('/x'), piece, 0, 50 * MB, 20_000);
    assert.ok(r.closedAfterAnswerMs !== undefined, 'the socket was still open after 20 s');
    assert.ok(r.written < 50 * MB, `the client wrote ${(r.written / MB).toFixed(1)} MB before the server closed`);
    if (r.received) assert.match(r.received, /^HTTP\/1\.1 401 [^]*\r\nConnection: close\r\n/i);
  });
});

describe('when the unread-body limits are left at their defaults', () => {
  let server: ServerHandle;
  before(async () => (server = await serve({})));
  after(() => server.close());

  it('should still close a socket trickling a small body (5 s deadline)', async () => {
    const head = 'POST /nope HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n';
    const r = await holdOpen(server.port, head, Buffer.from('a'), 500, 100, 9000);
    assert.match(r.received, /^HTTP\/1\.1 404 /);
    assert.ok(r.closedAfterAnswerMs !== undefined && r.closedAfterAnswerMs < 7000, `closed after ${r.closedAfterAnswerMs} ms`);
    assert.ok(r.closedAfterAnswerMs >= 4000, `not before the deadline (${r.closedAfterAnswerMs} ms)`);
  });
});

describe('when a body trickles in before any answer', () => {
  let server: ServerHandle;
  before(async () => (server = await serve({ request_receive_timeout_ms: 1500, headers_timeout_ms: 1000, connections_check_interval_ms: 250 })));
  after(() => server.close());

  it('should answer 408 and close once request_receive_timeout_ms has passed', async () => {
    const started = Date.now();
    const r = await holdOpen(server.port, chunked('/raw'), Buffer.from('1\r\na\r\n'), 200, 1e9, 8000);
    assert.match(r.received, /^HTTP\/1\.1 408 /);
    assert.ok(r.closedAfterAnswerMs !== undefined, 'the socket was still open after 8 s');
    assert.ok(Date.now() - started < 4000, `closed after ${Date.now() - started} ms`);
  });
});

describe('when a client sends headers slowly (slowloris, held in the attack run)', () => {
  let server: ServerHandle;
  before(async () => (server = await serve({ headers_timeout_ms: 1000, request_receive_timeout_ms: 2000, connections_check_interval_ms: 250 })));
  after(() => server.close());

  it('should answer 408 and close once headers_timeout_ms has passed', async () => {
    const started = Date.now();
    const socket = net.connect(server.port, '127.0.0.1');
    let received = '';
    socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET /x HTTP/1.1\r\nHost: t\r\n');
    const trickle = setInterval(() => socket.writable && socket.write('X-Slow: 1\r\n'), 200);
    const closed = await Promise.race([new Promise<boolean>((r) => socket.once('close', () => r(true))), new Promise<boolean>((r) => setTimeout(() => r(false), 6000))]);
    clearInterval(trickle);
    socket.destroy();
    assert.ok(closed, 'the socket was still open after 6 s');
    assert.match(received, /^HTTP\/1\.1 408 /);
    assert.ok(Date.now() - started < 3500, `closed after ${Date.now() - started} ms`);
  });
});

describe('when a client declares a 50 MB body over max_body_size (held in the attack run)', () => {
  let server: ServerHandle;
  before(async () => (server = await serve({})));
  after(() => server.close());

  it('should answer 413 with Connection: close before reading the body, and close', async () => {
    const head = `POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${50 * MB}\r\n\r\n`;
    const r = await holdOpen(server.port, head, Buffer.alloc(0x10000, 0x61), 0, 50 * MB, 20_000);
    assert.ok(r.closedAfterAnswerMs !== undefined, 'the socket was still open after 20 s');
    assert.ok(r.written < 50 * MB, `the client wrote ${(r.written / MB).toFixed(1)} MB`);
    if (r.received) assert.match(r.received, /^HTTP\/1\.1 413 [^]*\r\nConnection: close\r\n/i);
  });
});

describe('when a body is read by its handler', () => {
  let server: ServerHandle;
  before(async () => (server = await serve({ unread_body_max_bytes: 16 })));
  after(() => server.close());

  it('should keep the connection alive even when the body is over unread_body_max_bytes', async () => {
    const socket = net.connect(server.port, '127.0.0.1');
    let received = '';
    socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
    await new Promise((r) => socket.once('connect', r));
    const body = JSON.stringify({ text: 'x'.repeat(200) });
    socket.write(`${chunked('/echo')}${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\nGET /x HTTP/1.1\r\nHost: t\r\n\r\n`);
    const deadline = Date.now() + 3000;
    while ((received.match(/HTTP\/1\.1 200 /g) ?? []).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    socket.destroy();
    assert.equal((received.match(/HTTP\/1\.1 200 /g) ?? []).length, 2, received);
    assert.doesNotMatch(received, /Connection: close/i);
  });
});

describe('when the connection limits are misconfigured', () => {
  it('should refuse them at listen() with a ConfigError naming the key', async () => {
    const app = new App({ host: '127.0.0.1', port: 0 });
    await assert.rejects(app.listen({ handleSignals: false, limits: { unread_body_max_bytes: -1 } }), (err: unknown) =>
      err instanceof ConfigError && /ListenOptions\.limits\.unread_body_max_bytes/.test(err.message));
    await assert.rejects(app.listen({ handleSignals: false, limits: { headers_timeout_ms: 90_000 } }), (err: unknown) =>
      err instanceof ConfigError && /headers_timeout_ms/.test(err.message) && /request_receive_timeout_ms/.test(err.message));
    await assert.rejects(app.listen({ handleSignals: false, limits: { unreadBodyMaxByte: 1 } as never }), (err: unknown) =>
      err instanceof ConfigError && /unread_body_max_bytes/.test(err.message));
  });
});
