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
  const source = Math.max(...['lib', 'middleware', 'harness', 'express'].map((d) => newestMtime(join(ROOT, d), '.ts')));
  if (built >= source) return;
  log('keel: dist/ is older than the sources; running the build (npm run build)');
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('keel build failed');
}

/**
 * Install the package's dependencies plus the test devDependencies the suite names into
 * WORK/<pkg>/<hash of that list>/node_modules (once per list: checkouts whose lists differ never
 * reinstall over each other), and copy the package's repository (fresh every run: the suite runs
 * unchanged) to .../run-<pid>/suite, below those node_modules so the suite's files resolve them; the
 * suite's own package.json is untouched. One copy per process: several checkouts may run the suites
 * at once. Returns the run directory (removed by cleanup()).
 */
export function prepare(pkg, suite, log) {
  const manifest = JSON.parse(readFileSync(join(SHARED, pkg, 'package.json'), 'utf8'));
  const dev = manifest.devDependencies ?? {};
  const wanted = { ...(manifest.dependencies ?? {}) };
  for (const name of suite.devDependencies) {
    if (!(name in dev)) throw new Error(`${pkg}: devDependency ${name} is not in the suite's package.json`);
    wanted[name] = dev[name];
  }
  Object.assign(wanted, suite.extraDependencies ?? {});
  const pkgJson = JSON.stringify({ name: `keel-peer-${pkg}`, private: true, dependencies: wanted }, null, 2);
  const stamp = createHash('sha256').update(pkgJson).digest('hex');
  const base = join(WORK, pkg, stamp.slice(0, 12));
  const run = join(base, `run-${process.pid}`);
  const copy = join(run, 'suite');
  rmSync(run, { recursive: true, force: true });
  mkdirSync(run, { recursive: true });
  // Copies left by runs that were killed (their process is gone).
  for (const name of readdirSync(base)) {
    const pid = /^run-(\d+)$/.exec(name)?.[1];
    if (pid && !alive(Number(pid))) rmSync(join(base, name), { recursive: true, force: true });
  }
  cpSync(join(SHARED, pkg), copy, { recursive: true });
  const stampFile = join(base, '.installed');
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp && existsSync(join(base, 'node_modules'))) return run;
  log(`${pkg}: installing the suite's test dependencies into ${base} (once)`);
  writeFileSync(join(base, 'package.json'), pkgJson);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--no-package-lock', '--ignore-scripts', '--loglevel=error'], { cwd: base, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`${pkg}: npm install failed`);
  writeFileSync(stampFile, stamp);
  return run;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** Remove a run directory made by prepare(). */
export function cleanup(run) {
  rmSync(run, { recursive: true, force: true });
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
    if (replacement) bypass.push(replacement.split('?')[0]);
  }
  return { map, bypass };
}

/**
 * Run the suite once. target: 'original' | 'keel'; variant: a key of EXPRESS or 'direct'.
 * Returns { passed: string[], failed: {title, error}[], skipped: string[], status, output }.
 */
export function runOnce(pkg, suite, run, target, variant) {
  const base = dirname(run);
  const copy = join(run, 'suite');
  const results = join(run, `results-${target}-${variant.replace(/\W+/g, '-')}.json`);
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
    KEEL_PEER_TARGET_FILE: target === 'keel' ? join(HERE, suite.name, Object.values(suite.redirect)[0].split('?')[0]) : join(copy, Object.keys(suite.redirect)[0]),
    KEEL_ROOT: ROOT,
    ...(suite.env ?? {}),
  };
  const bin = (name) => join(base, 'node_modules', '.bin', name);
  let command;
  if (suite.runner === 'mocha') {
    // --exit: a middleware that leaves a handle open (a hung stream) must not hang the run after the results.
    command = [bin('mocha'), '--exit', '--require', join(HERE, 'hook.cjs'), '--reporter', join(HERE, 'mocha-reporter.cjs'), ...suite.args];
  } else if (suite.runner === 'jest') {
    const config = join(run, `jest-${target}.config.json`);
    writeFileSync(config, JSON.stringify(suite.jestConfig(copy, target === 'keel' ? join(HERE, suite.name) : undefined, EXPRESS[variant]), null, 2));
    command = [bin('jest'), '--config', config, '--rootDir', copy, '--json', `--outputFile=${results}.jest`, '--runInBand', ...suite.args];
  } else if (suite.runner === 'node-test') {
    command = [process.execPath, '--import', 'tsx', '--import', join(HERE, 'hook-esm.mjs'),
      '--test', `--test-reporter=${join(HERE, 'node-test-reporter.mjs')}`, '--test-reporter-destination=stdout', '--test-concurrency=1', ...suite.args];
  } else {
    throw new Error(`${pkg}: unknown runner ${suite.runner}`);
  }
  // Mocha suites run one test file per process when `files` is given, so a file that throws while
  // loading (a factory refusing options at describe time) costs that file's tests, not the whole run.
  const batches = suite.runner === 'mocha' && suite.files ? suite.files.map((f) => [f]) : [[]];
  const merged = { passed: [], failed: [], skipped: [] };
  let status = 0;
  let output = '';
  for (const batch of batches) {
    const [file, ...args] = [...command, ...batch];
    rmSync(results, { force: true });
    const r = spawnSync(file, args, { cwd: copy, env, encoding: 'utf8', timeout: RUN_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
    const text = `${r.stdout ?? ''}${r.stderr ?? ''}`;
    output += text;
    status ||= r.status ?? 1;
    let parsed;
    if (suite.runner === 'jest' && existsSync(`${results}.jest`)) parsed = fromJest(JSON.parse(readFileSync(`${results}.jest`, 'utf8')));
    else if (existsSync(results)) parsed = JSON.parse(readFileSync(results, 'utf8'));
    else {
      const what = batch.length ? `test file ${batch.join(' ')}` : `${pkg} suite`;
      const cause = text.split('\n').find((l) => /Error|Exception/.test(l)) ?? String(r.error ?? text.slice(-500));
      parsed = { passed: [], failed: [{ title: `(${what} did not run)`, error: cause }], skipped: [] };
    }
    merged.passed.push(...parsed.passed);
    merged.failed.push(...parsed.failed);
    merged.skipped.push(...parsed.skipped);
  }
  return { ...merged, status, output };
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
      // jest's "Details:" part names the file and line that could not be loaded.
      const message = String(file.message);
      const details = message.indexOf('Details:');
      out.failed.push({ title: `(test file ${file.name.split('/test/').pop()} failed to run)`, error: (details === -1 ? message : message.slice(details)).slice(0, 800) });
    }
  }
  return out;
}
