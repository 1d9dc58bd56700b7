// Runs every *.test.ts under lib/, middleware/, harness/, express/, test/, examples/ and bench/ with node's test
// runner (TypeScript through tsx). Node 20's --test takes no globs, so we list the files here.
//
// Output: scripts/quiet-reporter.mjs (progress, slowest files, skips by reason, every failure with its diff, node's
// summary). `--verbose` prints node's spec reporter instead; the spec listing is always written to .test-log/spec.txt.
//   node scripts/test.mjs                       all files but the integration suites (all of them when CI is set)
//   node scripts/test.mjs --all                 all files          --integration   the integration suites only
//   node scripts/test.mjs a.test.ts b.test.ts   these files        npm test -- --verbose   the full listing
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const roots = ['lib', 'middleware', 'harness', 'express', 'test', 'examples', 'bench'];
const files = [];
function walk(dir) {
  let entries;
  try { entries = readdirSync(dir); } catch { return; }
  for (const name of entries) {
    // fixtures/ hold other runners' files (a Jest project's *.test.ts), not node:test files.
    if (name === 'node_modules' || name === 'dist' || name === 'fixtures') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.ts')) files.push(p);
  }
}
const argv = process.argv.slice(2);
const verbose = argv.includes('--verbose');
const flags = new Set(argv.filter((a) => a.startsWith('--')));
const only = argv.filter((a) => !a.startsWith('--'));

/**
 * Integration suites (a package install from the tarball, Redis outages, Redis clusters and Sentinel, browsers,
 * Prometheus, the legacy projects): the slow files, marked by a line `// keel:integration` among their first
 * ten lines. `npm test` runs them when CI is set (`.ci/run` does), or with --all; `npm run test:integration`
 * runs them alone. Files named on the command line always run.
 */
export const INTEGRATION_MARK = '// keel:integration';
const isIntegration = (file) => readFileSync(file, 'utf8').split('\n', 10).some((l) => l.trim() === INTEGRATION_MARK);
const ci = Boolean(process.env.CI) && process.env.CI !== 'false' && process.env.CI !== '0';
const mode = flags.has('--integration') ? 'integration' : flags.has('--all') || ci ? 'all' : 'fast';
if (only.length) files.push(...only);
else {
  roots.forEach(walk);
  if (mode !== 'all') {
    const keep = files.filter((f) => isIntegration(f) === (mode === 'integration'));
    files.length = 0;
    files.push(...keep);
  }
}
files.sort();
if (flags.has('--list')) {
  for (const f of files) console.log(f);
  process.exit(0);
}

mkdirSync('.test-log', { recursive: true });
const reporters = verbose
  ? ['--test-reporter=spec', '--test-reporter-destination=stdout']
  : ['--test-reporter=./scripts/quiet-reporter.mjs', '--test-reporter-destination=stdout',
    '--test-reporter=spec', '--test-reporter-destination=.test-log/spec.txt'];
const args = ['--import', 'tsx', '--test', ...reporters, '--test-concurrency=2', ...files];
const which = only.length ? '' : mode === 'fast' ? ' (integration suites not included: npm run test:integration, or CI=1 / --all for both)' : mode === 'integration' ? ' (integration suites only)' : ' (all, integration suites included)';
if (!verbose) console.log(`Running ${files.length} test files${which} (the full listing: .test-log/spec.txt, or npm test -- --verbose)`);
const r = spawnSync(process.execPath, args, {
  stdio: 'inherit',
  env: { ...process.env, NODE_ENV: process.env.NODE_ENV ?? 'test', KEEL_TEST_FILE_COUNT: String(files.length) },
});
process.exit(r.status ?? 1);
