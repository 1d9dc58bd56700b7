/**
 * `npm run floods [-- --only message,chat,chat-spread,graphql,teardown,subscribe,spread,grpc-burst,grpc-burst-idle,grpc-stream,add-book,multipart,pong,rapid-reset,rapid-reset-node] [--root DIR] [--shipped] [--interval MS]`: the
 * WebSocket floods of issue 26 replayed against the example server, with `/health` measured from
 * another process during each.
 *
 * The server is examples/server.ts in its own process (bench/floods-server.ts: rate limit off, so the
 * floods are not refused by the HTTP rate limit before they reach the WebSocket rules; it also reports
 * its own event-loop delay); `/health` is probed by bench/health-probe.mjs, a third process, one
 * request at a time; the flood clients run here. On a loaded machine the probe's latencies include
 * CPU starvation of the processes; the server's loop delay is what the server itself spent stalled.
 * `--root` starts the server from another checkout (e.g. an export of an older commit, to get "before"
 * figures with the same floods). `--shipped` keeps the example's HTTP rate limit (the server as `npm start` runs it);
 * `--interval 100` polls `/health` every 100 ms instead of back to back. Prints one line per flood: /health n, p50, p99, max and what the flood
 * achieved. Target (issue 26): p99 ≤ 100 ms.
 */
import { fork, type ChildProcess } from 'node:child_process';
import http2 from 'node:http2';
import { once } from 'node:events';
import { setImmediate as turn, setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { freePort } from '../harness/conformance/exec.js';
import { addBook, grpcStream, multipart, pong } from './floods-accumulate.js';

const { values } = parseArgs({ options: { root: { type: 'string' }, only: { type: 'string' }, shipped: { type: 'boolean' }, interval: { type: 'string' } } });
const root = values.root ?? fileURLToPath(new URL('..', import.meta.url));
const only = values.only?.split(',');

interface Server { url: string; child: ChildProcess; reset(): void; read(): Promise<{ p99: number; max: number; rssStart: number; rssPeak: number; rssAtReset?: number; rss?: number }> }
async function startServer(): Promise<Server> {
  const port = await freePort();
  const child = fork(fileURLToPath(new URL('./floods-server.ts', import.meta.url)), [String(port), root, ...(values.shipped ? ['shipped'] : [])], { execArgv: ['--import', 'tsx', ...(process.env.FLOODS_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.FLOODS_CPU_PROF}`] : [])], stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  await new Promise((resolve) => child.once('message', resolve));
  return {
    url: `http://127.0.0.1:${port}`, child,
    reset: () => child.send('reset'),
    read: () => new Promise((r) => { child.once('message', (m) => r(m as { p99: number; max: number; rssStart: number; rssPeak: number })); child.send('read'); }),
  };
}

interface ProbeResult { latencies: number[]; failures: number }
function startProbe(url: string): Promise<{ start(): void; stop(): Promise<ProbeResult>; exit(): void }> {
  const child = fork(fileURLToPath(new URL('./health-probe.mjs', import.meta.url)), [url, ...(values.interval ? [values.interval] : [])], { stdio: 'inherit' });
  return new Promise((resolve) => child.once('message', () => resolve({
    start: () => child.send('start'),
    stop: () => new Promise((r) => { child.once('message', (m) => r(m as ProbeResult)); child.send('stop'); }),
    exit: () => child.send('exit'),
  })));
}

function pct(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;
}

function openWs(url: string, protocol?: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocol);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

async function until(check: () => boolean, ms: number, quietMs = 0, progress?: () => number): Promise<void> {
  const end = Date.now() + ms;
  let last = progress?.() ?? 0;
  let lastChange = Date.now();
  while (!check() && Date.now() < end) {
    await sleep(20);
    if (progress) {
      const now = progress();
      if (now !== last) { last = now; lastChange = Date.now(); } else if (quietMs && Date.now() - lastChange > quietMs) return;
    }
  }
}

function codes(list: (number | undefined)[]): string {
  const counts = new Map<string, number>();
  for (const c of list) counts.set(String(c ?? 'open'), (counts.get(String(c ?? 'open')) ?? 0) + 1);
  return [...counts].map(([c, n]) => `${n}×${c}`).join(' ');
}

type Flood = (ws: string, http: string) => Promise<string>;

/** One socket, 200k small valid messages to the echo route. */
const message: Flood = async (base) => {
  const ws = await openWs(`${base}/ws/echo`);
  let code: number | undefined;
  ws.on('close', (c) => { code = c; });
  let echoes = 0;
  ws.on('message', () => echoes++);
  const total = 200_000;
  let sent = 0;
  while (sent < total && code === undefined) {
    for (let i = 0; i < 5000 && sent < total; i++, sent++) ws.send('hi');
    await turn();
    while (ws.bufferedAmount > 4 << 20 && code === undefined) await sleep(1);
  }
  await until(() => code !== undefined || echoes >= sent, 120_000, 2000, () => echoes);
  ws.terminate();
  return `sent ${sent}, echoed ${echoes}, close ${code ?? 'none'}`;
};

/** `/ws/chat`: 100 listeners, `publishers` × `each` messages of 1 KB. */
function chat(publishers: number, each: number): Flood {
  return async (base) => {
    const listeners = await Promise.all(Array.from({ length: 100 }, () => openWs(`${base}/ws/chat`)));
    let frames = 0;
    const closes: (number | undefined)[] = listeners.map(() => undefined);
    const reasons = new Set<string>();
    listeners.forEach((ws, i) => { ws.on('message', () => frames++); ws.on('close', (c, r) => { closes[i] = c; if (r.length) reasons.add(r.toString()); }); });
    const pubs = await Promise.all(Array.from({ length: publishers }, () => openWs(`${base}/ws/chat`)));
    const pubCloses: (number | undefined)[] = pubs.map(() => undefined);
    pubs.forEach((ws, i) => ws.on('close', (c) => { pubCloses[i] = c; }));
    const text = 'x'.repeat(1000);
    for (let k = 0; k < each; k += 500) {
      for (const ws of pubs) for (let i = k; i < Math.min(each, k + 500); i++) if (ws.readyState === WebSocket.OPEN) ws.send(text);
      await turn();
    }
    const expected = 100 * publishers * each;
    await until(() => frames >= expected, 120_000, 3000, () => frames);
    for (const ws of [...listeners, ...pubs]) ws.terminate();
    return `${frames} of ${expected} frames to the 100 listeners; listeners ${codes(closes)}${reasons.size ? ` (${[...reasons].join('; ')})` : ''}; publishers ${codes(pubCloses)}`;
  };
}

async function graphqlSockets(base: string, count: number, perSocket: number): Promise<{ sockets: WebSocket[]; next: () => number }> {
  let nexts = 0;
  const sockets = await Promise.all(Array.from({ length: count }, async (_, k) => {
    const ws = await openWs(`${base}/graphql`, 'graphql-transport-ws');
    const ready = new Promise<void>((resolve) => ws.on('message', (d: Buffer) => {
      const m = JSON.parse(d.toString()) as { type: string; id?: string };
      if (m.type === 'next' && m.id !== 'marker') nexts++;
      if (m.type === 'connection_ack') {
        for (let i = 0; i < perSocket; i++) ws.send(JSON.stringify({ id: `s${i}`, type: 'subscribe', payload: { query: 'subscription { bookAdded { id title } }' } }));
        ws.send(JSON.stringify({ id: 'marker', type: 'subscribe', payload: { query: '{ hello }' } }));
      }
      if (m.type === 'complete' && m.id === 'marker') resolve();
    }));
    ws.send(JSON.stringify({ type: 'connection_init' }));
    await ready;
    void k;
    return ws;
  }));
  return { sockets, next: () => nexts };
}

function addBooks(http: string, n: number): Promise<unknown> {
  return Promise.all(Array.from({ length: n }, (_, i) => fetch(`${http}/graphql`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: `mutation { addBook(input: { title: "Flood ${i}", authorId: "a1" }) { id } }` }),
  }).then((r) => r.arrayBuffer())));
}

let stormSockets: WebSocket[] = [];
/** 202 sockets × 99 subscriptions (≈ 20k; 100 operations per socket with the marker query) + 5 addBook. */
const graphql: Flood = async (base, http) => {
  const { sockets, next } = await graphqlSockets(base, 202, 99);
  stormSockets = sockets;
  const subs = sockets.length * 99;
  (graphql as { start?: () => void }).start?.();
  await addBooks(http, 5);
  await until(() => next() >= subs * 5, 120_000, 3000, next);
  return `${subs} subscriptions, ${next()} of ${subs * 5} next frames`;
};
/** Closing the storm's sockets at once (their ≈ 20k subscriptions released). */
const teardown: Flood = async () => {
  for (const ws of stormSockets) ws.terminate();
  await sleep(3000);
  return `${stormSockets.length} sockets (${stormSockets.length * 99} subscriptions) dropped; /health probed for 3 s`;
};

/** 5 sockets × 30,000 subscribe messages. */
const subscribe: Flood = async (base) => {
  const sockets = await Promise.all(Array.from({ length: 5 }, () => openWs(`${base}/graphql`, 'graphql-transport-ws')));
  let answers = 0;
  const closes: (number | undefined)[] = sockets.map(() => undefined);
  sockets.forEach((ws, i) => {
    ws.on('message', () => answers++);
    ws.on('close', (c) => { closes[i] = c; });
    ws.send(JSON.stringify({ type: 'connection_init' }));
  });
  await sleep(200);
  for (let k = 0; k < 30_000; k += 1000) {
    for (const ws of sockets) for (let i = k; i < k + 1000; i++) if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ id: `s${i}`, type: 'subscribe', payload: { query: 'subscription { bookAdded { id title } }' } }));
    await turn();
  }
  await until(() => closes.every((c) => c !== undefined) || answers >= 5 * 29_900, 120_000, 3000, () => answers);
  for (const ws of sockets) ws.terminate();
  return `${answers} frames back; sockets ${codes(closes)}`;
};

/**
 * Issue 35: 400 sockets from one address, each under the per-socket rate (90 msg/s of the 100 allowed), for
 * 10 s: 36,000 msg/s offered. Counts the sockets opened and refused, the messages echoed, and how sockets closed.
 */
const spread: Flood = async (base) => {
  const results = await Promise.allSettled(Array.from({ length: 400 }, () => openWs(`${base}/ws/echo`)));
  const sockets = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const closes: (number | undefined)[] = sockets.map(() => undefined);
  let echoes = 0;
  let sent = 0;
  sockets.forEach((ws, i) => { ws.on('message', () => echoes++); ws.on('close', (c) => { closes[i] = c; }); });
  const end = performance.now() + 10_000;
  const every = 100;
  while (performance.now() < end) {
    const tick = performance.now();
    for (const ws of sockets) if (ws.readyState === WebSocket.OPEN) for (let i = 0; i < 9; i++, sent++) ws.send('hi');
    await sleep(Math.max(0, every - (performance.now() - tick)));
  }
  await until(() => echoes >= sent, 15_000, 3000, () => echoes);
  for (const ws of sockets) ws.terminate();
  return `${sockets.length} of 400 sockets opened (${results.length - sockets.length} refused); sent ${sent}, echoed ${echoes}; sockets ${codes(closes)}`;
};

/**
 * Issue 35: 100 h2c sessions × 100 unary SayHello calls from one address, all at once (the example's rate limit
 * and, since issue 35, max_calls_per_client refuse most of them). Counts the calls by grpc-status and the GOAWAYs.
 */
const grpcBurst: Flood = async (_ws, base) => burstOver(base, false);
/**
 * Issue 44 item 8: the same burst over 100 sessions opened idle first (each has the server's SETTINGS before
 * any call), the order that the held-session protection of issue 35 did not cover.
 */
const grpcBurstIdle: Flood = async (_ws, base) => burstOver(base, true);

async function burstOver(base: string, idleFirst: boolean): Promise<string> {
  const message = Buffer.from([0, 0, 0, 0, 3, 0x0a, 0x01, 0x61]);
  const statuses = new Map<string, number>();
  const goaways: number[] = [];
  const sessions = Array.from({ length: 100 }, () => {
    const session = http2.connect(base);
    session.on('error', () => {});
    session.on('goaway', (code) => goaways.push(code));
    return session;
  });
  if (idleFirst) await Promise.all(sessions.map((s) => Promise.race([once(s, 'remoteSettings'), once(s, 'close')]).catch(() => undefined)));
  if (idleFirst) server.reset();
  await Promise.all(sessions.map(async (session) => {
    await Promise.all(Array.from({ length: 100 }, () => new Promise<void>((resolve) => {
      let status = 'none';
      let stream: http2.ClientHttp2Stream;
      try {
        stream = session.request({ ':method': 'POST', ':path': '/keel.examples.v1.Greeter/SayHello', 'content-type': 'application/grpc', te: 'trailers' });
      } catch {
        statuses.set('refused session', (statuses.get('refused session') ?? 0) + 1);
        return resolve();
      }
      const take = (h: http2.IncomingHttpHeaders) => { if (h['grpc-status'] !== undefined) status = String(h['grpc-status']); };
      stream.on('response', take);
      stream.on('trailers', take);
      stream.on('error', (e: NodeJS.ErrnoException) => { status = `error ${e.code}`; });
      stream.on('data', () => {});
      stream.on('close', () => { statuses.set(status, (statuses.get(status) ?? 0) + 1); resolve(); });
      stream.end(message);
    })));
    session.close();
  }));
  return `calls by grpc-status ${[...statuses].map(([k, n]) => `${n}×${k}`).join(' ')}; GOAWAY ${goaways.length ? codes(goaways) : 'none'}`;
}

/**
 * Issue 44 #3, HTTP/2 rapid reset (CVE-2023-44487): `connections` h2c connections from one address for `seconds`,
 * each opening a stream and resetting it (RST_STREAM CANCEL) in a loop, 100 per turn, reconnecting when the server
 * closes it (as an attacker would). Counts the streams reset, the connections opened and the GOAWAYs by code.
 */
async function rapidResetAttack(base: string, connections: number, seconds: number, path = '/health'): Promise<string> {
  const end = performance.now() + seconds * 1000;
  const goaways: number[] = [];
  let streams = 0;
  let opened = 0;
  const attacker = async (): Promise<void> => {
    while (performance.now() < end) {
      const session = http2.connect(base);
      opened++;
      session.on('error', () => {});
      session.on('goaway', (code) => goaways.push(code));
      const closed = once(session, 'close').catch(() => undefined);
      await Promise.race([once(session, 'remoteSettings').catch(() => undefined), closed]);
      while (!session.closed && !session.destroyed && performance.now() < end) {
        for (let i = 0; i < 100; i++) {
          try {
            const req = session.request({ ':path': path });
            req.on('error', () => {});
            req.close(http2.constants.NGHTTP2_CANCEL);
            streams++;
          } catch {
            break;
          }
        }
        await turn();
      }
      session.destroy();
      await closed;
    }
  };
  await Promise.all(Array.from({ length: connections }, attacker));
  return `${connections} connections × ${seconds} s: ${streams} streams reset, ${opened} connections opened; GOAWAY ${goaways.length ? codes(goaways) : 'none'} (11 = ENHANCE_YOUR_CALM, 2 = nghttp2's own INTERNAL_ERROR)`;
}

function rss(m: { rssAtReset?: number; rssPeak?: number; rss?: number }): string {
  return `RSS ${m.rssAtReset?.toFixed(0)} → peak ${m.rssPeak?.toFixed(0)} MB (growth ${((m.rssPeak ?? 0) - (m.rssAtReset ?? 0)).toFixed(0)} MB), ${m.rss?.toFixed(0)} MB after`;
}

/** Rapid reset from 100 connections against the example server (keel's h2_* limits). */
const rapidReset: Flood = async (_ws, base) => {
  const what = await rapidResetAttack(base, 100, 10);
  await sleep(1000);
  return `${what}; server ${rss(await server.read())}`;
};

/**
 * The same attack against node's own HTTP/2 server (bench/floods-node-h2.ts), with its own `/health` probe (HTTP/1.1,
 * same process): the comparison. The line's own /health columns are keel's, idle meanwhile; node's are in the text.
 */
const rapidResetNode: Flood = async () => {
  const child = fork(fileURLToPath(new URL('./floods-node-h2.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  const { health, h2 } = (await new Promise((resolve) => child.once('message', resolve))) as { health: string; h2: string };
  const nodeProbe = await startProbe(health);
  try {
    child.send('reset');
    nodeProbe.start();
    const what = await rapidResetAttack(h2, 100, 10, '/');
    await sleep(1000);
    const { latencies, failures } = await nodeProbe.stop();
    const m = await new Promise<{ p99: number; max: number; rssAtReset: number; rssPeak: number; rss: number }>((r) => { child.once('message', (x) => r(x as { p99: number; max: number; rssAtReset: number; rssPeak: number; rss: number })); child.send('read'); });
    const sorted = latencies.sort((a, b) => a - b);
    return `node's own http2 server: /health n ${sorted.length}, p50 ${pct(sorted, 50).toFixed(1)}, p99 ${pct(sorted, 99).toFixed(1)}, max ${sorted.at(-1)?.toFixed(1)} ms, ${failures} failed, loop delay p99 ${m.p99.toFixed(0)} / max ${m.max.toFixed(0)} ms, ${rss(m)}; ${what}`;
  } finally {
    nodeProbe.exit();
    child.kill('SIGTERM');
  }
};

/** No flood: /health alone for 3 s, the machine's own noise. */
const idle: Flood = async () => {
  await sleep(3000);
  return 'no flood';
};

const FLOODS: [string, Flood][] = [
  ['idle', idle],
  ['message', message],
  ['chat', chat(1, 5000)],
  ['chat-spread', chat(25, 200)],
  ['graphql', graphql],
  ['teardown', teardown],
  ['subscribe', subscribe],
  ['spread', spread],
  ['grpc-burst', grpcBurst],
  ['grpc-burst-idle', grpcBurstIdle],
  // Issue 44 (bench/floods-accumulate.ts): not in the default run (they take a minute); ask for them with --only.
  ['grpc-stream', grpcStream],
  ['add-book', addBook],
  ['multipart', multipart],
  ['pong', pong],
  ['rapid-reset', rapidReset],
  ['rapid-reset-node', rapidResetNode],
];
const ON_REQUEST = new Set(['grpc-stream', 'add-book', 'multipart', 'pong']);

const server = await startServer();
const { url, child } = server;
const probe = await startProbe(url);
const wsBase = url.replace('http', 'ws');
console.log(`example server ${url} (root ${root})`);
// Warm-up: protocols load on first use (lazy imports, JIT); the first upgrade is not the flood's cost.
for (const path of ['/ws/echo', '/ws/chat']) (await openWs(`${wsBase}${path}`)).close();
(await openWs(`${wsBase}/graphql`, 'graphql-transport-ws')).close();
await addBooks(url, 1);
// And h2c (the HTTP/2 compatibility path loads on its first stream): the rapid-reset floods start warm.
await new Promise<void>((resolve) => {
  const session = http2.connect(url);
  session.on('error', () => resolve());
  const req = session.request({ ':path': '/health' });
  req.on('error', () => resolve());
  req.on('data', () => {});
  req.on('close', () => (session.close(), resolve()));
});
probe.start();
await sleep(500);
await probe.stop();
console.log('flood | /health n | p50 ms | p99 ms | max ms | failed | server loop delay p99 / max ms | server RSS start → peak MB | flood');
try {
  for (const [name, flood] of FLOODS) {
    if (only && !only.includes(name) && !(name === 'teardown' && only.includes('graphql'))) continue;
    if (!only && ON_REQUEST.has(name)) continue;
    // The GraphQL storm's subscriptions are set up before the probe starts: the mutations are the flood.
    let started = false;
    const start = () => { if (!started) { started = true; probe.start(); server.reset(); } };
    (graphql as { start?: () => void }).start = start;
    if (name !== 'graphql') start();
    const t0 = performance.now();
    const what = await flood(wsBase, url);
    const seconds = ((performance.now() - t0) / 1000).toFixed(1);
    start();
    const { latencies, failures } = await probe.stop();
    const loop = await server.read();
    const sorted = latencies.sort((a, b) => a - b);
    console.log(`${name} | ${sorted.length} | ${pct(sorted, 50).toFixed(1)} | ${pct(sorted, 99).toFixed(1)} | ${sorted.at(-1)?.toFixed(1)} | ${failures} | ${loop.p99.toFixed(0)} / ${loop.max.toFixed(0)} | ${loop.rssStart.toFixed(0)} → ${loop.rssPeak.toFixed(0)} | ${what} (${seconds} s)`);
    await sleep(1000);
  }
} finally {
  probe.exit();
  child.kill('SIGTERM');
  await once(child, 'exit');
}
