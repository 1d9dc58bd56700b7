/**
 * Attack replay (issue 44 #5): `trust_proxy: true` (or a hop count) let any direct client choose its own per-client
 * key with a rotating X-Forwarded-For, and switched per-client connection counting off for every client, with
 * nothing said at start-up. Now: a start-up warning naming the safe forms; under `true` / hop counts connections are
 * counted per peer; with the proxy named by address, its own connections are not counted but every other peer's are,
 * and a direct client's X-Forwarded-For is ignored. Real sockets from 127.0.0.1 and 127.0.0.2 (the "proxy").
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { App } from '../../lib/app/app.js';
import type { ServerConfigInput } from '../../lib/records/server.js';
import { captureLogs, type LogRecord } from '../helpers/log-capture.js';

async function serve(config: ServerConfigInput) {
  const logs: LogRecord[] = [];
  const { logger } = captureLogs((r) => (logs.push(r), false));
  const app = new App({ host: '127.0.0.1', port: 0, ...config }, { logger });
  app.get('/hello', () => ({ hello: 'http' }));
  const handle = await app.listen({ handleSignals: false });
  return { port: handle.port, url: handle.url, logs, close: () => handle.close() };
}

/** An HTTP/1.1 keep-alive connection from `localAddress` that sent one request; resolves with the status it got. */
function held(port: number, localAddress: string, headers = ''): Promise<{ status: number; socket: net.Socket }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => socket.write(`GET /hello HTTP/1.1\r\nHost: x\r\n${headers}\r\n`));
    socket.once('data', (d) => resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(d.toString())?.[1]), socket }));
    socket.once('error', reject);
  });
}

const warnings = (logs: LogRecord[]) => logs.filter((r) => r.level === 40 && String(r.msg).includes('trust_proxy'));

describe('when trust_proxy trusts whoever connects', () => {
  for (const trust of [true, 1] as const) {
    it(`should warn at start-up for ${JSON.stringify(trust)}, naming the safe forms`, async () => {
      const s = await serve({ trust_proxy: trust });
      try {
        const [line] = warnings(s.logs);
        assert.ok(line, 'a warn line');
        assert.deepEqual(line.trust_proxy, trust);
        assert.match(String(line.msg), /addresses or subnets/);
      } finally {
        await s.close();
      }
    });

    it(`should still count a direct client's connections under ${JSON.stringify(trust)}, whatever X-Forwarded-For it sends`, async () => {
      const s = await serve({ trust_proxy: trust, max_connections_per_client: 3 });
      const sockets: net.Socket[] = [];
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 5; i++) {
          const { status, socket } = await held(s.port, '127.0.0.1', `X-Forwarded-For: 198.51.100.${i}\r\n`);
          statuses.push(status);
          sockets.push(socket);
        }
        assert.deepEqual(statuses, [200, 200, 200, 503, 503]);
      } finally {
        for (const socket of sockets) socket.destroy();
        await s.close();
      }
    });
  }
});

describe('when trust_proxy names the proxy by address', () => {
  it('should not warn, count every peer but the proxy, and ignore a direct client\'s X-Forwarded-For', async () => {
    const s = await serve({ trust_proxy: '127.0.0.2', max_connections_per_client: 2, rate_limit: { per_second: 0.01, burst: 2 } });
    const sockets: net.Socket[] = [];
    try {
      assert.deepEqual(warnings(s.logs), []);
      // The proxy: more connections than the cap, each for another forwarded client, all served.
      for (let i = 0; i < 4; i++) {
        const { status, socket } = await held(s.port, '127.0.0.2', `X-Forwarded-For: 198.51.100.${i}\r\n`);
        assert.equal(status, 200, `proxy connection ${i}`);
        sockets.push(socket);
      }
      // A direct client rotating X-Forwarded-For: its connections are counted, its header not believed (the
      // rate limit's burst of 2 is its own, not one per forged address).
      const direct: number[] = [];
      for (let i = 0; i < 3; i++) {
        const { status, socket } = await held(s.port, '127.0.0.1', `X-Forwarded-For: 203.0.113.${i}\r\n`);
        direct.push(status);
        sockets.push(socket);
      }
      assert.deepEqual(direct, [200, 200, 503]);
      for (const socket of sockets.splice(4)) socket.destroy();
      await new Promise((r) => setTimeout(r, 50));
      const third = await held(s.port, '127.0.0.1', 'X-Forwarded-For: 203.0.113.99\r\n');
      sockets.push(third.socket);
      assert.equal(third.status, 429, 'the direct client\'s own rate limit, not a forged one');
    } finally {
      for (const socket of sockets) socket.destroy();
      await s.close();
    }
  });
});

describe('when trust_proxy is off or 0', () => {
  for (const trust of [false, 0] as const) {
    it(`should not warn for ${JSON.stringify(trust)}`, async () => {
      const s = await serve({ trust_proxy: trust });
      try {
        assert.deepEqual(warnings(s.logs), []);
      } finally {
        await s.close();
      }
    });
  }
});
