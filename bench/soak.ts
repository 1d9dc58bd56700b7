/**
 * `npm run soak [-- --duration 120 --connections 32]`: a bounded soak of the example server.
 *
 * Starts examples/server.ts in its own process (bench/soak-server.ts, rate limit off), loads a mix of
 * its routes with autocannon over loopback for `--duration` seconds (default 120, at most 1800),
 * samples the server's RSS every second, then SIGTERMs it and times the graceful shutdown. Prints
 * requests, errors (socket errors, timeouts, unexpected statuses), p99 latency and RSS start/peak/end.
 * Exits 1 when there were errors or the server did not exit 0.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon, { type RequestSpec } from 'autocannon';
import { freePort } from '../harness/conformance/exec.js';

/** Default soak length, seconds (the bound: ≤ 3 minutes). */
export const DEFAULT_SOAK_SECONDS = 120;
/** Default concurrent connections. */
export const DEFAULT_SOAK_CONNECTIONS = 32;

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: String(DEFAULT_SOAK_SECONDS) },
    connections: { type: 'string', default: String(DEFAULT_SOAK_CONNECTIONS) },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
if (!Number.isInteger(duration) || duration < 1 || duration > 1800) throw new Error(`--duration: expected whole seconds from 1 to 1800, got ${JSON.stringify(values.duration)}`);
if (!Number.isInteger(connections) || connections < 1 || connections > 1024) throw new Error(`--connections: expected 1 to 1024, got ${JSON.stringify(values.connections)}`);

const json = { 'content-type': 'application/json' };
/** The mix: every connection cycles through these in order. All expect a 2xx. */
const MIX: RequestSpec[] = [
  { method: 'GET', path: '/health' },
  { method: 'GET', path: '/items?limit=5' },
  { method: 'GET', path: '/items/1' },
  { method: 'GET', path: '/report', headers: { 'accept-encoding': 'gzip' } },
  { method: 'GET', path: '/public/info', headers: { origin: 'https://example.com' } },
  { method: 'GET', path: '/hooked' },
  { method: 'POST', path: '/jobs' },
  { method: 'POST', path: '/rpc', headers: json, body: JSON.stringify({ jsonrpc: '2.0', method: 'math.add', params: { a: 1, b: 2 }, id: 1 }) },
  { method: 'POST', path: '/graphql', headers: json, body: JSON.stringify({ query: '{ __typename }' }) },
  { method: 'GET', path: '/legacy/hello' },
  { method: 'GET', path: '/admin/stats', headers: { 'x-api-key': process.env.KEEL_EXAMPLE_API_KEY ?? 'demo-key-change-me' } },
  { method: 'GET', path: '/openapi.json' },
];

/** Resident set size of `pid`, bytes (Linux /proc; 0 elsewhere). */
function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

const port = await freePort();
const script = fileURLToPath(new URL('./soak-server.ts', import.meta.url));
const server = spawn(process.execPath, ['--import', 'tsx', script, String(port)], {
  env: { ...process.env, NODE_ENV: 'production', KEEL_LOG_LEVEL: process.env.KEEL_LOG_LEVEL ?? 'warn' },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let logLines = 0;
let lastLogs = '';
server.stderr.on('data', (c: Buffer) => (lastLogs = (lastLogs + c.toString()).slice(-2000)));
const exited = once(server, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
const pid = await new Promise<number>((resolve, reject) => {
  let out = '';
  const onData = (c: Buffer) => {
    out += c.toString();
    const line = out.split('\n').find((l) => l.startsWith('{"ready"'));
    if (!line) return;
    server.stdout.off('data', onData);
    server.stdout.on('data', (d: Buffer) => (logLines += d.toString().split('\n').length - 1));
    resolve((JSON.parse(line) as { pid: number }).pid);
  };
  server.stdout.on('data', onData);
  void exited.then(([code]) => reject(new Error(`the example server exited (${code}) before it was ready: ${lastLogs}`)));
});

const rssStart = rssOf(pid);
let rssPeak = rssStart;
const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssOf(pid))), 1000);
process.stdout.write(`soak: ${duration} s, ${connections} connections, ${MIX.length} routes, example server pid ${pid} on 127.0.0.1:${port}\n`);

const result = await autocannon({ url: `http://127.0.0.1:${port}`, connections, duration, requests: MIX, timeout: 10 });
clearInterval(sampler);
const rssEnd = rssOf(pid);
rssPeak = Math.max(rssPeak, rssEnd);

const stopAt = Date.now();
server.kill('SIGTERM');
const [exitCode, signal] = await exited;
const shutdownMs = Date.now() - stopAt;

const statuses = Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => `${code}: ${s.count}`).join(', ');
const errors = result.errors + result.timeouts + result.non2xx;
const lines = [
  `requests   ${result.requests.total} (${Math.round(result.requests.average)} req/s average), statuses ${statuses}`,
  `errors     ${errors} (socket errors ${result.errors}, timeouts ${result.timeouts}, non-2xx ${result.non2xx})`,
  `latency    p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`,
  `rss        start ${mb(rssStart)}, peak ${mb(rssPeak)}, end ${mb(rssEnd)}`,
  `server     ${logLines} log lines at ${process.env.KEEL_LOG_LEVEL ?? 'warn'}+, SIGTERM → exit ${exitCode ?? signal} after ${shutdownMs} ms`,
];
process.stdout.write(`${lines.join('\n')}\n`);
process.exitCode = errors === 0 && exitCode === 0 ? 0 : 1;
