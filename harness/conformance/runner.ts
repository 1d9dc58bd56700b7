/**
 * Running cases: each runnable case is sent to its target and compared; skipped documents are
 * counted. Cases run one after another: several corpus cases depend on server state (rate limits)
 * and the fixture app re-mounts one server per case.
 */
import { buildRequest, send, DEFAULT_REQUEST_TIMEOUT_MS } from './client.js';
import { compareResponse, type Mismatch } from './compare.js';
import { isRunnable, type ConformanceCase, type LoadedCase } from './types.js';

export type CaseStatus = 'passed' | 'failed' | 'skipped';

export interface CaseResult {
  id: string;
  category: string;
  name: string;
  source: string;
  status: CaseStatus;
  /** Differences (failed cases). */
  mismatches: Mismatch[];
  /** Transport or setup failure (failed cases), e.g. connection refused. */
  error?: string;
  /** Why the case was not run (skipped cases). */
  skip?: string;
  durationMs: number;
}

export interface CategorySummary {
  category: string;
  passed: number;
  failed: number;
  skipped: number;
}

export interface RunReport {
  results: CaseResult[];
  categories: CategorySummary[];
  passed: number;
  failed: number;
  skipped: number;
}

/** Where to send one case: its base URL, and what to do once it has run. */
export interface CaseTarget {
  baseUrl: string;
  release?: () => void | Promise<void>;
}

export interface RunOptions {
  /** A fixed base URL (an already running server), or a function preparing a target per case. */
  target: string | URL | ((c: ConformanceCase) => Promise<CaseTarget>);
  /** Per-request budget (default DEFAULT_REQUEST_TIMEOUT_MS = 10000). */
  timeoutMs?: number;
  /** Called after each case (progress output). */
  onResult?: (r: CaseResult) => void;
}

async function runOne(c: ConformanceCase, options: RunOptions): Promise<CaseResult> {
  const started = performance.now();
  const base = { id: c.id, category: c.category, name: c.name, source: c.source };
  let target: CaseTarget | undefined;
  try {
    target = typeof options.target === 'function' ? await options.target(c) : { baseUrl: String(options.target) };
    const snap = await send(target.baseUrl, buildRequest(c.request), options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
    const mismatches = compareResponse(c.expected, snap);
    return { ...base, status: mismatches.length ? 'failed' : 'passed', mismatches, durationMs: performance.now() - started };
  } catch (err) {
    const e = err as Error;
    return { ...base, status: 'failed', mismatches: [], error: `${e.name}: ${e.message}`, durationMs: performance.now() - started };
  } finally {
    await target?.release?.();
  }
}

/** Summaries per category, sorted by name. */
export function summarise(results: readonly CaseResult[]): RunReport {
  const byCategory = new Map<string, CategorySummary>();
  for (const r of results) {
    const s = byCategory.get(r.category) ?? { category: r.category, passed: 0, failed: 0, skipped: 0 };
    s[r.status]++;
    byCategory.set(r.category, s);
  }
  const categories = [...byCategory.values()].sort((a, b) => a.category.localeCompare(b.category));
  const count = (st: CaseStatus) => results.filter((r) => r.status === st).length;
  return { results: [...results], categories, passed: count('passed'), failed: count('failed'), skipped: count('skipped') };
}

/**
 * Run every case: runnable ones against the target, the rest reported as skipped.
 *
 * @example
 * const report = await runCases(loadCases(['test/fixtures/conformance']), { target: 'http://127.0.0.1:3000' });
 * console.log(`${report.passed} passed, ${report.failed} failed`);
 */
export async function runCases(cases: readonly LoadedCase[], options: RunOptions): Promise<RunReport> {
  const results: CaseResult[] = [];
  for (const c of cases) {
    let r: CaseResult;
    if (isRunnable(c)) r = await runOne(c, options);
    else {
      const name = 'name' in c && typeof c.name === 'string' ? c.name : c.id;
      r = { id: c.id, category: c.category, name, source: c.source, status: 'skipped', mismatches: [], skip: c.skip, durationMs: 0 };
    }
    results.push(r);
    options.onResult?.(r);
  }
  return summarise(results);
}
