// Runs every *.test.ts under lib/, middleware/, harness/, express/, test/, examples/ and bench/ with node's test
// runner (TypeScript through tsx). Node 20's --test takes no globs, so we list the files here.
//
// Output: scripts/quiet-reporter.mjs (progress, slowest files, skips by reason, every failure with its diff, node's
// summary). `--verbose` prints node's spec reporter instead; the spec listing is always written to .test-log/spec.txt.
//   node scripts/test.mjs                       all files          npm test -- --verbose   the full listing
//   node scripts/test.mjs a.test.ts b.test.ts   these files
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const roots = ['lib', 'middleware', 'harness', 'express', 'test', 'examples', 'bench'];
const files = [];
function walk(dir) {
  let entries;
  try { entries = readdirSync(dir); } catch { return; }
  for (const name of entries) {
    if (name === 'node_modules' || name === 'dist') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.ts')) files.push(p);
  }
}
const argv = process.argv.slice(2);
const verbose = argv.includes('--verbose');
const only = argv.filter((a) => a !== '--verbose');
if (only.length) files.push(...only); else roots.forEach(walk);
files.sort();

mkdirSync('.test-log', { recursive: true });
const reporters = verbose
  ? ['--test-reporter=spec', '--test-reporter-destination=stdout']
  : ['--test-reporter=./scripts/quiet-reporter.mjs', '--test-reporter-destination=stdout',
    '--test-reporter=spec', '--test-reporter-destination=.test-log/spec.txt'];
const args = ['--import', 'tsx', '--test', ...reporters, '--test-concurrency=2', ...files];
if (!verbose) console.log(`Running ${files.length} test files (the full listing: .test-log/spec.txt, or npm test -- --verbose)`);
const r = spawnSync(process.execPath, args, {
  stdio: 'inherit',
  env: { ...process.env, NODE_ENV: process.env.NODE_ENV ?? 'test', KEEL_TEST_FILE_COUNT: String(files.length) },
});
process.exit(r.status ?? 1);
