// Shared machinery of `npm run peer-suites` (run.mjs): copy a replaced package's repository from
// ../shared/peer-suites to a writable work dir, install its test dependencies once (cached while the
// list is unchanged), run its suite unchanged against the original (control) and against keel's
// factory through an adapter, and read the results. A package's folder (scripts/peer-suites/<pkg>/)
// only says what differs: see the Suite description in docs/peer-suites.md.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, '..', '..');
export const SHARED = resolve(ROOT, '..', 'shared', 'peer-suites');
export const WORK = resolve(process.env.PEER_SUITES_WORK || join(process.env.TMPDIR || tmpdir(), 'keel-peer-suites'));
const keelRequire = createRequire(join(ROOT, 'package.json'));

/** Express majors under test, taken from keel's own devDependencies (`express4` is npm:express@4). */
export const EXPRESS = {
  'express 4': dirname(keelRequire.resolve('express4/package.json')),
  'express 5': dirname(keelRequire.resolve('express/package.json')),
};

/** A suite run's time limit: a hung suite fails the run instead of hanging CI. */
const RUN_TIMEOUT_MS = 10 * 60 * 1000;

function newestMtime(dir, ext, skip = new Set(['node_modules', 'dist'])) {
  let newest = 0;
  for (const name of readdirSync(dir)) {
    if (skip.has(name)) continue;
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) newest = Math.max(newest, newestMtime(p, ext, skip));
    else if (name.endsWith(ext) && !name.endsWith('.test.ts')) newest = Math.max(newest, st.mtimeMs);
  }
  return newest;
}

/** Rebuild keel's dist/ when a source file is newer than it (the adapters load dist/, as users do). */
export function ensureBuilt(log) {
  const dist = join(ROOT, 'dist');
  const built = existsSync(dist) ? newestMtime(dist, '.js', new Set()) : 0;
  const source = Math.max(...['lib', 'middleware', 'harness'].map((d) => newestMtime(join(ROOT, d), '.ts')));
  if (built >= source) return;
  log('keel: dist/ is older than the sources; running the build (tsc -p tsconfig.build.json)');
  const r = spawnSync(process.execPath, [keelRequire.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('keel build failed');
}

/**
 * Copy the package's repository (fresh every run: the suite runs unchanged) to WORK/<pkg>/suite and
 * install its dependencies plus the test devDependencies the suite names into WORK/<pkg>/node_modules
 * (the parent of the copy, so the suite's files resolve them; the suite's own package.json is untouched).
 */
export function prepare(pkg, suite, log) {
  const base = join(WORK, pkg);
  const copy = join(base, 'suite');
  rmSync(copy, { recursive: true, force: true });
  mkdirSync(base, { recursive: true });
  cpSync(join(SHARED, pkg), copy, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8'));
  const dev = manifest.devDependencies ?? {};
  const wanted = { ...(manifest.dependencies ?? {}) };
  for (const name of suite.devDependencies) {
    if (!(name in dev)) throw new Error(`${pkg}: devDependency ${name} is not in the suite's package.json`);
    wanted[name] = dev[name];
  }
  Object.assign(wanted, suite.extraDependencies ?? {});
  const pkgJson = JSON.stringify({ name: `keel-peer-${pkg}`, private: true, dependencies: wanted }, null, 2);
  const stamp = createHash('sha256').update(pkgJson).digest('hex');
  const stampFile = join(base, '.installed');
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp && existsSync(join(base, 'node_modules'))) return base;
  log(`${pkg}: installing the suite's test dependencies into ${base} (once)`);
  writeFileSync(join(base, 'package.json'), pkgJson);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--no-package-lock', '--ignore-scripts', '--loglevel=error'], { cwd: base, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`${pkg}: npm install failed`);
  writeFileSync(stampFile, stamp);
  return base;
}

/** A resolved adapter description: which suite files are replaced, by which files, in this run. */
function redirects(suite, copy, target, variant) {
  const map = {};
  const bypass = [];
  const wrapper = join(HERE, 'wrap-target.cjs');
  for (const [from, adapter] of Object.entries(suite.redirect)) {
    const original = join(copy, from);
    const replacement = target === 'keel' ? join(HERE, suite.name, adapter) : undefined;
    if (suite.wrapInExpress && variant !== 'direct') {
      map[original] = wrapper;
      bypass.push(wrapper);
    } else if (replacement) {
      map[original] = replacement;
    }
    if (replacement) bypass.push(replacement);
  }
  return { map, bypass };
}

/**
 * Run the suite once. target: 'original' | 'keel'; variant: a key of EXPRESS or 'direct'.
 * Returns { passed: string[], failed: {title, error}[], skipped: string[], status, output }.
 */
export function runOnce(pkg, suite, base, target, variant) {
  const copy = join(base, 'suite');
  const results = join(base, `results-${target}-${variant.replace(/\W+/g, '-')}.json`);
  rmSync(results, { force: true });
  const { map, bypass } = redirects(suite, copy, target, variant);
  const env = {
    ...process.env,
    NODE_ENV: 'test',
    KEEL_PEER_RESULTS: results,
    KEEL_PEER_REDIRECT: JSON.stringify(map),
    KEEL_PEER_BYPASS: JSON.stringify(bypass),
    KEEL_PEER_EXPRESS: EXPRESS[variant] ?? '',
    KEEL_PEER_TARGET: target,
    KEEL_PEER_TARGET_FILE: target === 'keel' ? join(HERE, suite.name, Object.values(suite.redirect)[0]) : join(copy, Object.keys(suite.redirect)[0]),
    KEEL_ROOT: ROOT,
  };
  const bin = (name) => join(base, 'node_modules', '.bin', name);
  let command;
  if (suite.runner === 'mocha') {
    command = [bin('mocha'), '--require', join(HERE, 'hook.cjs'), '--reporter', join(HERE, 'mocha-reporter.cjs'), ...suite.args];
  } else if (suite.runner === 'jest') {
    const config = join(base, `jest-${target}.config.json`);
    writeFileSync(config, JSON.stringify(suite.jestConfig(copy, target === 'keel' ? join(HERE, suite.name) : undefined, EXPRESS[variant]), null, 2));
    command = [bin('jest'), '--config', config, '--rootDir', copy, '--json', `--outputFile=${results}.jest`, '--runInBand', ...suite.args];
  } else if (suite.runner === 'node-test') {
    command = [process.execPath, '--import', createRequire(join(base, 'package.json')).resolve('tsx'), '--import', join(HERE, 'hook-esm.mjs'),
      '--test', `--test-reporter=${join(HERE, 'node-test-reporter.mjs')}`, '--test-reporter-destination=stdout', '--test-concurrency=1', ...suite.args];
  } else {
    throw new Error(`${pkg}: unknown runner ${suite.runner}`);
  }
  const [file, ...args] = command;
  const r = spawnSync(file, args, { cwd: copy, env, encoding: 'utf8', timeout: RUN_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  let parsed;
  if (suite.runner === 'jest' && existsSync(`${results}.jest`)) parsed = fromJest(JSON.parse(readFileSync(`${results}.jest`, 'utf8')));
  else if (existsSync(results)) parsed = JSON.parse(readFileSync(results, 'utf8'));
  else parsed = { passed: [], failed: [{ title: `(${pkg} suite did not run)`, error: output.slice(-2000) || String(r.error) }], skipped: [] };
  return { ...parsed, status: r.status, output };
}

function fromJest(report) {
  const out = { passed: [], failed: [], skipped: [] };
  for (const file of report.testResults ?? []) {
    for (const t of file.assertionResults ?? []) {
      const title = [...t.ancestorTitles, t.title].join(' ');
      if (t.status === 'passed') out.passed.push(title);
      else if (t.status === 'failed') out.failed.push({ title, error: (t.failureMessages ?? []).join('\n').slice(0, 500) });
      else out.skipped.push(title);
    }
    // A test file that failed to load (syntax, missing export) has no assertion results.
    if ((file.assertionResults ?? []).length === 0 && file.status === 'failed') {
      out.failed.push({ title: `(test file ${file.name.split('/test/').pop()} failed to run)`, error: String(file.message).slice(0, 500) });
    }
  }
  return out;
}
