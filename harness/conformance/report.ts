/**
 * Rendering a run: the per-category table, failure diffs, JSON and JUnit XML, and the summary line
 * CI logs end with (`N passed, M failed[, K skipped]`).
 */
import type { Mismatch } from './compare.js';
import type { CaseResult, RunReport, SentRequest } from './runner.js';
import type { FrameLog } from './ws-session.js';

function pad(s: string, n: number, right = false): string {
  return right ? s.padStart(n) : s.padEnd(n);
}

function rate(passed: number, failed: number): string {
  const run = passed + failed;
  return run === 0 ? '-' : `${((passed / run) * 100).toFixed(1)}%`;
}

/** A fixed-width table: category, passed, failed, contradicted, skipped, pass rate (of the cases that ran). */
export function formatTable(report: RunReport): string {
  const rows = report.categories.map((c) => [c.category, String(c.passed), String(c.failed), String(c.contradicted), String(c.skipped), rate(c.passed, c.failed)]);
  rows.push(['TOTAL', String(report.passed), String(report.failed), String(report.contradicted), String(report.skipped), rate(report.passed, report.failed)]);
  const head = ['category', 'passed', 'failed', 'contradicted', 'skipped', 'pass rate'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((cell, i) => pad(cell, widths[i]!, i > 0)).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function show(v: unknown): string {
  const s = typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
  return s.length > 300 ? `${s.slice(0, 300)}…` : s;
}

/** The request as sent: request line, headers, body (shortened). */
export function formatRequest(req: SentRequest, indent = '    '): string[] {
  const lines = [`${indent}${req.method} ${req.path}`];
  for (const [k, v] of req.headers) lines.push(`${indent}${k}: ${v.length > 120 ? `${v.slice(0, 120)}…` : v}`);
  if (req.body !== undefined) lines.push(`${indent}${req.body.length > 300 ? `${req.body.slice(0, 300)}…` : req.body}`.replace(/\r?\n/g, `\n${indent}`));
  return lines;
}

/** A WebSocket session as played: one line per frame, `→` sent, `←` received. */
export function formatTranscript(frames: readonly FrameLog[], indent = '    '): string[] {
  if (!frames.length) return [`${indent}(no frame sent or received)`];
  return frames.map((f) => {
    const arrow = f.direction === 'sent' ? '→' : '←';
    const what = f.type === 'close' ? `close ${f.code ?? ''}${f.reason ? ` ${JSON.stringify(f.reason)}` : ''}`
      : f.text !== undefined ? `${f.type} ${f.text}` : `${f.type} base64:${f.base64 ?? ''}`;
    return `${indent}${arrow} ${what}${f.note ? `  (${f.note})` : ''}`;
  });
}

/**
 * One block per failed case: id, source, the request sent, then each difference as expected /
 * actual. A status mismatch comes first; when the status differs, the body and header differences
 * are collapsed to a count and the body received (they follow from the wrong status).
 */
export function formatFailures(results: readonly CaseResult[]): string {
  const blocks: string[] = [];
  for (const r of results) {
    if (r.status !== 'failed') continue;
    const lines = [`✗ ${r.id} (${r.name})`, `  source: ${r.source}`];
    if (r.description) lines.push(`  why: ${r.description}`);
    if (r.requirement) lines.push(`  standing: ${r.requirement} — ${r.basis}`);
    if (r.error) lines.push(`  error: ${r.error}`);
    const status = r.mismatches.find((m) => m.what === 'status');
    const rest = r.mismatches.filter((m) => m !== status);
    const diff = (m: Mismatch) => lines.push(`  ${m.what}${m.note ? ` (${m.note})` : ''}`, `    expected: ${show(m.expected)}`, `    actual:   ${show(m.actual)}`);
    if (status) {
      diff(status);
      if (rest.length) {
        lines.push(`  (${rest.length} more difference${rest.length === 1 ? '' : 's'} in headers/body not shown: the status differs)`);
        if (r.actual) lines.push(`  body received: ${show(r.actual.body)}`);
      }
    } else rest.forEach(diff);
    if (r.contradiction?.note) lines.push(`  corpus contradiction with ${r.contradiction.conflicts_with} (${r.contradiction.field}) ${r.contradiction.note}`);
    if (r.request) lines.push(r.transcript ? '  upgrade request sent:' : '  request sent:', ...formatRequest(r.request));
    if (r.transcript) lines.push('  session (→ sent, ← received):', ...formatTranscript(r.transcript));
    blocks.push(lines.join('\n'));
  }
  return blocks.join('\n');
}

/** One line per case contradicted by the corpus: the case, the field, the conflicting case, and the rule that found it (or `listed`). */
export function formatContradicted(results: readonly CaseResult[]): string {
  return results
    .filter((r) => r.status === 'contradicted' && r.contradiction)
    .map((r) => `~ ${r.id}: contradicted by the corpus (${r.contradiction!.field} conflicts with ${r.contradiction!.conflicts_with}; ${r.contradiction!.rule ? `rule: ${r.contradiction!.rule}` : 'listed in contradictions.json'})`)
    .join('\n');
}

/** The standings in order, from what every implementation must do to keel's own choices. */
const STANDINGS = ['required', 'reference', 'keel'] as const;

export interface StandingCount {
  passed: number;
  failed: number;
  contradicted: number;
  skipped: number;
}

/** Counts per standing (`required`, `reference`, `keel`) of the cases that carry one. */
export function byRequirement(results: readonly CaseResult[]): Partial<Record<(typeof STANDINGS)[number], StandingCount>> {
  const out: Partial<Record<(typeof STANDINGS)[number], StandingCount>> = {};
  for (const st of STANDINGS) {
    const rs = results.filter((r) => r.requirement === st);
    if (rs.length) out[st] = { passed: rs.filter((r) => r.status === 'passed').length, failed: rs.filter((r) => r.status === 'failed').length, contradicted: rs.filter((r) => r.status === 'contradicted').length, skipped: rs.filter((r) => r.status === 'skipped').length };
  }
  return out;
}

/**
 * One line counting each standing apart (`required 120/150 passed, reference …, keel …`), or ''
 * when no case carries one (a corpus without standings).
 */
export function standingLine(results: readonly CaseResult[]): string {
  const counts = byRequirement(results);
  const parts = STANDINGS.filter((st) => counts[st]).map((st) => {
    const c = counts[st]!;
    return `${st} ${c.passed}/${c.passed + c.failed} passed${c.contradicted ? ` (${c.contradicted} contradicted)` : ''}${c.skipped ? ` (${c.skipped} skipped)` : ''}`;
  });
  return parts.length ? `by standing: ${parts.join(', ')}` : '';
}

/** `N passed, M failed`, then `, C contradicted by the corpus` and `, K skipped` when there are any. */
export function summaryLine(report: RunReport): string {
  return `${report.passed} passed, ${report.failed} failed${report.contradicted ? `, ${report.contradicted} contradicted by the corpus` : ''}${report.skipped ? `, ${report.skipped} skipped` : ''}`;
}

/** What a `--json` summary says about the run itself (beside the counts). */
export interface RunMeta {
  /** The runner's version (keel's package version). */
  runner_version: string;
  /** The case files and directories given, as absolute paths. */
  corpus: string[];
  level: string;
  /** Where the cases went: `exec`, `base-url` or keel's `fixture-app`. */
  target: 'exec' | 'base-url' | 'fixture-app';
  /** `--filter`, when given (several: a list, their union ran). */
  filter?: string | string[];
  /** `--require`, when given: the standing the run was limited to (and the more general ones). */
  require?: string;
  /** Cases loaded from `corpus`, and selected by the filter (all cases, runnable or skipped). */
  cases_loaded: number;
  cases_selected: number;
  /** Servers started (`--exec`); absent for other targets. */
  server_starts?: number;
  /** From the first case sent to the last answer, milliseconds. */
  wall_time_ms: number;
  /**
   * The corpus's contradictions the verdicts used: entries found by rule in the corpus loaded
   * (contradiction-rules.ts), and entries of contradictions.json for cases in it.
   */
  contradictions?: { found_by_rule: number; listed: number };
  /** `--variants`: the seed (repeat the run with it), variants per base case, and how they fared. */
  variants?: { seed: number; per_case: number; generated: number; bases: number; passed: number; failed: number };
}

/** Machine-readable form of a run: per case the request sent, the expected and the actual response and the differences. */
export function toJson(report: RunReport, meta?: RunMeta): string {
  return JSON.stringify(
    {
      summary: { passed: report.passed, failed: report.failed, contradicted: report.contradicted, skipped: report.skipped, ...(Object.keys(byRequirement(report.results)).length ? { by_requirement: byRequirement(report.results) } : {}), ...(meta ?? {}) },
      categories: report.categories,
      cases: report.results.map((r) => ({
        id: r.id,
        category: r.category,
        name: r.name,
        source: r.source,
        ...(r.description ? { description: r.description } : {}),
        ...(r.requirement ? { requirement: r.requirement, basis: r.basis } : {}),
        status: r.status,
        ...(r.variant_of ? { variant_of: r.variant_of, variant_rule: r.variant_rule } : {}),
        ...(r.expected ? { expected_status: r.expected.status_code } : {}),
        duration_ms: Math.round(r.durationMs * 10) / 10,
        ...(r.error ? { error: r.error } : {}),
        ...(r.skip ? { skip: r.skip } : {}),
        ...(r.contradiction ? { contradiction: r.contradiction } : {}),
        ...(r.mismatches.length ? { mismatches: r.mismatches } : {}),
        ...(r.status === 'failed' || r.status === 'contradicted'
          ? {
              ...(r.request ? { request: r.request } : {}),
              ...(r.expected ? { expected: { status: r.expected.status_code, ...(r.expected.headers ? { headers: r.expected.headers } : {}), ...('body' in r.expected ? { body: r.expected.body } : {}) } } : {}),
              ...(r.actual ? { actual: r.actual } : {}),
              ...(r.transcript ? { transcript: r.transcript } : {}),
            }
          : {}),
      })),
    },
    null,
    2,
  );
}

/** XML 1.0 text/attribute escaping; characters XML cannot carry at all are dropped. */
export function escapeXml(s: string): string {
  return s
    .replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** JUnit XML (the de-facto schema CI systems read): one testsuite per category. */
export function toJUnit(report: RunReport, suiteName = 'keel-conformance'): string {
  const out = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const total = report.passed + report.failed + report.contradicted + report.skipped;
  const secs = (ms: number) => (ms / 1000).toFixed(3);
  const allMs = report.results.reduce((a, r) => a + r.durationMs, 0);
  out.push(`<testsuites name="${escapeXml(suiteName)}" tests="${total}" failures="${report.failed}" skipped="${report.skipped + report.contradicted}" time="${secs(allMs)}">`);
  for (const c of report.categories) {
    const cases = report.results.filter((r) => r.category === c.category);
    const ms = cases.reduce((a, r) => a + r.durationMs, 0);
    out.push(`  <testsuite name="${escapeXml(c.category)}" tests="${cases.length}" failures="${c.failed}" skipped="${c.skipped + c.contradicted}" errors="0" time="${secs(ms)}">`);
    for (const r of cases) {
      const open = `    <testcase classname="${escapeXml(r.category)}" name="${escapeXml(r.id)}" time="${secs(r.durationMs)}"`;
      if (r.status === 'passed') out.push(`${open}/>`);
      else if (r.status === 'skipped') out.push(`${open}>`, `      <skipped message="${escapeXml(r.skip ?? '')}"/>`, '    </testcase>');
      else if (r.status === 'contradicted') {
        const why = `contradicted by the corpus: ${r.contradiction?.field} conflicts with ${r.contradiction?.conflicts_with}`;
        out.push(`${open}>`, `      <skipped message="${escapeXml(why)}"/>`, '    </testcase>');
      }
      else {
        const detail = formatFailures([r]);
        const message = r.error ?? r.mismatches.map((m) => m.what).join(', ');
        out.push(`${open}>`, `      <failure message="${escapeXml(message)}">${escapeXml(detail)}</failure>`, '    </testcase>');
      }
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return out.join('\n') + '\n';
}
