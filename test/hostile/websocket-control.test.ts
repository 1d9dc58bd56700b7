/**
 * Issue 44 items 5 and 7, over real `ws` clients: unsolicited PONG frames were never limited (50 sockets × 200,000
 * PONGs: 12 s of server CPU, `/health` p99 up to 2.4 s, no socket closed), and WebSockets had no idle timeout
 * (3 addresses × 90 idle sockets held every file descriptor of a server at `ulimit -n 256`). What is asserted is
 * the outcome (closed, and with which code); `/health` latencies are `npm run floods -- --only pong`'s.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as turn, setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { pino } from 'pino';
import { createApp, type ServerHandle } from '../../lib/index.js';
import { ServerConfig } from '../../lib/records/server.js';
import { CLOSE_IDLE, CLOSE_POLICY_VIOLATION, fairnessOptions } from '../../lib/ws/fairness.js';

const silent = { logger: pino({ level: 'silent' }) };

async function start(config: Record<string, unknown> = {}): Promise<ServerHandle> {
  const app = createApp({ port: 0, host: '127.0.0.1', rate_limit: null, ...config }, (a) => {
    a.get('/health', () => ({ status: 'ok' }));
    a.ws('/ws/echo', async (ws) => {
      for await (const m of ws) if (m.type === 'text') await ws.send(m);
    });
  }, silent);
  return app.listen({ handleSignals: false });
}

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** Resolves with the close code once `ws` is closed, or undefined after `ms`. */
function closeCode(ws: WebSocket, ms: number): Promise<number | undefined> {
  if (ws.readyState === WebSocket.CLOSED) return Promise.resolve((ws as WebSocket & { _closeCode?: number })._closeCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    ws.once('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

describe('when 50 sockets flood unsolicited PONG frames (issue 44 item 6)', () => {
  let server: ServerHandle;
  before(async () => (server = await start()));
  after(() => server.close());

  it('should close at least 45 of them with 1008 and keep serving another socket and /health', async () => {
    const url = `${server.url.replace('http', 'ws')}/ws/echo`;
    const sockets = await Promise.all(Array.from({ length: 50 }, () => open(url)));
    const codes = sockets.map((ws) => closeCode(ws, 30_000));
    sockets.forEach((ws) => ws.on('error', () => {}));
    // 5,000 PONGs each (the replay: 200,000), written as fast as the sockets take them.
    for (let k = 0; k < 5000; k += 250) {
      for (const ws of sockets) for (let i = 0; i < 250 && ws.readyState === WebSocket.OPEN; i++) ws.pong();
      await turn();
    }
    const health = await fetch(`${server.url}/health`);
    assert.equal(health.status, 200);
    const closed = await Promise.all(codes);
    const policy = closed.filter((c) => c === CLOSE_POLICY_VIOLATION).length;
    assert.ok(policy >= 45, `close codes ${JSON.stringify(closed)}`);
    const other = await open(url);
    const echo = new Promise((resolve) => other.once('message', (d) => resolve(d.toString())));
    other.send('still here');
    assert.equal(await echo, 'still here');
    other.close();
  });

  it('should let a socket answer pings and send a few pongs within its rate', async () => {
    const ws = await open(`${server.url.replace('http', 'ws')}/ws/echo`);
    for (let i = 0; i < 50; i++) ws.pong();
    const echo = new Promise((resolve) => ws.once('message', (d) => resolve(d.toString())));
    ws.send('after pongs');
    assert.equal(await echo, 'after pongs');
    assert.equal(ws.readyState, WebSocket.OPEN);
    ws.close();
  });
});

describe('when a WebSocket sends nothing for ws_idle_timeout (issue 44 item 7)', () => {
  let server: ServerHandle;
  before(async () => (server = await start({ ws_idle_timeout: 1 })));
  after(() => server.close());

  it('should close a silent socket with 1001 and keep one that sends pings or messages', async () => {
    const url = `${server.url.replace('http', 'ws')}/ws/echo`;
    const [silentWs, pinging, talking] = await Promise.all([open(url), open(url), open(url)]);
    const codes = [silentWs, pinging, talking].map((ws) => closeCode(ws, 5_000));
    const keepAlive = setInterval(() => {
      pinging.ping();
      talking.send('hi');
    }, 200);
    try {
      assert.equal(await codes[0], CLOSE_IDLE);
      // Two more timeouts: the others are still open.
      await sleep(2000);
      assert.equal(pinging.readyState, WebSocket.OPEN);
      assert.equal(talking.readyState, WebSocket.OPEN);
    } finally {
      clearInterval(keepAlive);
    }
    pinging.close();
    talking.close();
  });
});

describe('when ws_idle_timeout is set wrongly', () => {
  for (const value of [0, -1, 1.5e9, '60s']) {
    it(`should refuse ${JSON.stringify(value)} naming the key`, () => {
      assert.throws(() => ServerConfig.parse({ ws_idle_timeout: value }), /ws_idle_timeout/);
    });
  }
  it('should refuse a route idleTimeout of 0 naming the option', () => {
    assert.throws(() => fairnessOptions({ idleTimeout: 0 }), /idleTimeout/);
  });
  it('should default to 120 s, and take null for none', () => {
    assert.equal(ServerConfig.parse({}).ws_idle_timeout, 120);
    assert.equal(fairnessOptions({ idleTimeout: null }).idleTimeout, null);
  });
});
