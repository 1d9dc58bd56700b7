// Runs Express's own test suites (../shared/express-suite: express 5.3.0 and 4.22.2) against keel/express and
// keel/express4 as a user gets them: the package is packed (npm pack), the tarball installed in a temporary app, and
// the suites `require()` small CommonJS entries there (module.exports = require('keel/express')).
// Prints the counts and fails when a failure is not listed in express/suite-expectations.json (each listed failure
// carries its reason) or when the pass rate of either suite is below 97 %.
// usage: npm run express-suite [-- --major 5|4] [--keep]
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const runner = resolve(root, '../shared/express-suite/run.sh');
const TARGET = 0.97;

if (!existsSync(runner)) {
  console.log(`express-suite: skipped, ${runner} is absent (Express's suites live in ../shared, outside the repo)`);
  process.exit(0);
}
const args = process.argv.slice(2);
const majors = args.includes('--major') ? [args[args.indexOf('--major') + 1]] : ['5', '4'];
const keep = args.includes('--keep');
const expectations = JSON.parse(readFileSync(join(root, 'express/suite-expectations.json'), 'utf8'));

const dir = mkdtempSync(join(tmpdir(), 'keel-express-suite-'));
const sh = (cmd, argv, cwd) => execFileSync(cmd, argv, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
let failed = false;
try {
  console.log('express-suite: packing keel…');
  const tarball = join(dir, sh('npm', ['pack', '--silent', '--pack-destination', dir], root).trim().split('\n').pop());
  const app = join(dir, 'app');
  sh('mkdir', ['-p', app]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'express-suite-app', private: true }));
  console.log('express-suite: installing the tarball in a temporary app…');
  sh('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--prefer-offline', tarball], app);
  writeFileSync(join(app, 'express5.cjs'), "module.exports = require('keel/express');\n");
  writeFileSync(join(app, 'express4.cjs'), "module.exports = require('keel/express4');\n");

  for (const major of majors) {
    const json = join(dir, `express${major}.json`);
    const env = { ...process.env, EXPRESS_SUITE_WORK: process.env.EXPRESS_SUITE_WORK ?? join(tmpdir(), `express-suite-${major}-keel`) };
    const r = spawnSync(runner, [major, join(app, `express${major}.cjs`), '--json', json], { env, encoding: 'utf8' });
    if (!existsSync(json)) {
      console.error(`express-suite ${major}: the runner wrote no report (exit ${r.status})\n${r.stderr}`);
      failed = true;
      continue;
    }
    const report = JSON.parse(readFileSync(json, 'utf8'));
    const listed = new Map((expectations[major] ?? []).map((e) => [e.title, e.reason]));
    const failures = report.failures.map((f) => f.fullTitle);
    const unlisted = failures.filter((t) => !listed.has(t));
    const stale = [...listed.keys()].filter((t) => !failures.includes(t));
    const { passes, failures: nFailed } = report.stats;
    const rate = passes / (passes + nFailed);
    console.log(`express ${major}.x suite through keel/${major === '5' ? 'express' : 'express4'}: ${passes} passed, ${nFailed} failed (${(rate * 100).toFixed(1)} %, target ${TARGET * 100} %)`);
    for (const t of failures) console.log(`  ${listed.has(t) ? 'expected' : 'UNLISTED'} failure: ${t}${listed.has(t) ? ` (${listed.get(t)})` : ''}`);
    for (const t of stale) console.log(`  listed in express/suite-expectations.json but passing now (remove it): ${t}`);
    if (unlisted.length > 0 || rate < TARGET) failed = true;
  }
} finally {
  if (keep) console.log(`express-suite: kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
