/**
 * Rendering a run: the per-category table, failure diffs, JSON and JUnit XML, and the summary line
 * CI logs end with (`N passed, M failed[, K skipped]`).
 */
import type { CaseResult, RunReport } from './runner.js';

function pad(s: string, n: number, right = false): string {
  return right ? s.padStart(n) : s.padEnd(n);
}

function rate(passed: number, failed: number): string {
  const run = passed + failed;
  return run === 0 ? '-' : `${((passed / run) * 100).toFixed(1)}%`;
}

/** A fixed-width table: category, passed, failed, skipped, pass rate (of the cases that ran). */
export function formatTable(report: RunReport): string {
  const rows = report.categories.map((c) => [c.category, String(c.passed), String(c.failed), String(c.skipped), rate(c.passed, c.failed)]);
  rows.push(['TOTAL', String(report.passed), String(report.failed), String(report.skipped), rate(report.passed, report.failed)]);
  const head = ['category', 'passed', 'failed', 'skipped', 'pass rate'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((cell, i) => pad(cell, widths[i]!, i > 0)).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function show(v: unknown): string {
  const s = typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
  return s.length > 300 ? `${s.slice(0, 300)}…` : s;
}

/** One block per failed case: id, source, then each difference as expected / actual. */
export function formatFailures(results: readonly CaseResult[]): string {
  const blocks: string[] = [];
  for (const r of results) {
    if (r.status !== 'failed') continue;
    const lines = [`✗ ${r.id} (${r.name})`, `  source: ${r.source}`];
    if (r.error) lines.push(`  error: ${r.error}`);
    for (const m of r.mismatches) {
      lines.push(`  ${m.what}${m.note ? ` (${m.note})` : ''}`, `    expected: ${show(m.expected)}`, `    actual:   ${show(m.actual)}`);
    }
    blocks.push(lines.join('\n'));
  }
  return blocks.join('\n');
}

/** `N passed, M failed`, with `, K skipped` when cases were out of scope. */
export function summaryLine(report: RunReport): string {
  return `${report.passed} passed, ${report.failed} failed${report.skipped ? `, ${report.skipped} skipped` : ''}`;
}

/** Machine-readable form of a run. */
export function toJson(report: RunReport): string {
  return JSON.stringify(
    {
      summary: { passed: report.passed, failed: report.failed, skipped: report.skipped },
      categories: report.categories,
      cases: report.results.map((r) => ({
        id: r.id,
        category: r.category,
        name: r.name,
        source: r.source,
        status: r.status,
        duration_ms: Math.round(r.durationMs * 10) / 10,
        ...(r.error ? { error: r.error } : {}),
        ...(r.skip ? { skip: r.skip } : {}),
        ...(r.mismatches.length ? { mismatches: r.mismatches } : {}),
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
  const total = report.passed + report.failed + report.skipped;
  const secs = (ms: number) => (ms / 1000).toFixed(3);
  const allMs = report.results.reduce((a, r) => a + r.durationMs, 0);
  out.push(`<testsuites name="${escapeXml(suiteName)}" tests="${total}" failures="${report.failed}" skipped="${report.skipped}" time="${secs(allMs)}">`);
  for (const c of report.categories) {
    const cases = report.results.filter((r) => r.category === c.category);
    const ms = cases.reduce((a, r) => a + r.durationMs, 0);
    out.push(`  <testsuite name="${escapeXml(c.category)}" tests="${cases.length}" failures="${c.failed}" skipped="${c.skipped}" errors="0" time="${secs(ms)}">`);
    for (const r of cases) {
      const open = `    <testcase classname="${escapeXml(r.category)}" name="${escapeXml(r.id)}" time="${secs(r.durationMs)}"`;
      if (r.status === 'passed') out.push(`${open}/>`);
      else if (r.status === 'skipped') out.push(`${open}>`, `      <skipped message="${escapeXml(r.skip ?? '')}"/>`, '    </testcase>');
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
