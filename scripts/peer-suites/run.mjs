#!/usr/bin/env node
// npm run peer-suites [pkg…]: each replaced package's own test suite, unchanged, against the original
// (control) and against keel's factory through an adapter, under Express 4 and 5 where the suite uses
// Express. Prints `pkg (variant): original N, keel M of T` per run and `P passed, F failed` over keel's
// runs; exits 1 on a keel failure not listed in test/peer-suites/expected-failures.json, or on a listed
// entry that passes everywhere (stale). docs/peer-suites.md explains the data file and the adapters.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HERE, ROOT, SHARED, cleanup, ensureBuilt, prepare, runOnce } from './lib.mjs';

export const PACKAGES = ['cors', 'compression', 'express-rate-limit', 'express-jwt', 'helmet', 'serve-static'];

const log = (line) => console.log(line);
const verbose = process.argv.includes('--verbose');
const asked = process.argv.slice(2).filter((a) => !a.startsWith('--'));
for (const a of asked) {
  if (!PACKAGES.includes(a)) {
    console.error(`peer-suites: unknown package ${JSON.stringify(a)}; one of ${PACKAGES.join(', ')}`);
    process.exit(2);
  }
}
if (!existsSync(SHARED)) {
  log(`peer-suites: skipped, ${SHARED} not found (the replaced packages' repositories live beside the checkout in CI)`);
  process.exit(0);
}
const expected = JSON.parse(readFileSync(join(ROOT, 'test', 'peer-suites', 'expected-failures.json'), 'utf8'));
ensureBuilt(log);

let passed = 0;
let failed = 0;
const problems = [];
for (const pkg of asked.length ? asked : PACKAGES) {
  const suite = { name: pkg, ...(await import(join(HERE, pkg, 'suite.mjs'))).default };
  const listed = expected[pkg] ?? {};
  let base;
  try {
    base = prepare(pkg, suite, log);
  } catch (err) {
    problems.push(`${pkg}: ${err.message}`);
    failed += 1;
    continue;
  }
  // title -> variants where keel's run passed / failed it
  const passedIn = new Map();
  const failedIn = new Map();
  for (const variant of suite.variants) {
    const original = runOnce(pkg, suite, base, 'original', variant);
    const keel = runOnce(pkg, suite, base, 'keel', variant);
    const total = original.passed.length + original.failed.length;
    const controlNote = original.failed.length ? ` (control failed ${original.failed.length}: ${original.failed.map((f) => f.title).join('; ')})` : '';
    log(`${pkg}${variant === 'direct' && suite.variants.length === 1 ? '' : ` (${variant})`}: original ${original.passed.length}, keel ${keel.passed.length} of ${total}${controlNote}`);
    passed += keel.passed.length;
    // A test file that fails to load counts once in keel.failed; its tests count as failed here.
    failed += Math.max(keel.failed.length, total - keel.passed.length);
    const controlFailed = new Set(original.failed.map((f) => f.title));
    for (const t of keel.passed) passedIn.set(t, [...(passedIn.get(t) ?? []), variant]);
    for (const f of keel.failed) {
      failedIn.set(f.title, [...(failedIn.get(f.title) ?? []), variant]);
      if (!(f.title in listed) && !controlFailed.has(f.title)) {
        problems.push(`${pkg} (${variant}): not listed: ${f.title}\n      ${f.error.split('\n')[0]}`);
      } else if (verbose) {
        log(`  listed: ${f.title}`);
      }
    }
    if (verbose && keel.status !== 0 && keel.failed.length === 0) log(keel.output.slice(-3000));
  }
  cleanup(base);
  for (const title of Object.keys(listed)) {
    if (passedIn.has(title) && !failedIn.has(title)) problems.push(`${pkg}: listed but passes (stale entry): ${title}`);
  }
}
// Not the bare "N passed, M failed" line: most of these failures are listed differences, and the line must not
// read as a failing run; what fails the run is an unlisted failure or a stale entry (the problems below).
log(`peer-suites, keel's runs: ${passed} passed, ${failed} failed (listed differences, or failing the original too), ${problems.length} problems`);
if (problems.length) {
  console.log(problems.map((p) => `  ${p}`).join('\n'));
  process.exit(1);
}
