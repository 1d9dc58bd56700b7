/**
 * Attack replay (issue 44 #7): under `ulimit -n 256`, 3 addresses × 90 idle WebSockets (or slowloris) took every file
 * descriptor and failed every `/health` from a fourth address. Now `max_connections` (per server) admits an address
 * holding fewer connections than the heaviest one by closing the heaviest address's oldest idle connection, and
 * closes a new connection from the heaviest address itself. CI size: a cap of 6, addresses 127.0.0.2–5.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import WebSocket from 'ws';
import { App } from '../../lib/app/app.js';
import { resolveMaxConnections } from '../../lib/server/connection-cap.js';
import { ConfigError } from '../../lib/http/errors.js';
import { until } from './h2c.js';

async function serve(max: number) {
  const app = new App({ host: '127.0.0.1', port: 0, max_connections: max, rate_limit: null });
  app.get('/health', () => ({ status: 'ok' }));
  app.ws('/idle', async (ws) => {
    for await (const _ of ws);
  });
  const handle = await app.listen({ handleSignals: false });
  return { port: handle.port, url: handle.url, close: () => handle.close() };
}

/** A socket from `localAddress` that sent half a request line and stopped (slowloris). */
function slowloris(port: number, localAddress: string): Promise<net.Socket & { closedNow: () => boolean }> {
  return new Promise((resolve, reject) => {
    let closed = false;
    const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => {
      socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
      resolve(Object.assign(socket, { closedNow: () => closed }));
    });
    socket.on('close', () => (closed = true));
    socket.once('error', () => {});
    socket.once('connect', () => socket.off('error', reject));
  });
}

function openWs(port: number, localAddress: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/idle`, { localAddress });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** GET /health from `localAddress` on a new connection: the status, or 'closed'. */
function health(port: number, localAddress: string): Promise<number | 'closed'> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => socket.write('GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('error', () => {});
    socket.on('close', () => resolve(text ? Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]) : 'closed'));
  });
}

describe('when a few addresses hold every connection the server allows', () => {
  it('should still serve a fourth address, closing an idle connection of the heaviest address', async () => {
    const s = await serve(7);
    const held: WebSocket[] = [];
    const lorises: (net.Socket & { closedNow: () => boolean })[] = [];
    try {
      for (const address of ['127.0.0.2', '127.0.0.3']) for (let i = 0; i < 2; i++) held.push(await openWs(s.port, address));
      // The heaviest address: three slowloris sockets (idle: no answer in progress).
      for (let i = 0; i < 3; i++) lorises.push(await slowloris(s.port, '127.0.0.4'));
      await new Promise((r) => setTimeout(r, 50));
      // At the cap (7): a fourth address is served, and only the heaviest address lost a connection.
      assert.equal(await health(s.port, '127.0.0.5'), 200);
      await until('a slowloris socket closed', () => lorises.some((l) => l.closedNow()));
      assert.ok(held.every((ws) => ws.readyState === WebSocket.OPEN), 'the lighter addresses kept theirs');
      assert.equal(lorises.filter((l) => l.closedNow()).length, 1);
      // Now 2 + 2 + 2 + the fourth's (closed after its answer): the heaviest addresses cannot grow past their
      // share, their new connections are closed at accept.
      const more = await slowloris(s.port, '127.0.0.5');
      assert.equal(await health(s.port, '127.0.0.2'), 'closed');
      more.destroy();
    } finally {
      for (const ws of held) ws.terminate();
      for (const l of lorises) l.destroy();
      await s.close();
    }
  });

  it('should serve every address when under the cap', async () => {
    const s = await serve(6);
    try {
      for (const address of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) assert.equal(await health(s.port, address), 200);
    } finally {
      await s.close();
    }
  });
});

describe('when max_connections is configured', () => {
  it("should resolve 'auto' to 80 % of the file-descriptor limit, and none without one", () => {
    assert.equal(resolveMaxConnections('auto', 256), 204);
    assert.equal(resolveMaxConnections('auto', null), null);
    assert.equal(resolveMaxConnections(50, 256), 50);
    assert.equal(resolveMaxConnections(null, 256), null);
  });

  for (const bad of [0, -1, 1.5, 'many']) {
    it(`should refuse max_connections: ${JSON.stringify(bad)} at start-up, naming the key`, () => {
      assert.throws(() => new App({ max_connections: bad as never }), (err: unknown) => err instanceof ConfigError && err.message.includes('max_connections'));
    });
  }
});
