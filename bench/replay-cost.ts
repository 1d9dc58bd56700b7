/**
 * Replays issue 35's cost attacks (items 2-4) against the example server (`npm start`) in a child
 * process, with `/health` polled from a third process (bench/health-probe.mjs, a request every 100 ms, after
 * each answer), and prints the figures of the closing note:
 *
 * 1. near-budget AsyncAPI documents (1.8 KB, 71,666 nodes, ~70 ms of CPU each on a quiet machine) at
 *    45/s for 10 s from one client, under the example's 50/s rate limit: the answers by status, the
 *    time until the last one, and `/health` p50 / p99 / max meanwhile;
 * 2. 490-alias GraphQL queries under the answer estimate (12.5 KB in, ~0.9 MB out each) at 45/s for 10 s;
 * 3. 30 stored 900 KB book titles and a 20-alias `books { title }` over GraphQL-over-WebSocket: the
 *    frame that answers (type, bytes) and the server's RSS / peak RSS before and after.
 *
 *   node --import tsx bench/replay-cost.ts [path/to/examples/server.ts]
 *
 * The optional path runs another checkout's example server (a "before" figure from main).
 * Before (issue 35, main 030dee2): 22–31 s to answer 360–450 documents, `/health` p99 13.8–15.5 s;
 * graphql-ws `RangeError: Invalid string length`, RSS 216 → 698–827 MB, a 4.1 s stall.
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { aliasQueryBody, nearBudgetDocument } from '../test/helpers/budget-attacks.js';
import { spawnFixture } from '../test/helpers/spawn-fixture.js';

const script = process.argv[2] ?? fileURLToPath(new URL('../examples/server.ts', import.meta.url));
const server = await spawnFixture(script, {
  nodeArgs: process.env.BENCH_SERVER_ARGS?.split(' ').filter(Boolean) ?? [],
  cwd: fileURLToPath(new URL('..', `file://${script}`)),
  env: { PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'production', KEEL_LOG_LEVEL: 'silent' },
  ready: /keel example server on (http:\/\/\S+)/,
});
const { child } = server;
const base = server.ready[1]!;

function memory(): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

const probe = fork(fileURLToPath(new URL('./health-probe.mjs', import.meta.url)), [base, '100'], { stdio: 'inherit' });
await new Promise<void>((r) => probe.once('message', () => r()));
function probed<T>(during: () => Promise<T>): Promise<{ value: T; latencies: number[]; failures: number }> {
  probe.send('start');
  return during().then((value) => new Promise((resolve) => {
    probe.once('message', (m: { latencies: number[]; failures: number }) => resolve({ value, ...m }));
    probe.send('stop');
  }));
}
const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! : NaN;
};
const ms = (n: number): string => `${n.toFixed(0)} ms`;

/** `body` POSTed to `path` at 45/s for 10 s from one client, `/health` probed meanwhile. */
async function flood(name: string, path: string, body: string): Promise<void> {
  const perSecond = 45;
  const seconds = 10;
  const statuses = new Map<number, number>();
  let bytesOut = 0;
  const started = performance.now();
  const { latencies, failures } = await probed(async () => {
    const pending: Promise<void>[] = [];
    for (let i = 0; i < perSecond * seconds; i++) {
      const due = started + (i * 1000) / perSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      pending.push(fetch(`${base}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body, signal: AbortSignal.timeout(120_000) })
        .then(async (r) => { bytesOut += (await r.arrayBuffer()).byteLength; statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1); })
        .catch(() => { statuses.set(0, (statuses.get(0) ?? 0) + 1); }));
    }
    await Promise.all(pending);
  });
  const total = performance.now() - started;
  console.log(`${name} (${body.length} B) at ${perSecond}/s for ${seconds} s: `
    + `${[...statuses].sort().map(([s, n]) => `${n} × ${s || 'failed'}`).join(', ')}; ${(bytesOut / 1e6).toFixed(1)} MB out; last answer after ${ms(total)}`);
  console.log(`  /health every 100 ms: ${latencies.length} probes, ${failures} failed, p50 ${ms(pct(latencies, 50))}, p99 ${ms(pct(latencies, 99))}, max ${ms(Math.max(...latencies))}`);
  let at = 0;
  const slow = latencies.map((l) => { const start = at; at += l + 100; return { start, l }; }).filter((x) => x.l > 300);
  console.log(`  probes over 300 ms (started at, took): ${slow.map((x) => `${ms(x.start)}: ${ms(x.l)}`).join('; ') || 'none'}`);
}

async function asyncApiFlood(): Promise<void> {
  await fetch(`${base}/asyncapi/parse`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"spec":{"asyncapi":"3.0.0","info":{"title":"t","version":"1"}}}' }).then((r) => r.text());
  await flood('AsyncAPI near-budget documents', '/asyncapi/parse', JSON.stringify({ spec: JSON.parse(nearBudgetDocument()) }));
}

/** 490 aliases of `hello(name: $n)` with a 1.7 KB `$n`: under the estimate (a ~0.9 MB answer each). */
async function graphqlFlood(): Promise<void> {
  await fetch(`${base}/graphql`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"query":"{ hello }"}' }).then((r) => r.text());
  await flood('GraphQL 490 aliases under the answer estimate', '/graphql', aliasQueryBody(490, 12_500));
}

function frames(ws: WebSocket, id: string, timeoutMs: number): Promise<{ type: string; bytes: number; text: string }> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ type: 'none (timed out)', bytes: 0, text: '' }), timeoutMs);
    const onMessage = (data: Buffer): void => {
      // A frame may be tens of MB (the attack): its id and type from its head, without parsing it whole.
      const head = data.subarray(0, 300).toString();
      if (/"id":"([^"]*)"/.exec(head)?.[1] !== id) return;
      clearTimeout(timer);
      ws.off('message', onMessage);
      ws.off('close', onClose);
      resolve({ type: /"type":"([^"]*)"/.exec(head)?.[1] ?? '?', bytes: data.length, text: head.slice(0, 200) });
    };
    const onClose = (code: number): void => { clearTimeout(timer); resolve({ type: `socket closed ${code}`, bytes: 0, text: '' }); };
    ws.on('message', onMessage);
    ws.once('close', onClose);
  });
}

async function storedTitles(): Promise<void> {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/graphql`, 'graphql-transport-ws', { maxPayload: 1024 * 1024 * 1024 });
  await new Promise((r, j) => { ws.once('open', r); ws.once('error', j); });
  ws.send(JSON.stringify({ type: 'connection_init' }));
  await new Promise((r) => ws.once('message', r));
  const title = 't'.repeat(900 * 1024);
  for (let i = 0; i < 30; i++) {
    const answer = frames(ws, `add${i}`, 30_000);
    ws.send(JSON.stringify({ id: `add${i}`, type: 'subscribe', payload: { query: 'mutation($t: String!) { addBook(input: { title: $t, authorId: "a1" }) { id } }', variables: { t: title } } }));
    const a = await answer;
    if (a.type !== 'next') {
      console.log(`  addBook ${i}: ${a.type} ${a.text}`);
      break;
    }
  }
  await fetch(`${base}/health`);
  const before = memory();
  const started = performance.now();
  const query = `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: books { title }`).join(' ')} }`;
  const answer = frames(ws, 'big', 60_000);
  ws.send(JSON.stringify({ id: 'big', type: 'subscribe', payload: { query } }));
  const a = await answer;
  const took = performance.now() - started;
  const after = memory();
  console.log(`GraphQL over WebSocket, 30 × 900 KB stored titles, 20 aliases of books { title }: ${a.type} frame of ${a.bytes} B after ${ms(took)}; `
    + `RSS ${before.rss.toFixed(0)} → ${after.rss.toFixed(0)} MB (peak ${before.peak.toFixed(0)} → ${after.peak.toFixed(0)} MB)`);
  console.log(`  ${a.text}`);
  ws.terminate();
}

try {
  console.log(`server: ${script}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  await asyncApiFlood();
  // Let the client's CPU budget refill (5 s at 250 ms/s: 20 s) and the queue drain before the next attack.
  await new Promise((r) => setTimeout(r, 20_000));
  await graphqlFlood();
  await new Promise((r) => setTimeout(r, 3000));
  await storedTitles();
  console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}; RangeError on the server's stderr: ${/RangeError/.test(server.output()) ? 'yes' : 'no'}`);
} finally {
  probe.send('exit');
  // SIGTERM first: a graceful exit writes the server's --cpu-prof profile (BENCH_SERVER_ARGS).
  await server.stop(10_000);
}
