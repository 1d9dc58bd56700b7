/**
 * `npm run bench [-- --quick] [--scenarios a,b] [--peers keel,fastify] [--rounds 3] [--duration 3]
 *  [--warmup 2] [--connections 32] [--profile] [--tsx] [--out bench/results]`
 *
 * Starts each peer's server for a scenario in its own child process on 127.0.0.1, checks one
 * response, warms each up, then measures round-robin (round r starts with a different peer, so a
 * burst of load from elsewhere on the machine hits every peer alike) with autocannon from this
 * process. Reports medians of rounds, the spread between rounds and each server's peak RSS, and
 * writes bench/results/latest.{json,md,svg}.
 *
 * `--profile` runs every server under `--cpu-prof` and attributes each main-thread profile to stages
 * (bench/stages.ts) per request served: the report's "Where the time goes" for missed targets.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, tmpdir, type as osType, release } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { SignJWT } from 'jose';
import { BENCH_JWT_SECRET, PEERS, PEER_LABELS, QUICK, scenarios, staticFileContent, STATIC_FILE_NAME, type Peer, type Scenario } from './scenarios.js';
import { summarise, type PeerResult, type Round, type RunResult, type ScenarioResult } from './stats.js';
import { markdownReport, quickLine } from './report.js';
import { svgChart } from './chart.js';
import { attributeFile, findProfile } from './stages.js';
import { whereTheTimeGoes, type ProfiledScenario, type StagesByPeer } from './breakdown.js';
import { serverEntry as buildServers } from './build-servers.js';
import { LOAD_SCENARIO, loadTimeMarkdown, measureLoadTimes } from './load-time.js';

const here = dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    scenarios: { type: 'string' },
    peers: { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    profile: { type: 'boolean', default: false },
    tsx: { type: 'boolean', default: false },
    out: { type: 'string', default: join(here, 'results') },
  },
});

const quick = args.quick!;
const settings = {
  connections: Number(args.connections ?? 32),
  durationSec: Number(args.duration ?? (quick ? 2 : 3)),
  rounds: Number(args.rounds ?? 3),
  warmupSec: Number(args.warmup ?? (quick ? 1 : 2)),
  quick,
};
const wantScenarios = args.scenarios?.split(',') ?? (quick ? QUICK.scenarios : undefined);
const wantPeers = (args.peers?.split(',') as Peer[] | undefined) ?? (quick ? QUICK.peers : [...PEERS]);
for (const p of wantPeers) if (!PEERS.includes(p)) throw new Error(`unknown peer ${p} (known: ${PEERS.join(', ')})`);

const serverEntry = buildServers(args.tsx!);

// Two cores or more: the servers on the last CPU, this process (autocannon) on the others.
const nproc = cpus().length;
const hasTaskset = process.platform === 'linux' && spawnSync('taskset', ['--version']).status === 0;
const pinned = hasTaskset && nproc >= 2;
const serverCpu = String(nproc - 1);
if (pinned) spawnSync('taskset', ['-pc', `0-${nproc - 2}`, String(process.pid)], { stdio: 'ignore' });

interface Server {
  peer: Peer;
  child: ChildProcess;
  port: number;
  /** Requests answered so far (probe, warm-up, rounds): divides the CPU profile into µs per request. */
  served: number;
}

const profileDir = (peer: Peer, scenario: string) => join(args.out!, 'profiles', `${peer}-${scenario}`);

function startServer(peer: Peer, scenario: string, staticDir: string): Promise<Server> {
  const nodeArgs = [...(args.tsx ? ['--import', 'tsx'] : []), ...(args.profile ? ['--cpu-prof', '--cpu-prof-dir', profileDir(peer, scenario)] : []), serverEntry, peer, scenario];
  const [cmd, argv] = pinned ? ['taskset', ['-c', serverCpu, process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
  const child = spawn(cmd, argv as string[], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, NODE_ENV: 'production', KEEL_LOG_LEVEL: 'silent', BENCH_STATIC_DIR: staticDir },
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${peer}/${scenario}: no ready message in 30 s`)), 30_000);
    child.once('exit', (code) => reject(new Error(`${peer}/${scenario}: server exited with ${code}`)));
    child.on('message', (m: { type: string; port?: number; message?: string }) => {
      if (m.type === 'ready') {
        clearTimeout(timer);
        resolve({ peer, child, port: m.port!, served: 0 });
      } else if (m.type === 'error') reject(new Error(`${peer}/${scenario}: ${m.message}`));
    });
  });
}

function stopServer(s: Server): Promise<void> {
  return new Promise((resolve) => {
    if (s.child.exitCode !== null) return resolve();
    const kill = setTimeout(() => s.child.kill('SIGKILL'), 5000);
    s.child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    s.child.send({ type: 'stop' });
  });
}

/** Peak RSS: the kernel's high-water mark where there is one, else the server's own samples. */
async function peakRss(s: Server): Promise<{ bytes: number; source: PeerResult['rssSource'] }> {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${s.child.pid}/status`, 'utf8'));
    if (m) return { bytes: Number(m[1]) * 1024, source: 'VmHWM' };
  } catch {
    // Not Linux: ask the server.
  }
  return new Promise((resolve) => {
    s.child.once('message', (m: { rss: number }) => resolve({ bytes: m.rss, source: 'ipc' }));
    s.child.send({ type: 'rss' });
  });
}

/** One request with node:http (raw bytes, no decompression) to check the peer does the work. */
function probe(port: number, sc: Scenario): Promise<string | null> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method: sc.request.method, path: sc.request.path, headers: sc.request.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          resolve(sc.check(res.statusCode ?? 0, res.headers, Buffer.concat(chunks)));
        } catch (err) {
          resolve(String(err));
        }
      });
    });
    req.on('error', (err) => resolve(err.message));
    req.end(sc.request.body);
  });
}

function cpuMicros(s: Server): Promise<number> {
  return new Promise((resolve) => {
    const on = (m: { type: string; micros?: number }) => {
      if (m.type !== 'cpu') return;
      s.child.off('message', on);
      resolve(m.micros!);
    };
    s.child.on('message', on);
    s.child.send({ type: 'cpu' });
  });
}

async function load(s: Server, sc: Scenario, duration: number): Promise<Round> {
  const before = await cpuMicros(s);
  const r = await autocannon({
    url: `http://127.0.0.1:${s.port}${sc.request.path}`,
    method: sc.request.method,
    headers: sc.request.headers ?? {},
    ...(sc.request.body ? { body: sc.request.body } : {}),
    connections: settings.connections,
    duration,
    pipelining: 1,
  });
  const cpu = (await cpuMicros(s)) - before;
  s.served += r.requests.total;
  return {
    rps: r.requests.total / (r.duration || duration),
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    cpuPerReq: r.requests.total ? cpu / r.requests.total : 0,
  };
}

async function runScenario(sc: Scenario, staticDir: string): Promise<ProfiledScenario> {
  const peers = wantPeers.filter((p) => sc.peers.includes(p));
  const na: ScenarioResult['na'] = {};
  for (const p of wantPeers) {
    if (!sc.peers.includes(p)) na[p] = sc.why?.[p] ?? (p === 'express-std' ? 'measured on the full-stack and express-kit scenarios only' : p === 'express-keel' ? 'measured on the express-kit scenario only' : p === 'keel-express' || p === 'keel-express4' || p === 'express4' ? 'measured on the express-engine scenarios only' : 'no equivalent');
  }
  const servers: Server[] = [];
  const rounds = new Map<Peer, Round[]>();
  let result: ScenarioResult;
  try {
    for (const p of peers) servers.push(await startServer(p, sc.id, staticDir));
    for (const s of servers) {
      const problem = await probe(s.port, sc);
      if (problem) throw new Error(`${s.peer}/${sc.id} does not answer as expected: ${problem}`);
      s.served++;
      await load(s, sc, settings.warmupSec);
      rounds.set(s.peer, []);
    }
    for (let r = 0; r < settings.rounds; r++) {
      for (let i = 0; i < servers.length; i++) {
        const s = servers[(i + r) % servers.length]!;
        const round = await load(s, sc, settings.durationSec);
        rounds.get(s.peer)!.push(round);
        process.stdout.write(`  ${sc.id.padEnd(11)} round ${r + 1}/${settings.rounds} ${PEER_LABELS[s.peer].padEnd(26)} ${round.rps.toFixed(0).padStart(7)} req/s  p50 ${round.p50} ms  p99 ${round.p99} ms  ${round.cpuPerReq.toFixed(0)} µs CPU/req${round.non2xx || round.errors ? `  (non-2xx ${round.non2xx}, errors ${round.errors})` : ''}\n`);
      }
    }
    const results: PeerResult[] = [];
    for (const s of servers) {
      const rss = await peakRss(s);
      results.push(summarise(s.peer, rounds.get(s.peer)!, rss.bytes, rss.source));
    }
    // keel's own peer, or on the express-engine scenarios keel's Express engine, is what the others are divided by
    const keel = results.find((x) => x.peer === 'keel') ?? results.find((x) => x.peer === 'keel-express');
    const ratios: ScenarioResult['ratios'] = {};
    const rssRatios: ScenarioResult['rssRatios'] = {};
    const cpuRatios: ScenarioResult['cpuRatios'] = {};
    if (keel) {
      for (const x of results) {
        if (x === keel) continue;
        ratios[x.peer] = x.rps > 0 ? keel.rps / x.rps : 0;
        rssRatios[x.peer] = x.peakRss > 0 ? keel.peakRss / x.peakRss : 0;
        cpuRatios[x.peer] = keel.cpuPerReq > 0 ? x.cpuPerReq / keel.cpuPerReq : 0;
      }
    }
    result = { id: sc.id, title: sc.title, results, na, ratios, cpuRatios, rssRatios };
  } finally {
    await Promise.all(servers.map(stopServer));
  }
  // Node writes a CPU profile as the process exits, so the servers are attributed once stopped.
  return args.profile ? { ...result, stages: stagesOfServers(sc.id, servers) } : result;
}

function stagesOfServers(scenario: string, servers: Server[]): StagesByPeer {
  const out: StagesByPeer = {};
  for (const s of servers) {
    const dir = profileDir(s.peer, scenario);
    try {
      const file = s.child.pid === undefined ? undefined : findProfile(dir, s.child.pid);
      if (!file) throw new Error(`no main-thread CPU profile in ${dir}`);
      const st = (out[s.peer] = attributeFile(file, s.served));
      const top = Object.entries(st.perRequest).slice(0, 5).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ');
      process.stdout.write(`  ${scenario.padEnd(11)} profile ${PEER_LABELS[s.peer].padEnd(26)} ${st.busyPerRequest.toFixed(1)} µs/req on the main thread: ${top}\n`);
    } catch (err) {
      // A missing or damaged profile costs its breakdown, not the run's measurements.
      console.warn(`  ${scenario} ${PEER_LABELS[s.peer]}: ${(err as Error).message}`);
    }
  }
  return out;
}

function cpuModel(): string {
  try {
    return /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown';
  } catch {
    return cpus()[0]?.model ?? 'unknown';
  }
}

const token = await new SignJWT({ roles: ['user'] })
  .setProtectedHeader({ alg: 'HS256' })
  .setSubject('user-42')
  .setIssuedAt()
  .setExpirationTime('2h')
  .sign(new TextEncoder().encode(BENCH_JWT_SECRET));
const all = scenarios(token);
for (const id of wantScenarios ?? []) if (id !== LOAD_SCENARIO && !all.some((s) => s.id === id)) throw new Error(`unknown scenario ${id} (known: ${all.map((s) => s.id).join(', ')})`);
const chosen = wantScenarios ? all.filter((s) => wantScenarios.includes(s.id)) : all;

const staticDir = mkdtempSync(join(tmpdir(), 'keel-bench-'));
writeFileSync(join(staticDir, STATIC_FILE_NAME), staticFileContent());
const run: RunResult = {
  startedAt: new Date().toISOString(),
  finishedAt: '',
  machine: { nproc, cpu: cpuModel(), node: process.version, os: `${osType()} ${release()}`, pinned },
  settings,
  scenarios: [],
};
console.log(`keel bench: ${chosen.length} scenarios × ${wantPeers.join(', ')}; ${settings.connections} connections, ${settings.rounds} rounds × ${settings.durationSec} s after ${settings.warmupSec} s warm-up${pinned ? `; servers on CPU ${serverCpu}, load generator on CPU 0-${nproc - 2}` : ''}`);
try {
  for (const sc of chosen) run.scenarios.push(await runScenario(sc, staticDir));
} finally {
  rmSync(staticDir, { recursive: true, force: true });
}
// Loading the Express entries is measured apart (fresh processes, no load generator): a full run, or --scenarios express-load
if (!quick && (!wantScenarios || wantScenarios.includes(LOAD_SCENARIO))) run.loadTimes = measureLoadTimes();
run.finishedAt = new Date().toISOString();

mkdirSync(args.out!, { recursive: true });
const md = markdownReport(run) + (run.loadTimes ? `\n${loadTimeMarkdown(run.loadTimes)}` : '');
// A quick or partial run does not overwrite the full run's results.
const base = quick ? 'quick' : wantScenarios || args.peers ? 'partial' : 'latest';
writeFileSync(join(args.out!, `${base}.json`), `${JSON.stringify(args.profile ? { ...run, whereTheTimeGoes: whereTheTimeGoes(run) } : run, null, 2)}\n`);
writeFileSync(join(args.out!, `${base}.md`), md);
writeFileSync(join(args.out!, `${base}.svg`), svgChart(run));
if (args.profile && existsSync(join(args.out!, 'profiles'))) console.log(`CPU profiles of the servers: ${join(args.out!, 'profiles')} (one folder per server; the main thread is the file with thread id 0; by stage and function: npx tsx bench/profile-top.ts <file>)`);
console.log(`\n${md}\nwrote ${join(args.out!, `${base}.{json,md,svg}`)}`);
console.log(quickLine(run));
