/**
 * Instructions per request, whatever the machine's load (docs/benchmarks.md): each peer's server for a
 * scenario runs alone under valgrind's callgrind, its instrumentation off while it starts and while a
 * minimal keep-alive client in this process warms it up, then on (callgrind_control -i) for the next N
 * requests only. The server's main-thread instructions outside timers ÷ N is the figure (see measure()
 * for why): the client is not counted, start-up is not counted, and wall-clock noise from other
 * processes does not exist for callgrind.
 *
 *   node --import tsx bench/instructions.ts [--n 3000] [--warm 20000] [--rounds 2] [--tsx] \
 *     hello:keel,node,fastify full:keel,fastify json-invalid:keel,fastify problem:keel,fastify
 *
 * Rounds are interleaved (every pair once, then again). Prints instructions per request per round, the
 * median, and each peer's median ÷ the scenario's first peer's.
 *
 * Two builds of keel side by side: a peer written `keel@<dir>` runs the servers compiled into <dir>
 * (`node node_modules/typescript/bin/tsc -p bench/tsconfig.json --outDir node_modules/.cache/kb-<name>`),
 * e.g. `hello:keel@node_modules/.cache/kb-before,keel@node_modules/.cache/kb-after,node`.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { serverEntry } from './build-servers.js';
import { scenarios } from './scenarios.js';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { n: { type: 'string', default: '3000' }, warm: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '2' }, tsx: { type: 'boolean', default: false } },
});
const n = Number(args.n);
const warm = Number(args.warm);
const rounds = Number(args.rounds);
const jobs = (positionals.length ? positionals : ['hello:keel,node,fastify', 'full:keel,fastify']).map((p) => {
  const [scenario = '', peers = 'keel'] = p.split(':');
  const found = scenarios('unused').find((s) => s.id === scenario);
  if (!found) throw new Error(`no scenario ${scenario}`);
  return { scenario: found, peers: peers.split(',') };
});
const entry = serverEntry(args.tsx!, `-instr-${process.pid}`);
const outDir = mkdtempSync(join(tmpdir(), 'keel-instr-'));

/** The raw request bytes of a scenario, sent as is on one keep-alive connection. */
function requestBytes(s: (typeof jobs)[number]['scenario']): Buffer {
  const { method, path, headers = {}, body } = s.request;
  const head = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (body) head.push(`content-length: ${body.length}`);
  return Buffer.concat([Buffer.from(head.join('\r\n') + '\r\n\r\n'), body ?? Buffer.alloc(0)]);
}

/**
 * A client that sends one request at a time and waits for the whole (content-length or chunked) answer.
 * An answer with `Connection: close` (Fastify's 413) is followed by a new connection for the next
 * request: that server's figure then includes accepting and closing one connection per request.
 */
async function client(port: number, request: Buffer) {
  let socket!: net.Socket;
  let closing = false;
  const connect = async () => {
    socket = net.connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    closing = false;
  };
  await connect();
  let pending: Buffer = Buffer.alloc(0);
  let status = '';
  const once = async () => {
    if (closing) {
      socket.destroy();
      await connect();
    }
    return new Promise<void>((resolve) => {
      const onData = (chunk: Buffer) => {
        pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) return;
        const headText = pending.subarray(0, end).toString('latin1');
        const m = /content-length: *(\d+)/i.exec(headText);
        let total: number;
        if (m) total = end + 4 + Number(m[1]);
        else {
          const last = pending.indexOf('\r\n0\r\n\r\n', end);
          if (last < 0) return;
          total = last + 7;
        }
        if (pending.length < total) return;
        status = headText.slice(9, 12);
        closing = /\r\nconnection: *close/i.test(headText);
        pending = pending.subarray(total);
        socket.off('data', onData);
        resolve();
      };
      socket.on('data', onData);
      socket.write(request);
    });
  };
  return { once, status: () => status, close: () => socket.destroy() };
}

/** One server under callgrind, N requests counted: its instructions per request. */
async function measure(peerSpec: string, scenario: (typeof jobs)[number]['scenario']): Promise<{ perRequest: number; allThreads: number; status: string }> {
  // `peer@<dir>`: the peer as compiled into <dir> (see the header); files are named by the whole spec.
  const [peerName = '', build] = peerSpec.split('@');
  const peer = peerSpec.replace(/[^\w.-]+/g, '_');
  const entryFile = build ? join(resolve(build), 'bench', 'server.js') : entry;
  const child = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--callgrind-out-file=${join(outDir, `cg.${peer}.${scenario.id}.%p`)}`, process.execPath, '--single-threaded', ...(process.env.KEEP_CG ? ['--perf-basic-prof'] : []), ...(args.tsx && !build ? ['--import', 'tsx'] : []), entryFile, peerName, scenario.id], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env: { ...process.env, NODE_ENV: 'production', KEEL_LOG_LEVEL: 'silent', BENCH_STATIC_DIR: tmpdir() },
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${peer}/${scenario.id}: server exited with ${code}\n${stderr.slice(-2000)}`)));
    child.on('message', (m: { type: string; port?: number; message?: string }) => (m.type === 'ready' ? resolve(m.port!) : reject(new Error(m.message))));
  });
  const c = await client(port, requestBytes(scenario));
  for (let i = 0; i < warm; i++) await c.once();
  execFileSync('callgrind_control', ['-i', 'on', String(child.pid)], { stdio: 'ignore' });
  for (let i = 0; i < n; i++) await c.once();
  execFileSync('callgrind_control', ['-i', 'off', String(child.pid)], { stdio: 'ignore' });
  c.close();
  await new Promise<void>((resolve) => {
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.send({ type: 'stop' });
  });
  // The server runs with --single-threaded (V8 compiles and collects on the main thread): with its
  // helper threads, which valgrind runs one at a time, optimised code was installed late and deoptimised
  // inside the counted window, and one run differed from the next by up to 30%; single-threaded, rounds
  // agree within a few per cent. One file per thread (`-01` is the main thread, all that is counted).
  // Timers are left out too: under callgrind the N requests take ~50 times as long as they would, so
  // work that runs per unit of time (keel's event-loop load sampling, node's Date-header refresh) would
  // be charged ~50 times over to each request. A steady keep-alive run fires no per-request timer.
  let main = NaN;
  let timers = 0;
  let all = 0;
  for (const file of readdirSync(outDir).filter((f) => f.startsWith(`cg.${peer}.${scenario.id}.`))) {
    const path = join(outDir, file);
    const total = Number(/^totals: (\d+)/m.exec(readFileSync(path, 'utf8'))?.[1] ?? 0);
    all += total;
    if (file.endsWith('-01')) {
      main = total;
      const annotated = execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', path], { encoding: 'utf8', maxBuffer: 64 << 20 });
      timers = Number(/^\s*([\d,]+) .*:uv__run_timers /m.exec(annotated)?.[1]?.replaceAll(',', '') ?? 0);
    }
    if (!process.env.KEEP_CG) rmSync(path);
  }
  return { perRequest: (main - timers) / n, allThreads: all / n, status: c.status() };
}

const results = new Map<string, number[]>();
for (let r = 0; r < rounds; r++) {
  for (const { scenario, peers } of jobs) {
    for (const peer of r % 2 ? [...peers].reverse() : peers) {
      const { perRequest, allThreads, status } = await measure(peer, scenario);
      const key = `${scenario.id} ${peer}`;
      results.set(key, [...(results.get(key) ?? []), perRequest]);
      console.error(`round ${r + 1}: ${key} ${Math.round(perRequest)} instructions/request on the main thread without timers, ${Math.round(allThreads)} in all threads (status ${status})`);
    }
  }
}
if (!args.tsx) rmSync(join(entry, '..', '..'), { recursive: true, force: true });
if (!process.env.KEEP_CG) rmSync(outDir, { recursive: true, force: true });
else console.error(`callgrind files kept in ${outDir}`);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
console.log(`\n| scenario | peer | main-thread instructions / request, timers left out (rounds) | median | ÷ ${jobs[0]?.peers[0]} |\n|---|---|---|---:|---:|`);
for (const { scenario, peers } of jobs) {
  const base = median(results.get(`${scenario.id} ${peers[0]}`)!);
  for (const peer of peers) {
    const xs = results.get(`${scenario.id} ${peer}`)!;
    console.log(`| ${scenario.id} | ${peer} | ${xs.map((x) => Math.round(x).toLocaleString('en')).join(' / ')} | ${Math.round(median(xs)).toLocaleString('en')} | ${(median(xs) / base).toFixed(3)} |`);
  }
}
