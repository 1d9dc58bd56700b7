/**
 * "Where the time goes": for every scenario where keel misses a target, keel's CPU per request by
 * stage beside the peers' (from `--profile` runs), largest differences first, and how much keel
 * would have to shed to meet the target. Data for the JSON, Markdown for the report.
 */
import { PEERS, PEER_LABELS, type Peer } from './scenarios.js';
import type { RunResult, ScenarioResult } from './stats.js';
import type { PeerStages, TopFunction } from './stages.js';

/** What run.ts adds to a scenario result under `--profile`: each profiled server's stages. */
export type StagesByPeer = Partial<Record<Peer, PeerStages>>;
export type ProfiledScenario = ScenarioResult & { stages?: StagesByPeer };

export function stagesOf(s: ScenarioResult): StagesByPeer | undefined {
  return (s as ProfiledScenario).stages;
}

/**
 * The per-scenario targets as req/s ratios keel ÷ peer must reach. "≤ 10% over node:http" is a time
 * per request: keel's time ≤ 1.1 × node's, i.e. the ratio ≥ 1 / 1.1.
 */
const TARGETS: readonly { peer: Peer; target: number; scenario?: string }[] = [
  { peer: 'fastify', target: 1 },
  { peer: 'express-std', target: 4 },
  { peer: 'node', target: 1 / 1.1, scenario: 'hello' },
];

export interface Miss {
  peer: Peer;
  ratio: number;
  target: number;
  /**
   * CPU µs per request keel would have to shed to meet the target, from its measured CPU per
   * request: a server saturating its one CPU serves req/s ∝ 1 / time per request.
   */
  saveUs: number;
}

export function missesOf(s: ScenarioResult): Miss[] {
  const keel = s.results.find((r) => r.peer === 'keel');
  const out: Miss[] = [];
  for (const t of TARGETS) {
    const ratio = s.ratios[t.peer];
    if (ratio === undefined || (t.scenario && t.scenario !== s.id) || ratio >= t.target) continue;
    out.push({ peer: t.peer, ratio, target: t.target, saveUs: (keel?.cpuPerReq ?? 0) * (1 - ratio / t.target) });
  }
  return out;
}

export interface StageRow {
  stage: string;
  /** µs per request, per profiled peer. */
  us: Partial<Record<Peer, number>>;
  /** keel − peer, µs per request (positive: keel spends more). */
  delta: Partial<Record<Peer, number>>;
}

export interface Breakdown {
  scenario: string;
  misses: Miss[];
  /** Profiled peers, keel first. */
  peers: Peer[];
  /** The peer rows are sorted against: the first missed target's peer that was profiled. */
  reference?: Peer;
  rows: StageRow[];
  /** Main-thread busy time per request (the sum of the rows), and measured CPU (all threads). */
  busy: Partial<Record<Peer, number>>;
  cpu: Partial<Record<Peer, number>>;
  startupMs: Partial<Record<Peer, number>>;
  /** keel's heaviest functions in the stages where it spends most over the reference. */
  hotspots: { stage: string; functions: TopFunction[] }[];
  profiles: Partial<Record<Peer, string>>;
}

/** Below this (µs per request) in every column a stage is noise, and left out. */
const NOISE = 0.05;
/** The same code in every server (bench/server.ts): never what keel should cut, so not named as a surplus. */
const HARNESS = 'benchmark harness';

export function breakdownOf(s: ScenarioResult): Breakdown | undefined {
  const stages = stagesOf(s);
  const misses = missesOf(s);
  const keel = stages?.keel;
  if (!stages || !keel || !misses.length) return undefined;
  const peers = PEERS.filter((p) => stages[p]);
  const others = peers.filter((p) => p !== 'keel');
  const reference = misses.map((m) => m.peer).find((p) => stages[p]) ?? others[0];
  const names = new Set(peers.flatMap((p) => Object.keys(stages[p]!.perRequest)));
  const rows: StageRow[] = [];
  for (const stage of names) {
    const us: StageRow['us'] = {};
    for (const p of peers) us[p] = stages[p]!.perRequest[stage] ?? 0;
    if (Math.max(...Object.values(us)) < NOISE) continue;
    const delta: StageRow['delta'] = {};
    for (const p of others) delta[p] = us.keel! - us[p]!;
    rows.push({ stage, us, delta });
  }
  const diff = (r: StageRow) => (reference ? Math.abs(r.delta[reference]!) : r.us.keel!);
  rows.sort((a, b) => diff(b) - diff(a) || b.us.keel! - a.us.keel!);
  const surplus = rows.filter((r) => r.stage !== HARNESS && (reference ? r.delta[reference]! >= NOISE : true)).slice(0, 3);
  const pick = <T>(f: (x: PeerStages) => T) => Object.fromEntries(peers.map((p) => [p, f(stages[p]!)])) as Partial<Record<Peer, T>>;
  return {
    scenario: s.id,
    misses,
    peers,
    ...(reference ? { reference } : {}),
    rows,
    busy: pick((x) => x.busyPerRequest),
    cpu: Object.fromEntries(peers.map((p) => [p, s.results.find((r) => r.peer === p)?.cpuPerReq ?? 0])),
    startupMs: pick((x) => x.startupMs),
    hotspots: surplus.map((r) => ({ stage: r.stage, functions: keel.top.filter((t) => t.stage === r.stage).slice(0, 3) })),
    profiles: pick((x) => x.profile),
  };
}

export function whereTheTimeGoes(run: RunResult): Breakdown[] {
  return run.scenarios.map(breakdownOf).filter((b): b is Breakdown => b !== undefined);
}

// Three significant digits or so: the profile is sampled every ~1 ms, finer is noise.
const us = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(1));
const signed = (x: number) => (Math.abs(x) < NOISE ? '0.0' : `${x < 0 ? '−' : '+'}${us(Math.abs(x))}`);
const code = (s: string) => `\`${s}\``;

function missText(m: Miss): string {
  return `${m.ratio.toFixed(2)}× ${PEER_LABELS[m.peer]} (target ≥ ${m.target.toFixed(2)}×)`;
}

/** The "Where the time goes" section, or no lines when nothing was profiled or nothing missed. */
export function breakdownMarkdown(run: RunResult): string[] {
  const all = whereTheTimeGoes(run);
  if (!all.length) return [];
  const lines = ['', '### Where the time goes', ''];
  lines.push('From each server\'s main-thread CPU profile (`--profile`): self time per stage ÷ requests served, in µs per request, ' +
    'for every scenario where keel misses a target; start-up and idle time left out. Each sample goes to the stage of the ' +
    'nearest frame on its stack that says what the work is (bench/stage-rules.ts). Δ = keel − peer (positive: keel spends more). ' +
    'Profiling slows every server alike, so compare across a row, not with the CPU table above.');
  for (const b of all) {
    const ref = b.reference;
    lines.push('', `#### ${b.scenario}: keel ${b.misses.map(missText).join(', ')}`, '');
    const several = b.misses.length > 1;
    const need = b.misses.map((m) => `${us(m.saveUs)} µs${several ? ` (${PEER_LABELS[m.peer]})` : ''}`).join(', ');
    let summary = `To meet ${several ? 'them' : 'it'} keel must spend ≈ ${need} less CPU per request (of ${us(b.cpu.keel ?? 0)} µs measured).`;
    if (ref) {
      const named = b.rows.filter((r) => r.stage !== HARNESS);
      const more = named.filter((r) => r.delta[ref]! >= NOISE).slice(0, 4);
      const less = named.filter((r) => r.delta[ref]! <= -NOISE).slice(0, 2);
      if (more.length) summary += ` keel spends more than ${PEER_LABELS[ref]} on: ${more.map((r) => `${r.stage} ${signed(r.delta[ref]!)} µs`).join(', ')}`;
      if (less.length) summary += `${more.length ? '; less on' : ` keel spends less than ${PEER_LABELS[ref]} on`}: ${less.map((r) => `${r.stage} ${signed(r.delta[ref]!)} µs`).join(', ')}`;
      if (more.length || less.length) summary += '.';
    }
    lines.push(summary, '');
    // The reference's Δ first: it is the column the rows are sorted by.
    const others = b.peers.filter((p) => p !== 'keel').sort((x, y) => Number(y === ref) - Number(x === ref));
    lines.push(`| stage | ${b.peers.map((p) => PEER_LABELS[p]).join(' | ')} | ${others.map((p) => `Δ vs ${PEER_LABELS[p]}`).join(' | ')} |`);
    lines.push(`|---|${b.peers.map(() => '---:').join('|')}|${others.map(() => '---:').join('|')}|`);
    for (const r of b.rows) {
      lines.push(`| ${r.stage} | ${b.peers.map((p) => us(r.us[p]!)).join(' | ')} | ${others.map((p) => signed(r.delta[p]!)).join(' | ')} |`);
    }
    const total = (x: Breakdown['busy']) => `${b.peers.map((p) => us(x[p]!)).join(' | ')} | ${others.map((p) => signed(x.keel! - x[p]!)).join(' | ')}`;
    lines.push(`| **main thread, profiled** | ${total(b.busy)} |`);
    lines.push(`| CPU measured (all threads, median round) | ${total(b.cpu)} |`);
    const hot = b.hotspots.filter((h) => h.functions.length);
    if (hot.length) {
      lines.push('', `keel's heaviest functions there (µs/request): ${hot.map((h) => `${h.stage}: ${h.functions.map((f) => `${code(f.fn)}${f.where ? ` ${f.where}` : ''} ${us(f.us)}`).join(', ')}`).join('; ')}.`);
    }
    lines.push('', `Start-up (once per process, not per request): ${b.peers.map((p) => `${PEER_LABELS[p]} ${us(b.startupMs[p]!)} ms`).join(', ')}. ` +
      `Profiles: ${b.peers.map((p) => `${code(b.profiles[p]!)} (${PEER_LABELS[p]})`).join(', ')}; every function: ${code('npx tsx bench/profile-top.ts <file>')}.`);
  }
  return lines;
}
