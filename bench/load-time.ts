/**
 * Load time of keel's Express entries against express's own (issue 33 item 6), and of keel's other entries through
 * require() against import (issue 43): what a serverless cold start or a CLI pays before the first request. `npm run bench:load [-- --runs 15]`, or `npm run bench -- --scenarios
 * express-load` (also part of a full `npm run bench`). keel's entries are loaded by name from the build (`npm run
 * build` first), as an installed package's are.
 *
 * Each sample is a fresh node process measuring the CPU time (process.cpuUsage, user + system) of one `require()`
 * (or `import()`) of the module, so node's own start-up is left out and, unlike wall time, other processes on a
 * shared machine barely move it; the modules are sampled round-robin and the median of the runs is reported.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median } from './stats.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The --scenarios id that runs this measurement in `npm run bench`. */
export const LOAD_SCENARIO = 'express-load';

/** Samples per module: enough for a stable median on a shared machine. */
export const DEFAULT_LOAD_RUNS = 15;

/** What is loaded, how, and what keel's entry is compared with. */
export const LOAD_TARGETS = [
  { id: 'express@5 require', module: 'express', how: 'require' },
  { id: 'keel/express require', module: 'keel/express', how: 'require', versus: 'express@5 require' },
  { id: 'express@5 import', module: 'express', how: 'import' },
  { id: 'keel/express import', module: 'keel/express', how: 'import', versus: 'express@5 import' },
  { id: 'express@4 require', module: 'express4', how: 'require' },
  { id: 'keel/express4 require', module: 'keel/express4', how: 'require', versus: 'express@4 require' },
  { id: 'express@4 import', module: 'express4', how: 'import' },
  { id: 'keel/express4 import', module: 'keel/express4', how: 'import', versus: 'express@4 import' },
  // keel's other entries (issue 43): require() of the CommonJS build against import of its ES module entry, which
  // re-exports that build; target ≤ 1×.
  ...(['keel', 'keel/middleware/cors', 'keel/middleware/security-headers', 'keel/middleware/rate-limit', 'keel/jsonrpc'] as const).flatMap((module) => [
    { id: `${module} import`, module, how: 'import' },
    { id: `${module} require`, module, how: 'require', versus: `${module} import` },
  ] as const),
] as const;

export interface LoadTime { id: string; medianMs: number; minMs: number; runs: number; versus?: string; ratio?: number }

function sample(module: string, how: 'require' | 'import'): number {
  const load = how === 'require' ? `require(${JSON.stringify(module)})` : `await import(${JSON.stringify(module)})`;
  const code = `const c = process.cpuUsage(); ${load}; const d = process.cpuUsage(c); console.log((d.user + d.system) / 1000);`;
  const r = spawnSync(process.execPath, [`--input-type=${how === 'require' ? 'commonjs' : 'module'}`, '-e', code], { cwd: root, encoding: 'utf8', timeout: 30_000 });
  const ms = Number(r.stdout.trim());
  if (r.status !== 0 || !Number.isFinite(ms)) throw new Error(`loading ${module} (${how}) failed: ${r.stderr}`);
  return ms;
}

/** Medians of `runs` cold loads of each target, round-robin. */
export function measureLoadTimes(runs = DEFAULT_LOAD_RUNS): LoadTime[] {
  if (!existsSync(join(root, 'dist', 'express', 'index.cjs'))) throw new Error('keel/express is not built: run npm run build first');
  const samples = new Map<string, number[]>(LOAD_TARGETS.map((t) => [t.id, []]));
  for (let i = 0; i < runs; i++) for (const t of LOAD_TARGETS) samples.get(t.id)!.push(sample(t.module, t.how));
  const result = LOAD_TARGETS.map((t) => ({ id: t.id, medianMs: median(samples.get(t.id)!), minMs: Math.min(...samples.get(t.id)!), runs }));
  for (const [i, t] of LOAD_TARGETS.entries()) {
    if (!('versus' in t)) continue;
    const base = result.find((r) => r.id === t.versus)!;
    Object.assign(result[i]!, { versus: t.versus, ratio: result[i]!.medianMs / base.medianMs });
  }
  return result;
}

export function loadTimeMarkdown(times: LoadTime[]): string {
  const rows = times.map((t) => `| ${t.id} | ${t.medianMs.toFixed(1)} | ${t.minMs.toFixed(1)} | ${t.ratio === undefined ? '' : `${t.ratio.toFixed(2)}× ${t.versus}`} |`);
  return ['## Load time (express-load)', '', `Median CPU time (user + system) of one require()/import() in ${times[0]?.runs ?? 0} fresh processes; target: keel's Express entries ≤ 1× express's, require() of keel's entries ≤ 1× their import.`, '',
    '| module | median CPU ms | min CPU ms | vs |', '|---|---:|---:|---|', ...rows, ''].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { runs: { type: 'string' } } });
  console.log(loadTimeMarkdown(measureLoadTimes(Number(values.runs ?? DEFAULT_LOAD_RUNS))));
}
