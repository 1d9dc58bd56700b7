// The README's test command's reporter: node's test runner events in, a short report out. Green runs
// print a progress line every PROGRESS_EVERY files, the slowest files, the skipped tests grouped by
// reason and node's own summary (`ℹ tests …`, `ℹ pass …`); a failure prints its test's full title,
// file, error (an assertion's diff is in its message) and what the file wrote to stderr. The full
// per-test listing is `npm test -- --verbose` (node's spec reporter), and is always written to
// .test-log/spec.txt by scripts/test.mjs.
import { inspect } from 'node:util';
import { relative } from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';

const PROGRESS_EVERY = 25;
const SLOWEST = 10;
const STDERR_LINES = 40;
const STACK_LINES = 8;

const total = Number(process.env.KEEL_TEST_FILE_COUNT) || 0;
const rel = (file) => (file ? relative(process.cwd(), file) : '(no file)');

/** Why a failure is worth printing: a suite failing only because its children failed says nothing new. */
function ownFailure(data) {
  const err = data.details?.error;
  return !(err?.failureType === 'subtestsFailed' || err?.code === 'ERR_TEST_FAILURE' && /subtests? failed/.test(err.message));
}

function describeError(err) {
  const cause = err?.cause ?? err;
  if (cause instanceof Error || (cause && typeof cause === 'object' && 'message' in cause)) {
    const head = cause.message ? String(cause.message) : inspect(cause, { depth: 4 });
    const stack = String(cause.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l))
      .filter((l) => !/\(node:|at node:|\/node_modules\/|Promise\.all/.test(l)).slice(0, STACK_LINES);
    const extra = cause.code && !head.includes(cause.code) ? ` [${cause.code}]` : '';
    return `${head}${extra}\n${stack.join('\n')}`;
  }
  return inspect(cause, { depth: 4 });
}

/**
 * A skip's reason in words a newcomer can act on. Tests that need the optional fixture folders beside the checkout
 * (../shared: the conformance corpus, Express's suites, the replaced packages' suites) say so in many ways, some
 * with a path that means nothing in a fresh clone; they are grouped under one name each, with where to read more.
 */
export function skipReason(reason) {
  const r = String(reason);
  if (/express-suite/i.test(r)) return "Express's own test suites are absent (optional, see docs/express-engine.md)";
  if (/peer-suites/i.test(r)) return "the replaced packages' test suites are absent (optional, see docs/peer-suites.md)";
  if (/shared[ /](conformance )?corpus|shared\/conformance|conformance corpus|\.\.\/shared/i.test(r)) return 'the conformance corpus is absent (optional, see docs/conformance.md)';
  return r;
}

const indent = (text, pad = '    ') => text.split('\n').map((l) => pad + l).join('\n');

export default async function* quietReporter(source) {
  const titles = new Map(); // file → stack of names by nesting
  const fileMs = new Map(); // file → summed duration of its top-level tests
  const filesSeen = new Set(); // files with a finished top-level test, for the progress line
  const stderr = new Map(); // file → lines written to stderr
  const failures = [];
  const skips = new Map(); // reason → count
  const summary = [];
  for await (const event of source) {
    const d = event.data ?? {};
    switch (event.type) {
      case 'test:start': {
        const stack = titles.get(d.file) ?? [];
        stack.length = d.nesting;
        stack.push(d.name);
        titles.set(d.file, stack);
        break;
      }
      case 'test:stderr': {
        const lines = stderr.get(d.file) ?? [];
        lines.push(...String(d.message).replace(/\n$/, '').split('\n'));
        if (lines.length > STDERR_LINES * 4) lines.splice(0, lines.length - STDERR_LINES);
        stderr.set(d.file, lines);
        break;
      }
      case 'test:pass':
      case 'test:fail': {
        const stack = titles.get(d.file) ?? [];
        const title = [...stack.slice(0, d.nesting), d.name].join(' › ');
        if (d.nesting === 0 && d.file) fileMs.set(d.file, (fileMs.get(d.file) ?? 0) + (d.details?.duration_ms ?? 0));
        if (event.type === 'test:fail' && ownFailure(d)) failures.push({ file: d.file, title, error: d.details?.error, ms: d.details?.duration_ms });
        if (d.skip !== undefined && d.skip !== false) {
          // `it.skip('skipped: why…')` carries its reason in its title: show that rather than nothing.
          const reason = skipReason(typeof d.skip === 'string' ? d.skip : d.name || '(no reason given)');
          const entry = skips.get(reason) ?? { tests: 0, suites: 0 };
          // Node's `skipped` counts tests; a skipped suite counts there as nothing (its tests never run), so it is
          // listed apart rather than hidden.
          if (d.details?.type === 'suite') entry.suites++; else entry.tests++;
          skips.set(reason, entry);
        }
        // Progress counts a file at its first finished top-level test (node reports no event for a file as such).
        if (d.nesting === 0 && d.file && !filesSeen.has(d.file)) {
          filesSeen.add(d.file);
          if (filesSeen.size % PROGRESS_EVERY === 0) yield `… ${filesSeen.size}${total ? ` of ${total}` : ''} files\n`;
        }
        if (event.type === 'test:fail' && ownFailure(d)) yield `✖ ${rel(d.file)}: ${title}\n`;
        break;
      }
      case 'test:diagnostic':
        if (d.nesting === 0 && !d.file) summary.push(d.message);
        break;
      default:
    }
  }

  const byTime = [...fileMs].sort((a, b) => b[1] - a[1]);
  // Every file's time, for choosing what is an integration suite (scripts/test.mjs) by measurement, not by guess.
  try {
    mkdirSync('.test-log', { recursive: true });
    writeFileSync('.test-log/durations.json', JSON.stringify(Object.fromEntries(byTime.map(([f, ms]) => [rel(f), Math.round(ms)])), null, 1));
  } catch { /* a read-only checkout: the listing is only a convenience */ }
  const slow = byTime.slice(0, SLOWEST);
  if (slow.length) {
    yield `\nSlowest files:\n`;
    for (const [file, ms] of slow) yield `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${rel(file)}\n`;
  }
  if (skips.size) {
    const sum = (k) => [...skips.values()].reduce((a, e) => a + e[k], 0);
    const plural = (n, one) => `${n} ${one}${n === 1 ? '' : 's'}`;
    const suites = sum('suites');
    yield `\nSkipped: ${plural(sum('tests'), 'test')} (node's "skipped" below)${suites ? ` and ${plural(suites, 'whole suite')}` : ''}, by reason:\n`;
    const sorted = [...skips].sort((a, b) => b[1].tests + b[1].suites - (a[1].tests + a[1].suites));
    for (const [reason, e] of sorted) {
      const what = [e.tests && plural(e.tests, 'test'), e.suites && plural(e.suites, 'suite')].filter(Boolean).join(' + ');
      yield `  ${what.padStart(16)} × ${reason}\n`;
    }
  }
  if (failures.length) {
    yield `\nFailures (${failures.length}):\n`;
    const filesWithFailures = new Set();
    for (const f of failures) {
      filesWithFailures.add(f.file);
      yield `\n✖ ${f.title}\n  file: ${rel(f.file)}${f.ms !== undefined ? ` (${Math.round(f.ms)} ms)` : ''}\n${indent(describeError(f.error))}\n`;
    }
    for (const file of filesWithFailures) {
      const lines = stderr.get(file);
      if (lines?.length) yield `\nstderr of ${rel(file)} (last ${Math.min(lines.length, STDERR_LINES)} lines):\n${indent(lines.slice(-STDERR_LINES).join('\n'))}\n`;
    }
  }
  yield '\n';
  for (const line of summary) yield `ℹ ${line}\n`;
}
