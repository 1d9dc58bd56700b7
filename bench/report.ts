/** The Markdown report, the target check and the `--quick` summary line. */
import { PEERS, PEER_LABELS, type Peer } from './scenarios.js';
import type { PeerResult, RunResult, ScenarioResult } from './stats.js';
import { breakdownMarkdown, stagesOf } from './breakdown.js';

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const mb = (b: number) => `${(b / 1048576).toFixed(0)} MB`;
const pct = (x: number) => `${Math.round(x * 100)}%`;
/** Issue 48 (issue 33 had 1.25): keel/express's CPU per request on the express-engine app at most this many times Fastify's. */
export const ENGINE_VS_FASTIFY = 1.05;
/** Issue 48's bars, as Fastify's CPU per request ÷ keel's: the default stack at half of Fastify + plugins (1.9 measured from outside), a 422 at most 1.05× Fastify's 400, a 404, 405 and 413 at most Fastify's; issue 45's schema'd answer at most Fastify's. */
export const FASTIFY_CPU_BARS: readonly (readonly [id: string, fastifyOverKeel: number, name: string])[] = [
  ['full', 1.9, "Fastify + helmet, rate-limit, compress ≥ 1.9× the CPU per request of keel's default stack (full)"],
  ['json-invalid', 1 / 1.05, "keel's 422 problem ≤ 1.05× the CPU per request of Fastify's 400 (json-invalid)"],
  // Errors as cheap as successes: keel's refusals at or below Fastify's (issue 48, item 3).
  ['problem', 1, "keel's 404 problem from a handler ≤ the CPU per request of Fastify's (problem)"],
  ['method-not-allowed', 1, "keel's 405 problem ≤ the CPU per request of Fastify's (method-not-allowed)"],
  ['too-large', 1, "keel's 413 problem ≤ the CPU per request of Fastify's (too-large)"],
  // A declared response schema enforced (checked, undeclared members dropped) at or below Fastify's serialiser alone (issue 45).
  ['response-schema', 1, "keel's 20-member answer checked against its response schema ≤ the CPU per request of Fastify's with its schema (response-schema)"],
];

function peersOf(run: RunResult): Peer[] {
  return PEERS.filter((p) => run.scenarios.some((s) => s.results.some((r) => r.peer === p)));
}

function cell(s: ScenarioResult, p: Peer, f: (r: PeerResult) => string): string {
  const r = s.results.find((x) => x.peer === p);
  return r ? f(r) : 'n/a';
}

export interface TargetCheck {
  name: string;
  met: boolean;
  detail: string;
  /** On a miss: where to read which stage costs the time (the section below, or the command that profiles it). */
  hint?: string;
}

/**
 * Points a missed target at its stage breakdown: the section below when this run profiled keel on
 * those scenarios, else the command that does (only the missed scenarios and the peers compared).
 */
function hintFor(run: RunResult, ids: string[], peers: Peer[]): string {
  const profiled = ids.every((id) => stagesOf(run.scenarios.find((s) => s.id === id)!)?.keel);
  return profiled ? 'see "Where the time goes" below' : `where the time goes: \`npm run bench -- --scenarios ${ids.join(',')} --peers ${['keel', ...peers].join(',')} --profile\``;
}

/** The targets of the benchmark brief, checked against this run's numbers. */
export function checkTargets(run: RunResult): TargetCheck[] {
  const out: TargetCheck[] = [];
  const withPeer = (p: Peer) => run.scenarios.filter((s) => s.ratios[p] !== undefined);
  // the express-engine scenarios divide by keel/express, not keel: Fastify there is a reference, not keel's target
  const fast = withPeer('fastify').filter((s) => !s.id.startsWith('express-engine'));
  if (fast.length) {
    const misses = fast.filter((s) => s.ratios.fastify! < 1);
    out.push({
      name: 'keel ≥ 1.0× Fastify req/s on every scenario',
      met: misses.length === 0,
      detail: misses.length ? `below on ${misses.map((s) => `${s.id} (${s.ratios.fastify!.toFixed(2)}×)`).join(', ')}` : `lowest ${Math.min(...fast.map((s) => s.ratios.fastify!)).toFixed(2)}×`,
      // node:http rides along: the floor shows which stages no framework can avoid.
      ...(misses.length ? { hint: hintFor(run, misses.map((s) => s.id), ['fastify', 'node']) } : {}),
    });
    const rss = fast.filter((s) => s.rssRatios.fastify! > 1.2);
    out.push({
      name: 'keel peak RSS ≤ 1.2× Fastify',
      met: rss.length === 0,
      detail: rss.length ? `above on ${rss.map((s) => `${s.id} (${s.rssRatios.fastify!.toFixed(2)}×)`).join(', ')}` : `highest ${Math.max(...fast.map((s) => s.rssRatios.fastify!)).toFixed(2)}×`,
    });
  }
  for (const s of withPeer('express-std')) {
    const met = s.ratios['express-std']! >= 4;
    out.push({ name: `keel ≥ 4× Express 5 + std middleware (${s.id})`, met, detail: `${s.ratios['express-std']!.toFixed(2)}×`, ...(met ? {} : { hint: hintFor(run, [s.id], ['express-std']) }) });
  }
  const kit = expressKit(run);
  if (kit) {
    const met = kit.ratio <= 0.5;
    out.push({
      name: "keel's four factories add ≤ 0.5× the CPU per request the four packages add to Express 5 (express-kit)",
      met,
      detail: `packages +${kit.packages.toFixed(1)} µs/request over bare Express 5, keel's factories +${kit.keel.toFixed(1)} µs (${kit.ratio.toFixed(2)}×)`,
      ...(met ? {} : { hint: 'where the time goes: `npm run bench -- --scenarios express-kit --peers express,express-std,express-keel --profile`' }),
    });
  }
  // issue 24: keel/express ≥ 3× cheaper per request than express@5 on the realistic app, ≥ 5× on hello world,
  // with no more memory (ratios here are Express's CPU ÷ keel/express's, RSS keel/express's ÷ Express's)
  for (const [id, want] of [['express-engine', 3], ['express-engine-hello', 5]] as const) {
    const s = run.scenarios.find((x) => x.id === id && x.cpuRatios.express !== undefined);
    if (!s) continue;
    const met = s.cpuRatios.express! >= want && s.rssRatios.express! <= 1;
    out.push({
      name: `keel/express ≥ ${want}× cheaper per request than Express 5, memory ≤ Express's (${id})`,
      met,
      detail: `${s.cpuRatios.express!.toFixed(2)}× less CPU per request, peak RSS ${s.rssRatios.express!.toFixed(2)}× Express's`,
      ...(met ? {} : { hint: `where the time goes: \`npm run bench -- --scenarios ${id} --peers express,keel-express --profile\`` }),
    });
    // the same bar for keel/express4 against express@4, when both ran (CPU per request of each, divided here)
    const cpuOf = (p: Peer) => s.results.find((r) => r.peer === p)?.cpuPerReq;
    const [e4, k4] = [cpuOf('express4'), cpuOf('keel-express4')];
    if (e4 && k4) {
      const ratio = e4 / k4;
      out.push({
        name: `keel/express4 ≥ ${want}× cheaper per request than Express 4 (${id})`,
        met: ratio >= want,
        detail: `${ratio.toFixed(2)}× less CPU per request (${k4.toFixed(0)} vs ${e4.toFixed(0)} µs)`,
        ...(ratio >= want ? {} : { hint: `where the time goes: \`npm run bench -- --scenarios ${id} --peers express4,keel-express4 --profile\`` }),
      });
    }
  }
  // issue 48: on the realistic app, keel/express spends ≤ 1.05× Fastify's CPU per request (cpuRatios: Fastify ÷ keel/express)
  const app = run.scenarios.find((x) => x.id === 'express-engine' && x.cpuRatios.fastify !== undefined && x.cpuRatios.fastify > 0);
  if (app) {
    const ratio = 1 / app.cpuRatios.fastify!;
    const met = ratio <= ENGINE_VS_FASTIFY;
    out.push({
      name: `keel/express ≤ ${ENGINE_VS_FASTIFY}× Fastify's CPU per request on the same app (express-engine)`,
      met,
      detail: `${ratio.toFixed(2)}× Fastify's CPU per request`,
      ...(met ? {} : { hint: 'where the time goes: `npm run bench -- --scenarios express-engine --peers keel-express,fastify --profile`' }),
    });
  }
  // issue 48: Fastify + helmet, rate-limit and compress spend ≥ 1.9× keel's default stack's CPU per request (full);
  // keel's 422 problem costs ≤ 1.05× Fastify's 400 (json-invalid). cpuRatios.fastify is Fastify's ÷ keel's.
  for (const [id, fastifyOverKeel, name] of FASTIFY_CPU_BARS) {
    const s = run.scenarios.find((x) => x.id === id && x.cpuRatios.fastify !== undefined && x.cpuRatios.fastify > 0);
    if (!s) continue;
    const met = s.cpuRatios.fastify! >= fastifyOverKeel;
    out.push({
      name, met,
      detail: `Fastify ÷ keel CPU per request ${s.cpuRatios.fastify!.toFixed(2)}× (keel at ${(1 / s.cpuRatios.fastify!).toFixed(2)}× Fastify's)`,
      ...(met ? {} : { hint: `where the time goes: \`npm run bench -- --scenarios ${id} --peers keel,fastify --profile\`` }),
    });
  }
  const hello = run.scenarios.find((s) => s.id === 'hello' && s.ratios.node !== undefined);
  if (hello) {
    // "costs ≤ 10% over node:http": node's time per request × 1.1 ≥ keel's, i.e. keel ≥ node / 1.1.
    const overhead = 1 / hello.ratios.node! - 1;
    const met = overhead <= 0.1;
    out.push({ name: 'a route with every feature off costs ≤ 10% over node:http (hello)', met, detail: overhead < 0 ? `${pct(-overhead)} less time per request` : `${pct(overhead)} more time per request`, ...(met ? {} : { hint: hintFor(run, ['hello'], ['node']) }) });
  }
  return out;
}

/**
 * The express-kit scenario's added CPU per request over bare Express 5 (the `express` peer): the
 * packages' (`express-std`) and keel's factories' (`express-keel`), and keel's ÷ the packages'.
 */
export function expressKit(run: RunResult): { packages: number; keel: number; ratio: number } | undefined {
  const s = run.scenarios.find((x) => x.id === 'express-kit');
  const cpu = (p: Peer) => s?.results.find((r) => r.peer === p)?.cpuPerReq;
  const [bare, packages, keel] = [cpu('express'), cpu('express-std'), cpu('express-keel')];
  if (bare === undefined || packages === undefined || keel === undefined) return undefined;
  const added = { packages: packages - bare, keel: keel - bare };
  return { ...added, ratio: added.packages > 0 ? added.keel / added.packages : Infinity };
}

export function markdownReport(run: RunResult): string {
  const peers = peersOf(run);
  const others = peers.filter((p) => p !== 'keel');
  const m = run.machine;
  const st = run.settings;
  const lines: string[] = [];
  lines.push(`Run ${run.startedAt.slice(0, 16).replace('T', ' ')} UTC on ${m.nproc} × ${m.cpu}, Node ${m.node}, ${m.os}; ` +
    `autocannon, ${st.connections} connections, median of ${st.rounds} rounds × ${st.durationSec} s after ${st.warmupSec} s warm-up` +
    `${m.pinned ? '; servers pinned to one CPU, load generator on the other' : ''}. ± is the spread between rounds ((max − min) / median).`);
  lines.push('');
  lines.push(`| scenario | ${peers.map((p) => `${PEER_LABELS[p]} req/s`).join(' | ')} | ${others.map((p) => `keel / ${PEER_LABELS[p]}`).join(' | ')} |`);
  lines.push(`|---|${peers.map(() => '---:').join('|')}|${others.map(() => '---:').join('|')}|`);
  for (const s of run.scenarios) {
    const rps = peers.map((p) => cell(s, p, (r) => `${fmtInt(r.rps)} ±${pct(r.spread)}`));
    const ratios = others.map((p) => (s.ratios[p] === undefined ? 'n/a' : `**${s.ratios[p]!.toFixed(2)}×**`));
    lines.push(`| ${s.title} | ${rps.join(' | ')} | ${ratios.join(' | ')} |`);
  }
  lines.push('');
  lines.push('Server CPU time per request (user + system, median of rounds; steadier than req/s when the machine is shared), ' +
    'latency p50 / p99, and the server process\'s peak RSS. The last columns: peer CPU per request ÷ keel\'s (above 1: keel spends less).');
  lines.push('');
  lines.push(`| scenario | ${peers.map((p) => PEER_LABELS[p]).join(' | ')} | ${others.map((p) => `CPU ${PEER_LABELS[p]} / keel`).join(' | ')} |`);
  lines.push(`|---|${peers.map(() => '---:').join('|')}|${others.map(() => '---:').join('|')}|`);
  for (const s of run.scenarios) {
    const cells = peers.map((p) => cell(s, p, (r) => `${r.cpuPerReq.toFixed(0)} µs · ${r.p50} / ${r.p99} ms · ${mb(r.peakRss)}`));
    const cpu = others.map((p) => (s.cpuRatios[p] === undefined ? 'n/a' : `${s.cpuRatios[p]!.toFixed(2)}×`));
    lines.push(`| ${s.id} | ${cells.join(' | ')} | ${cpu.join(' | ')} |`);
  }
  const na = new Map<string, string[]>();
  for (const s of run.scenarios) {
    for (const [p, why] of Object.entries(s.na)) {
      const k = `${PEER_LABELS[p as Peer]}: ${why}`;
      na.set(k, [...(na.get(k) ?? []), s.id]);
    }
  }
  if (na.size) {
    lines.push('');
    lines.push(`n/a: ${[...na].map(([k, ids]) => `${k} (${ids.length > 4 ? `${ids.length} scenarios` : ids.join(', ')})`).join('; ')}.`);
  }
  const targets = checkTargets(run);
  if (targets.length) {
    lines.push('');
    lines.push('Targets (this run):');
    lines.push('');
    for (const t of targets) lines.push(`- ${t.met ? 'met' : '**missed**'}: ${t.name}: ${t.detail}${t.hint ? ` — ${t.hint}` : ''}`);
  }
  lines.push(...breakdownMarkdown(run));
  return `${lines.join('\n')}\n`;
}

/** `keel/fastify hello: X.XX, full: Y.YY` (ratios of req/s; n/a where a side is missing). */
export function quickLine(run: RunResult): string {
  const r = (id: string) => run.scenarios.find((s) => s.id === id)?.ratios.fastify;
  const f = (x: number | undefined) => (x === undefined ? 'n/a' : x.toFixed(2));
  return `keel/fastify hello: ${f(r('hello'))}, full: ${f(r('full'))}`;
}
