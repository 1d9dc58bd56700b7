/**
 * Running cases: each runnable case is sent to its target and compared; skipped documents are
 * counted. Cases run one after another: several corpus cases depend on server state (rate limits)
 * and the fixture app re-mounts one server per case.
 */
import { setTimeout as sleep } from 'node:timers/promises';
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

/**
 * Requests sent before the measured one (rate-limit cases: `warmup_requests`, expected
 * `warmup_expect_status`, `sleep_ms_between`), read from the case's rate_limit block.
 */
export function warmup(c: ConformanceCase): { requests: number; expectStatus?: number; sleepMs: number } {
  const rl = (c.handler.middleware?.rate_limit ?? {}) as Record<string, unknown>;
  const requests = Number.isInteger(rl.warmup_requests) ? (rl.warmup_requests as number) : 0;
  const expectStatus = typeof rl.warmup_expect_status === 'number' ? rl.warmup_expect_status : undefined;
  const sleepMs = typeof rl.sleep_ms_between === 'number' ? rl.sleep_ms_between : 0;
  return { requests, ...(expectStatus !== undefined ? { expectStatus } : {}), sleepMs };
}

async function runOne(c: ConformanceCase, options: RunOptions): Promise<CaseResult> {
  const started = performance.now();
  const base = { id: c.id, category: c.category, name: c.name, source: c.source };
  let target: CaseTarget | undefined;
  try {
    target = typeof options.target === 'function' ? await options.target(c) : { baseUrl: String(options.target) };
    const wire = buildRequest(c.request);
    const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const mismatches: Mismatch[] = [];
    const warm = warmup(c);
    for (let i = 0; i < warm.requests; i++) {
      const w = await send(target.baseUrl, wire, timeoutMs);
      if (warm.expectStatus !== undefined && w.status !== warm.expectStatus) mismatches.push({ what: `warmup request ${i + 1} status`, expected: warm.expectStatus, actual: w.status });
      if (warm.sleepMs > 0) await sleep(warm.sleepMs);
    }
    const snap = await send(target.baseUrl, wire, timeoutMs);
    mismatches.push(...compareResponse(c.expected, snap));
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
