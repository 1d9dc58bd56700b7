/**
 * Issue 35 item 6: keel/express's `app.set('connection limits')` parsed `connections_check_interval_ms` and
 * never applied it, so node checked the deadlines every 30 s: a 2 s headers deadline closed a slowloris after
 * 30 s, and the 30 s / 60 s defaults only after 57.7 s / 71 s.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { DEFAULT_CONNECTIONS_CHECK_INTERVAL_MS } from '../../lib/server/connections.js';

/** Headers trickled one line per `everyMs` until the server answers or closes; resolves with what it said and when. */
function slowloris(port: number, everyMs: number, giveUpMs: number): Promise<{ text: string; ms: number; closed: boolean }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let n = 0;
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => socket.writable && socket.write(`X-Drip-${n++}: ${'a'.repeat(8)}\r\n`), everyMs);
    const done = (closed: boolean) => {
      clearInterval(drip);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ text, ms: performance.now() - started, closed });
    };
    const giveUp = setTimeout(() => done(false), giveUpMs);
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => done(true));
  });
}

describe("hostile: a slowloris against keel/express with app.set('connection limits')", () => {
  it('should close it once the 2 s headers deadline has passed, checked every connections_check_interval_ms', async () => {
    const { default: express } = await import('../../express/index.js');
    const app = express();
    app.get('/', (_req: unknown, res: { send(b: string): void }) => res.send('ok'));
    app.set('connection limits', { headers_timeout_ms: 2_000, request_receive_timeout_ms: 4_000, connections_check_interval_ms: 200 });
    const server: http.Server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      assert.equal((server as http.Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval, 200);
      const { port } = server.address() as AddressInfo;
      // Given up at 20 s: before the fix node checked every 30 s, so the attack was still running then.
      const out = await slowloris(port, 100, 20_000);
      assert.equal(out.closed, true, `still open after ${Math.round(out.ms)} ms`);
      assert.match(out.text, /^HTTP\/1\.1 408 /);
      // Not before the deadline; after it, within node's check interval (plus a busy machine's slack).
      assert.ok(out.ms >= 1_900, `closed after ${Math.round(out.ms)} ms, before the 2 s deadline`);
      assert.ok(out.ms < 15_000, `closed after ${Math.round(out.ms)} ms`);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('should check the default deadlines every second (DEFAULT_CONNECTIONS_CHECK_INTERVAL_MS), not node\'s 30 s', async () => {
    const { default: express } = await import('../../express/index.js');
    const app = express();
    app.set('connection limits', true);
    const server: http.Server = app.listen(0, '127.0.0.1');
    try {
      assert.equal((server as http.Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval, DEFAULT_CONNECTIONS_CHECK_INTERVAL_MS);
      assert.deepEqual([server.headersTimeout, server.requestTimeout], [30_000, 60_000]);
    } finally {
      server.close();
    }
  });
});
