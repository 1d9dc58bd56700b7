/**
 * `node --import tsx bench/h2c-replay.ts`: the h2c attack of issue 26 (item 1), with figures.
 *
 * Starts bench/h2c-replay-server.ts under `ulimit -n 256`, then over loopback:
 * 1. opens 300 h2c connections (preface + SETTINGS) and closes them with a FIN, no GOAWAY, in a burst;
 *    reports the server's fds over time (from /proc/<pid>/fd), the seconds until they are released and
 *    until a new HTTP/1.1 client is answered;
 * 2. opens 230 sessions from 127.0.0.1–3 that answer the server's PINGs and PING it themselves, and
 *    reports how many are still open as time passes (the server runs with `KEEL_H2C_GRPC`, e.g.
 *    '{"h2_idle_timeout":5}' to see the idle timeout without waiting 120 s);
 * 3. SIGTERMs the server with 200 new idle sessions open (plus 10 half-sent prefaces) and times its exit.
 * `--observe <s>` bounds each wait (default 110 s, above the old 75 + 20 s keepalive). Linux only (/proc).
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import http2 from 'node:http2';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { observe: { type: 'string', default: '110' }, ulimit: { type: 'string', default: '256' } } });
const observeMs = Number(values.observe) * 1000;
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const seconds = (t0: number) => Number(((performance.now() - t0) / 1000).toFixed(2));

const serverFile = fileURLToPath(new URL('./h2c-replay-server.ts', import.meta.url));
const child = spawn('bash', ['-c', `ulimit -n ${Number(values.ulimit)} && exec "${process.execPath}" --import tsx "${serverFile}"`], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
const { pid, port } = await new Promise<{ pid: number; port: number }>((resolve, reject) => {
  let out = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
    for (const line of out.split('\n')) if (line.includes('"ready":true')) resolve(JSON.parse(line) as { pid: number; port: number });
  });
  child.once('exit', () => reject(new Error('server exited before it was ready')));
});
const fds = () => { try { return readdirSync(`/proc/${pid}/fd`).length; } catch { return -1; } };

/** A new HTTP/1.1 client answered? (500 ms client deadline.) */
async function http1Ok(): Promise<boolean> {
  try { return (await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(500) })).status === 200; } catch { return false; }
}

function rawSession(bytes = Buffer.concat([PREFACE, SETTINGS])): Promise<net.Socket | undefined> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(bytes));
    s.on('error', () => resolve(undefined));
    s.once('data', () => resolve(s));
    s.once('close', () => resolve(undefined));
    setTimeout(() => resolve(s), 2000).unref();
  });
}

const baseline = fds();
console.log(JSON.stringify({ step: 'start', pid, port, ulimit: Number(values.ulimit), grpc: process.env.KEEL_H2C_GRPC ?? '{}', server_fds: baseline }));

// 1. Open and close 300 connections (FIN only).
let t0 = performance.now();
const opened = await Promise.all(Array.from({ length: 300 }, () => rawSession()));
for (const s of opened) s?.end();
const burst = seconds(t0);
t0 = performance.now();
const heldAfterClose = fds() - baseline;
const samples: { s: number; fds: number }[] = [];
// Two clocks: the server's fds (every 50 ms) and a new HTTP/1.1 client (500 ms deadline each, until one is served).
const released = (async () => {
  while (performance.now() - t0 < observeMs) {
    const n = fds() - baseline;
    const at = seconds(t0);
    if (samples.length === 0 || at - samples[samples.length - 1]!.s >= 5) samples.push({ s: at, fds: n });
    if (n <= 2) return at;
    await sleep(50);
  }
  return undefined;
})();
const served = (async () => {
  while (performance.now() - t0 < observeMs) {
    if (await http1Ok()) return seconds(t0);
    await sleep(100);
  }
  return undefined;
})();
const [releasedAt, servedAt] = await Promise.all([released, served]);
console.log(JSON.stringify({ step: 'open+close 300', burst_s: burst, sessions_answered: opened.filter(Boolean).length, fds_held_after_close: heldAfterClose, released_after_s: releasedAt ?? `> ${observeMs / 1000}`, new_http1_client_served_after_s: servedAt ?? `> ${observeMs / 1000}`, samples }));
for (const s of opened) s?.destroy();

// 2. 230 sessions that only PING (and ACK the server's PINGs).
/** `n` node:http2 sessions from 127.0.0.1–3, resolved once each is answered (or refused). */
async function pingers(n: number): Promise<http2.ClientHttp2Session[]> {
  const out: http2.ClientHttp2Session[] = [];
  for (let i = 0; i < n; i++) {
    const localAddress = `127.0.0.${1 + (i % 3)}`;
    const c = http2.connect(`http://127.0.0.1:${port}`, { createConnection: () => net.connect({ port, host: '127.0.0.1', localAddress }) });
    c.on('error', () => {});
    out.push(c);
  }
  await Promise.all(out.map((c) => new Promise((r) => { c.once('remoteSettings', r); c.once('close', r); })));
  return out;
}
const clients = await pingers(230);
const pinger = setInterval(() => { for (const c of clients) if (!c.closed && !c.destroyed) c.ping(() => {}); }, 1000);
const openOf = (list: http2.ClientHttp2Session[]) => list.filter((c) => !c.closed && !c.destroyed).length;
t0 = performance.now();
const idle: { s: number; open: number; server_fds: number }[] = [{ s: 0, open: openOf(clients), server_fds: fds() - baseline }];
while (performance.now() - t0 < observeMs && openOf(clients) > 0) {
  await sleep(5000);
  idle.push({ s: seconds(t0), open: openOf(clients), server_fds: fds() - baseline });
}
console.log(JSON.stringify({ step: '230 PING-only sessions', admitted: idle[0]!.open, samples: idle }));
for (const c of clients) c.destroy();
await sleep(500);

// 3. SIGTERM with 200 fresh idle sessions open, plus half-sent prefaces.
const idleAtExit = await pingers(200);
const partial = await Promise.all(Array.from({ length: 10 }, () => rawSession(PREFACE.subarray(0, 8))));
const stillOpen = openOf(idleAtExit);
t0 = performance.now();
child.kill('SIGTERM');
const code = await Promise.race([exited, sleep(40_000).then(() => 'still running after 40 s')]);
console.log(JSON.stringify({ step: 'SIGTERM', h2_sessions_open: stillOpen, half_prefaces: partial.filter(Boolean).length, exit: code, shutdown_s: seconds(t0) }));
clearInterval(pinger);
for (const c of idleAtExit) c.destroy();
for (const s of partial) s?.destroy();
if (typeof code !== 'number') child.kill('SIGKILL');
process.exit(0);
