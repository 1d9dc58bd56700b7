// The README's test command's reporter: node's test runner events in, a short report out. Green runs
// print a progress line every PROGRESS_EVERY files, the slowest files, the skipped tests grouped by
// reason and node's own summary (`ℹ tests …`, `ℹ pass …`); a failure prints its test's full title,
// file, error (an assertion's diff is in its message) and what the file wrote to stderr. The full
// per-test listing is `npm test -- --verbose` (node's spec reporter), and is always written to
// .test-log/spec.txt by scripts/test.mjs.
import { inspect } from 'node:util';
import { relative } from 'node:path';

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
          const reason = typeof d.skip === 'string' ? d.skip : d.name || '(no reason given)';
          skips.set(reason, (skips.get(reason) ?? 0) + 1);
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

  const slow = [...fileMs].sort((a, b) => b[1] - a[1]).slice(0, SLOWEST);
  if (slow.length) {
    yield `\nSlowest files:\n`;
    for (const [file, ms] of slow) yield `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${rel(file)}\n`;
  }
  if (skips.size) {
    yield `\nSkipped, by reason:\n`;
    for (const [reason, n] of [...skips].sort((a, b) => b[1] - a[1])) yield `  ${String(n).padStart(4)} × ${reason}\n`;
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
