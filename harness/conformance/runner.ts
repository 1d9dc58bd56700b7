/**
 * Running cases: each runnable case is sent to its target and compared (an HTTP exchange, or a
 * WebSocket session played by ws-session.ts); skipped documents are counted. Cases run one after
 * another: several corpus cases depend on server state (rate limits) and the fixture app re-mounts
 * one server per case.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import type { ResponseSnapshot } from '../snapshot.js';
import { buildRequest, send, DEFAULT_REQUEST_TIMEOUT_MS, type WireRequest } from './client.js';
import { compareResponse, type ConformanceLevel, type Mismatch } from './compare.js';
import { classify } from './contradiction-classify.js';
import type { Contradiction } from './contradictions.js';

export { applyContradictions } from './contradiction-classify.js';
import { isRunnable, isRunnableProtocol, isRunnableWebSocket, type CaseExpectedResponse, type CaseIdentity, type ConformanceCase, type LoadedCase, type RunnableCase, type WebSocketCase } from './types.js';
import { playSession, type FrameLog } from './ws-session.js';
import { runProtocolCase } from './kinds/index.js';

/**
 * `contradicted`: the case failed only in a field another case of the corpus contradicts (listed in
 * harness/conformance/contradictions.json), and the answer there is that other case's expectation.
 * Not a failure.
 */
export type CaseStatus = 'passed' | 'failed' | 'contradicted' | 'skipped';

/** Header naming the case on every request the runner sends (an implementation may route by it). */
export const CASE_HEADER = 'X-Conformance-Case';

/** The request as sent, for reports (body as UTF-8 text, cut at MAX_REPORTED_BODY bytes). */
export interface SentRequest {
  method: string;
  path: string;
  headers: Array<[string, string]>;
  body?: string;
}

/** What came back, for reports. */
export interface ActualResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: unknown;
}

export interface CaseResult {
  id: string;
  category: string;
  name: string;
  source: string;
  /** Why the case exists (its `description`). */
  description?: string;
  /** On whose word the case asks it (types.ts CaseIdentity): `required`, `reference` or `keel`, with the basis. */
  requirement?: CaseIdentity['requirement'];
  basis?: string;
  status: CaseStatus;
  /** Differences (failed and contradicted cases). */
  mismatches: Mismatch[];
  /** Transport or setup failure (failed cases), e.g. connection refused. */
  error?: string;
  /** Why the case was not run (skipped cases). */
  skip?: string;
  /** The corpus contradiction that excuses the mismatches (contradicted cases), or that was considered. */
  contradiction?: Contradiction & { note?: string };
  /** The request sent (cases that ran). */
  request?: SentRequest;
  /** The case's expected response and what came back (cases that ran and got an answer). */
  expected?: CaseExpectedResponse;
  actual?: ActualResponse;
  /** WebSocket session cases: every frame sent and received, in order. */
  transcript?: FrameLog[];
  durationMs: number;
  /** A generated variant (variants.ts): the id of the case it was derived from, and the rule. */
  variant_of?: string;
  variant_rule?: string;
}

export interface CategorySummary {
  category: string;
  passed: number;
  failed: number;
  contradicted: number;
  skipped: number;
}

export interface RunReport {
  results: CaseResult[];
  categories: CategorySummary[];
  passed: number;
  failed: number;
  contradicted: number;
  skipped: number;
}

/** Where to send one case: its base URL, and what to do once it has run. */
export interface CaseTarget {
  baseUrl: string;
  /**
   * Called with the error when a request of the case failed in transport (reset, refused, no answer
   * within the timeout): a better error when the target knows why (`--exec`: its server exited, with
   * the status and its stderr, or stopped answering), else undefined.
   */
  explain?: (err: Error) => Promise<Error | undefined>;
  release?: () => void | Promise<void>;
  /**
   * Server-side state a WebSocket session case's `expected` block names (e.g. `disconnect_count`), as
   * the target's own handler recorded it. Without it such expectations cannot be checked (the case is
   * skipped once everything a client can see has passed). keel's fixture app reports its counters.
   */
  observe?: (c: WebSocketCase) => Record<string, unknown>;
}

/**
 * Prepares the target of one case. Written as a method so a factory for HTTP cases only
 * (`execTarget`'s) is accepted too: it is never given a WebSocket case it did not plan.
 */
export type CaseTargetFactory = { prepare(c: RunnableCase): Promise<CaseTarget> }['prepare'];

export interface RunOptions {
  /** A fixed base URL (an already running server), or a function preparing a target per case. */
  target: string | URL | CaseTargetFactory;
  /** Per-request budget, and per wait of a WebSocket session (default DEFAULT_REQUEST_TIMEOUT_MS = 10000). */
  timeoutMs?: number;
  /** WebSocket sessions: quiet period before `expected_receive_count` is checked (default DEFAULT_QUIET_MS = 200). */
  quietMs?: number;
  /** `strict` (default) or `lenient` (see compare.ts). */
  level?: ConformanceLevel;
  /** Header carrying the case id on every request (default CASE_HEADER); `false` sends none. */
  caseHeader?: string | false;
  /**
   * Every case loaded, before any filter (default: `cases`): where the expectation of a case's
   * conflicting case is read (contradictions), so a verdict does not depend on the filter.
   */
  corpus?: readonly LoadedCase[];
  /** Called after each case (progress output). */
  onResult?: (r: CaseResult) => void;
}

/** Largest request body text kept in a result, bytes. */
const MAX_REPORTED_BODY = 2048;

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

/** The wire request of a case as the runner sends it: the case's request plus the case-id header. */
export function wireFor(c: ConformanceCase, caseHeader: string | false = CASE_HEADER): WireRequest {
  const wire = buildRequest(c.request);
  if (caseHeader && !wire.headers.some(([k]) => k.toLowerCase() === caseHeader.toLowerCase())) wire.headers.push([caseHeader, c.id]);
  return wire;
}

export function sentRequest(wire: WireRequest): SentRequest {
  const body = wire.body === undefined ? undefined : wire.body.length > MAX_REPORTED_BODY ? `${wire.body.subarray(0, MAX_REPORTED_BODY).toString('utf8')}… (${wire.body.length} bytes)` : wire.body.toString('utf8');
  return { method: wire.method, path: wire.path, headers: wire.headers.map(([k, v]) => [k, v.length > 200 ? `${v.slice(0, 200)}… (${v.length} characters)` : v]), ...(body !== undefined ? { body } : {}) };
}

function actualOf(snap: ResponseSnapshot): ActualResponse {
  const body = snap.json !== undefined ? snap.json : snap.text.length > MAX_REPORTED_BODY ? `${snap.text.slice(0, MAX_REPORTED_BODY)}…` : snap.text;
  return { status: snap.status, headers: snap.headers, body };
}

/** What a result says of its case: id, category, name, source, and its description and standing when it has them. */
export function identityOf(c: LoadedCase): Pick<CaseResult, 'id' | 'category' | 'name' | 'source' | 'description' | 'requirement' | 'basis'> {
  const name = 'name' in c && typeof c.name === 'string' ? c.name : c.id;
  return { id: c.id, category: c.category, name, source: c.source, ...(c.description ? { description: c.description } : {}), ...(c.requirement ? { requirement: c.requirement, basis: c.basis ?? '' } : {}) };
}

async function runOne(c: ConformanceCase, options: RunOptions): Promise<CaseResult> {
  const started = performance.now();
  const variant = c as { variant_of?: string; variant_rule?: string };
  const base = { ...identityOf(c), ...(variant.variant_of ? { variant_of: variant.variant_of, variant_rule: variant.variant_rule } : {}) };
  let target: CaseTarget | undefined;
  let request: SentRequest | undefined;
  try {
    const wire = wireFor(c, options.caseHeader ?? CASE_HEADER);
    target = typeof options.target === 'function' ? await options.target(c) : { baseUrl: String(options.target) };
    // Only now is the request sent: a target that could not be prepared (its server never started or
    // died earlier) must not have the report show a request as sent.
    request = sentRequest(wire);
    const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const mismatches: Mismatch[] = [];
    const warm = warmup(c);
    for (let i = 0; i < warm.requests; i++) {
      const w = await send(target.baseUrl, wire, timeoutMs);
      if (warm.expectStatus !== undefined && w.status !== warm.expectStatus) mismatches.push({ what: `warmup request ${i + 1} status`, expected: warm.expectStatus, actual: w.status });
      if (warm.sleepMs > 0) await sleep(warm.sleepMs);
    }
    const snap = await send(target.baseUrl, wire, timeoutMs);
    mismatches.push(...compareResponse(c.expected, snap, options.level ?? 'strict'));
    return { ...base, status: mismatches.length ? 'failed' : 'passed', mismatches, request, expected: c.expected, actual: actualOf(snap), durationMs: performance.now() - started };
  } catch (err) {
    const e = (request && (await target?.explain?.(err as Error))) || (err as Error);
    return { ...base, status: 'failed', mismatches: [], error: `${e.name}: ${e.message}`, ...(request ? { request } : {}), expected: c.expected, durationMs: performance.now() - started };
  } finally {
    await target?.release?.();
  }
}

/** `ws://` (or `wss://`) URL of `route` on the target, keeping a base URL's path prefix as HTTP requests do. */
export function webSocketUrl(baseUrl: string, route: string): string {
  const u = new URL(baseUrl);
  const scheme = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${u.host}${u.pathname.replace(/\/$/, '')}${route}`;
}

/** Poll `observe` until the case's `expected` values appear or `timeoutMs` passes; the differences left. */
async function observed(c: WebSocketCase, observe: NonNullable<CaseTarget['observe']>, timeoutMs: number): Promise<Mismatch[]> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const state = observe(c);
    const out: Mismatch[] = [];
    for (const [key, want] of Object.entries(c.expected)) {
      const got = key in state ? state[key] : '<<not reported by the target>>';
      if (!isDeepStrictEqual(got, want)) out.push({ what: `expected.${key}`, expected: want, actual: got, note: 'server-side state reported by the target' });
    }
    // The server notices a close a moment after the client does: poll rather than read once.
    if (!out.length || performance.now() > deadline) return out;
    await sleep(10);
  }
}

async function runWebSocketOne(c: WebSocketCase, options: RunOptions): Promise<CaseResult> {
  const started = performance.now();
  const base = identityOf(c);
  const caseHeader = options.caseHeader ?? CASE_HEADER;
  const headers: Record<string, string> = caseHeader ? { [caseHeader]: c.id } : {};
  const request: SentRequest = { method: 'GET', path: c.websocket.handler.route, headers: Object.entries(headers) };
  const timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  let target: CaseTarget | undefined;
  try {
    target = typeof options.target === 'function' ? await options.target(c) : { baseUrl: String(options.target) };
    const outcome = await playSession(webSocketUrl(target.baseUrl, c.websocket.handler.route), c.websocket.session, { timeoutMs, headers, ...(options.quietMs !== undefined ? { quietMs: options.quietMs } : {}) });
    const done = (status: CaseStatus, extra: Partial<CaseResult> = {}): CaseResult =>
      ({ ...base, status, mismatches: outcome.mismatches, request, transcript: outcome.transcript, durationMs: performance.now() - started, ...extra });
    if (outcome.error) return done('failed', { error: outcome.error });
    const serverSide = Object.keys(c.expected);
    if (serverSide.length && !outcome.mismatches.length) {
      if (!target.observe) {
        return done('skipped', { skip: `server-side expectations (${serverSide.map((k) => `expected.${k}`).join(', ')}) cannot be observed by a client and this target does not report them; the session itself passed` });
      }
      outcome.mismatches.push(...(await observed(c, target.observe, timeoutMs)));
    }
    return done(outcome.mismatches.length ? 'failed' : 'passed');
  } catch (err) {
    const e = err as Error;
    return { ...base, status: 'failed', mismatches: [], error: `${e.name}: ${e.message}`, request, durationMs: performance.now() - started };
  } finally {
    await target?.release?.();
  }
}

/** Summaries per category, sorted by name. */
export function summarise(results: readonly CaseResult[]): RunReport {
  const byCategory = new Map<string, CategorySummary>();
  for (const r of results) {
    const s = byCategory.get(r.category) ?? { category: r.category, passed: 0, failed: 0, contradicted: 0, skipped: 0 };
    s[r.status]++;
    byCategory.set(r.category, s);
  }
  const categories = [...byCategory.values()].sort((a, b) => a.category.localeCompare(b.category));
  const count = (st: CaseStatus) => results.filter((r) => r.status === st).length;
  return { results: [...results], categories, passed: count('passed'), failed: count('failed'), contradicted: count('contradicted'), skipped: count('skipped') };
}

export function skippedResult(c: LoadedCase): CaseResult {
  return { ...identityOf(c), status: 'skipped', mismatches: [], ...(c.skip !== undefined ? { skip: c.skip } : {}), durationMs: 0 };
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
  const corpus = new Map((options.corpus ?? cases).map((c) => [c.id, c]));
  for (const c of cases) {
    const r = isRunnable(c) ? await runOne(c, options) : isRunnableWebSocket(c) ? await runWebSocketOne(c, options) : isRunnableProtocol(c) ? await runProtocolCase(c, options, options.caseHeader ?? CASE_HEADER) : skippedResult(c);
    classify(r, corpus, options.level ?? 'strict');
    results.push(r);
    options.onResult?.(r);
  }
  return summarise(results);
}
