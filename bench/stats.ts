/** Result shapes and the small statistics the runner and the report share. */
import type { Peer } from './scenarios.js';

export interface Round {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** Server CPU time (user + system) per request, µs: steadier than req/s on a shared machine. */
  cpuPerReq: number;
}

export interface PeerResult {
  peer: Peer;
  rounds: Round[];
  /** Medians over rounds. */
  rps: number;
  p50: number;
  p99: number;
  cpuPerReq: number;
  /** (max − min) / median of req/s over rounds: the run's noise. */
  spread: number;
  /** Peak RSS of the server process, bytes (VmHWM, or sampled over IPC). */
  peakRss: number;
  rssSource: 'VmHWM' | 'ipc';
}

export interface ScenarioResult {
  id: string;
  title: string;
  results: PeerResult[];
  /** Peers without an equivalent, and why. */
  na: Partial<Record<Peer, string>>;
  /** keel req/s ÷ peer req/s, same run. */
  ratios: Partial<Record<Peer, number>>;
  /** peer CPU µs/request ÷ keel CPU µs/request (> 1: keel spends less CPU per request). */
  cpuRatios: Partial<Record<Peer, number>>;
  /** keel peak RSS ÷ peer peak RSS. */
  rssRatios: Partial<Record<Peer, number>>;
}

export interface RunResult {
  startedAt: string;
  finishedAt: string;
  machine: { nproc: number; cpu: string; node: string; os: string; pinned: boolean };
  settings: { connections: number; durationSec: number; rounds: number; warmupSec: number; quick: boolean };
  scenarios: ScenarioResult[];
  /** Load time of keel's Express entries and of express (bench/load-time.ts), when measured. */
  loadTimes?: import('./load-time.js').LoadTime[];
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function summarise(peer: Peer, rounds: Round[], peakRss: number, rssSource: PeerResult['rssSource']): PeerResult {
  const rps = median(rounds.map((r) => r.rps));
  const spread = rps > 0 ? (Math.max(...rounds.map((r) => r.rps)) - Math.min(...rounds.map((r) => r.rps))) / rps : 0;
  return { peer, rounds, rps, p50: median(rounds.map((r) => r.p50)), p99: median(rounds.map((r) => r.p99)), cpuPerReq: median(rounds.map((r) => r.cpuPerReq)), spread, peakRss, rssSource };
}
