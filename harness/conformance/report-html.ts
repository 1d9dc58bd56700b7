/**
 * `--report FILE.html`: one self-contained page (inline CSS, no script, no external asset), as
 * Autobahn|Testsuite's report gives a WebSocket author: per behaviour — a category × a rule — how many
 * cases passed, failed, were contradicted by the corpus or skipped, then each failure with its
 * differences (expected / actual) and the request sent. The rule of a generated variant is the rule
 * that derived it; of a base case, the status it expects (`422`), so a row reads "query_params × 422".
 */
import type { CaseResult, RunReport } from './runner.js';
import { byRequirement, formatRequest, formatTranscript } from './report.js';

export interface HtmlReportOptions {
  title?: string;
  /** `--variants`: the seed and counts, shown at the top. */
  variants?: { seed: number; per_case: number; generated: number; bases: number; passed: number; failed: number };
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function show(v: unknown): string {
  const s = typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v, null, 1) ?? String(v));
  return s.length > 1200 ? `${s.slice(0, 1200)}…` : s;
}

/** The behaviour a result belongs to: its category and rule (see the module comment). */
export function behaviourOf(r: CaseResult): { category: string; rule: string } {
  const rule = r.variant_rule ? `variant: ${r.variant_rule}` : r.expected ? String(r.expected.status_code) : r.status === 'skipped' ? 'not run' : 'no answer';
  return { category: r.category, rule };
}

const pct = (p: number, f: number) => (p + f === 0 ? '–' : `${((p / (p + f)) * 100).toFixed(1)}%`);

function bar(passed: number, failed: number, contradicted: number, skipped: number): string {
  const total = passed + failed + contradicted + skipped || 1;
  const seg = (n: number, cls: string) => (n ? `<span class="${cls}" style="width:${((n / total) * 100).toFixed(2)}%"></span>` : '');
  return `<div class="bar">${seg(passed, 'p')}${seg(failed, 'f')}${seg(contradicted, 'c')}${seg(skipped, 's')}</div>`;
}

/**
 * Fragment ids: letters, digits, `_` and `-` only (a case id holds `/`, a corpus id may hold spaces,
 * which an id attribute cannot), unique within the page (two names that clean up alike get `-2`, …),
 * so a link opened directly (`report.html#b-routing-405`) lands on its own section.
 */
function anchors(): (raw: string) => string {
  const taken = new Map<string, number>();
  const given = new Map<string, string>();
  return (raw) => {
    let id = given.get(raw);
    if (id === undefined) {
      const base = raw.replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-+|-+$/g, '') || 'x';
      const n = (taken.get(base) ?? 0) + 1;
      taken.set(base, n);
      id = n === 1 ? base : `${base}-${n}`;
      given.set(raw, id);
    }
    return id;
  };
}

function failureBlock(r: CaseResult, anchor: string): string {
  const rows = r.mismatches.map((m) => `<tr><th>${esc(m.what)}${m.note ? `<br><small>${esc(m.note)}</small>` : ''}</th><td><pre class="exp">${esc(show(m.expected))}</pre></td><td><pre class="act">${esc(show(m.actual))}</pre></td></tr>`).join('');
  const table = rows ? `<table class="diff"><tr><th></th><th>expected</th><th>actual</th></tr>${rows}</table>` : '';
  const error = r.error ? `<p class="err">${esc(r.error)}</p>` : '';
  const why = r.status === 'contradicted' && r.contradiction ? `<p class="note">contradicted by the corpus: ${esc(r.contradiction.field)} conflicts with ${esc(r.contradiction.conflicts_with)}${r.contradiction.rule ? ` (rule: ${esc(r.contradiction.rule)})` : ''}</p>` : '';
  const request = r.request ? `<details><summary>request sent</summary><pre>${esc(formatRequest(r.request, '').join('\n'))}</pre></details>` : '';
  const session = r.transcript ? `<details><summary>session</summary><pre>${esc(formatTranscript(r.transcript, '').join('\n'))}</pre></details>` : '';
  const about = `${r.description ? `<p class="why">${esc(r.description)}</p>` : ''}${r.requirement ? `<p class="standing"><span class="tag st-${r.requirement}">${r.requirement}</span> ${esc(r.basis ?? '')}</p>` : ''}`;
  const origin = r.variant_of ? `<p class="src">variant of <code>${esc(r.variant_of)}</code></p>` : `<p class="src">${esc(r.source)}</p>`;
  return `<div class="case ${r.status}" id="${esc(anchor)}"><h4><span class="tag ${r.status}">${r.status}</span> ${esc(r.id)}</h4>${origin}${about}${error}${why}${table}${request}${session}</div>`;
}

/**
 * The report as one HTML document. The page scrolls inside `main.page`, not the document: opened
 * directly at a section link (`report.html#b-routing-405`), Chromium's headless `--screenshot`
 * paints a document scrolled to a fragment blank, while an inner scroller is painted at its target.
 */
export function toHtml(report: RunReport, options: HtmlReportOptions = {}): string {
  const groups = new Map<string, { category: string; rule: string; results: CaseResult[] }>();
  for (const r of report.results) {
    const b = behaviourOf(r);
    const key = `${b.category}\u0000${b.rule}`;
    const g = groups.get(key) ?? { ...b, results: [] };
    g.results.push(r);
    groups.set(key, g);
  }
  const sorted = [...groups.values()].sort((a, b) => a.category.localeCompare(b.category) || a.rule.localeCompare(b.rule));
  const anchorOf = anchors();
  const sectionId = (g: { category: string; rule: string }) => anchorOf(`b-${g.category}-${g.rule}`);
  const count = (rs: CaseResult[], s: string) => rs.filter((r) => r.status === s).length;
  const rows = sorted.map((g) => {
    const [p, f, c, s] = ['passed', 'failed', 'contradicted', 'skipped'].map((st) => count(g.results, st)) as [number, number, number, number];
    const anchor = sectionId(g);
    return `<tr class="${f ? 'bad' : ''}"><td>${esc(g.category)}</td><td>${esc(g.rule)}</td><td class="n">${p}</td><td class="n ${f ? 'fail' : ''}">${f ? `<a href="#${anchor}">${f}</a>` : 0}</td><td class="n">${c}</td><td class="n">${s}</td><td class="n">${pct(p, f)}</td><td class="w">${bar(p, f, c, s)}</td></tr>`;
  });
  const details = sorted
    .filter((g) => g.results.some((r) => r.status === 'failed' || r.status === 'contradicted'))
    .map((g) => {
      const anchor = sectionId(g);
      const cases = g.results.filter((r) => r.status === 'failed' || r.status === 'contradicted');
      return `<section id="${esc(anchor)}"><h3>${esc(g.category)} × ${esc(g.rule)} <small>${count(cases, 'failed')} failed, ${count(cases, 'contradicted')} contradicted</small></h3>${cases.map((r) => failureBlock(r, anchorOf(`c-${r.id}`))).join('')}</section>`;
    });
  const v = options.variants;
  const variants = v ? `<p class="meta">Variants: <b>${v.passed}</b> of ${v.passed + v.failed} passed (${pct(v.passed, v.failed)}) — ${v.generated} generated, up to ${v.per_case} per case from ${v.bases} base cases, <code>--seed ${v.seed}</code></p>` : '';
  const title = options.title ?? 'keel-conformance report';
  const standings = Object.entries(byRequirement(report.results));
  const standingTable = standings.length
    ? `<table class="sum st"><tr><th>standing</th><th>passed</th><th>failed</th><th>contradicted</th><th>skipped</th><th>pass rate</th></tr>${standings.map(([st, c]) => `<tr><td><span class="tag st-${st}">${st}</span></td><td class="n">${c.passed}</td><td class="n">${c.failed}</td><td class="n">${c.contradicted}</td><td class="n">${c.skipped}</td><td class="n">${pct(c.passed, c.failed)}</td></tr>`).join('')}</table>
<p class="meta">required: the specification or an RFC says so; reference: the reference implementation's answer; keel: keel's choice (each case says why).</p>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>
html,body{margin:0;height:100%;overflow:hidden}
main.page{position:fixed;inset:0;overflow:auto;padding:24px;font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1d2330;background:#fff}
@media print{html,body{height:auto;overflow:visible}main.page{position:static;overflow:visible}}
h1{font-size:22px;margin:0 0 6px}h3{margin:28px 0 8px;border-bottom:2px solid #e3e6ec;padding-bottom:4px}h3 small{font-weight:normal;color:#667}
.totals span{display:inline-block;margin-right:14px;padding:4px 10px;border-radius:4px;font-weight:600}
.totals .p,.tag.passed{background:#d8f3dc;color:#1b5e20}.totals .f,.tag.failed{background:#fde2e1;color:#b71c1c}.totals .c,.tag.contradicted{background:#fff3cd;color:#7a5b00}.totals .s{background:#eceff4;color:#445}
table.sum{border-collapse:collapse;width:100%;margin-top:14px}table.sum th,table.sum td{padding:4px 8px;border-bottom:1px solid #eceff4;text-align:left}
table.sum th{background:#f5f6f8;position:sticky;top:0}td.n{text-align:right;font-variant-numeric:tabular-nums}td.fail a{color:#b71c1c;font-weight:700}tr.bad td:first-child{border-left:3px solid #e53935}
td.w{width:28%}.bar{display:flex;height:12px;border-radius:3px;overflow:hidden;background:#eceff4}.bar span{display:block;height:100%}.bar .p{background:#43a047}.bar .f{background:#e53935}.bar .c{background:#f9a825}.bar .s{background:#b0bec5}
.case{border:1px solid #e3e6ec;border-radius:6px;padding:8px 12px;margin:10px 0}.case.failed{border-left:4px solid #e53935}.case.contradicted{border-left:4px solid #f9a825}
.case h4{margin:0 0 4px;font-size:14px;word-break:break-all}.tag{font-size:11px;padding:1px 6px;border-radius:3px;text-transform:uppercase;margin-right:6px}
.why{margin:0 0 4px}.standing{margin:0 0 6px;font-size:12px;color:#445}.tag.st-required{background:#e3f2fd;color:#0d47a1}.tag.st-reference{background:#ede7f6;color:#4527a0}.tag.st-keel{background:#fff3e0;color:#e65100}
.src{margin:0 0 6px;color:#667;font-size:12px}.err{color:#b71c1c;font-family:ui-monospace,monospace}.note{color:#7a5b00}
table.diff{border-collapse:collapse;width:100%}table.diff th,table.diff td{border:1px solid #eceff4;padding:4px 6px;vertical-align:top;text-align:left}table.diff th{width:16%;font-weight:600;background:#fafbfc}
pre{margin:0;white-space:pre-wrap;word-break:break-all;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}pre.exp{color:#1b5e20}pre.act{color:#b71c1c}
section,.case{scroll-margin-top:8px}section:target h3{background:#fff8e1}.case:target{outline:2px solid #3949ab}
details{margin-top:6px}summary{cursor:pointer;color:#3949ab}.meta{color:#445}
</style></head><body><main class="page">
<h1>${esc(title)}</h1>
<p class="totals"><span class="p">${report.passed} passed</span><span class="f">${report.failed} failed</span><span class="c">${report.contradicted} contradicted</span><span class="s">${report.skipped} skipped</span> pass rate ${pct(report.passed, report.failed)}</p>
${variants}
${standingTable}
<table class="sum"><tr><th>category</th><th>rule</th><th>passed</th><th>failed</th><th>contradicted</th><th>skipped</th><th>pass rate</th><th></th></tr>
${rows.join('\n')}
</table>
${details.join('\n')}
</main></body></html>
`;
}
