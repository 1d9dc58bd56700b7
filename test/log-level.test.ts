/**
 * KEEL_LOG_LEVEL (issue 25, item 3): an unknown level is a start-up ConfigError listing the valid
 * ones, where pino alone would say "default level:verbose must be included in custom levels".
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { App } from '../lib/index.js';
import { ConfigError } from '../lib/http/errors.js';
import { LOG_LEVELS, logLevelFromEnv } from '../lib/ops/log-level.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('when KEEL_LOG_LEVEL names no level', () => {
  it('should be a ConfigError listing the valid levels', () => {
    assert.throws(() => logLevelFromEnv({ KEEL_LOG_LEVEL: 'verbose' }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.message, 'KEEL_LOG_LEVEL="verbose" is not a log level: use one of fatal, error, warn, info, debug, trace, silent, or unset it for info.');
      assert.equal(err.path, 'KEEL_LOG_LEVEL');
      assert.equal(err.value, 'verbose');
      return true;
    });
  });

  it('should suggest the level a typo meant', () => {
    assert.throws(() => logLevelFromEnv({ KEEL_LOG_LEVEL: 'warnn' }), { message: /\(did you mean "warn"\?\)/ });
  });

  it('should stop an App that makes its default logger, in a process of its own', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', "import('./lib/index.ts').then(({ createApp }) => createApp())"], {
      cwd: ROOT, env: { ...process.env, KEEL_LOG_LEVEL: 'verbose' }, encoding: 'utf8', timeout: 60_000,
    });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /ConfigError: KEEL_LOG_LEVEL="verbose" is not a log level: use one of fatal, error, warn, info, debug, trace, silent/);
    assert.doesNotMatch(r.stderr, /must be included in custom levels/);
  });

  it('should not read it when the App is given a logger', () => {
    const before = process.env.KEEL_LOG_LEVEL;
    process.env.KEEL_LOG_LEVEL = 'verbose';
    try {
      assert.doesNotThrow(() => new App({}, { logger: pino({ level: 'silent' }) }));
      assert.throws(() => new App({}), ConfigError);
    } finally {
      if (before === undefined) delete process.env.KEEL_LOG_LEVEL;
      else process.env.KEEL_LOG_LEVEL = before;
    }
  });
});

describe('when KEEL_LOG_LEVEL is a level or unset', () => {
  it('should use each of pino\'s levels and silent as given', () => {
    for (const level of LOG_LEVELS) assert.equal(logLevelFromEnv({ KEEL_LOG_LEVEL: level }), level);
    assert.deepEqual([...LOG_LEVELS], ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
  });

  it('should default to info, and to error under NODE_ENV=test (quiet, but errors show)', () => {
    assert.equal(logLevelFromEnv({}), 'info');
    assert.equal(logLevelFromEnv({ KEEL_LOG_LEVEL: '' }), 'info');
    assert.equal(logLevelFromEnv({ NODE_ENV: 'test' }), 'error');
  });
});

describe('when keel makes its default logger', () => {
  it('should put pid on every line, and the cluster worker id in a worker', () => {
    // A primary and one node:cluster worker, each logging one line through an App's default logger
    // (cluster.fork() needs a script file).
    const dir = mkdtempSync(join(tmpdir(), 'keel-log-'));
    const file = join(dir, 'cluster.mts');
    writeFileSync(file, [
      "import cluster from 'node:cluster';",
      `const { createApp } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'lib/index.ts')).href)});`,
      "createApp().logger.info(cluster.isPrimary ? 'primary line' : 'worker line');",
      "if (cluster.isPrimary) { const w = cluster.fork(); await new Promise((r) => w.on('exit', r)); } else process.exit(0);",
    ].join('\n'));
    const r = spawnSync(process.execPath, ['--import', 'tsx', file], {
      cwd: ROOT, env: { ...process.env, KEEL_LOG_LEVEL: 'info', NODE_ENV: 'production' }, encoding: 'utf8', timeout: 60_000,
    });
    rmSync(dir, { recursive: true, force: true });
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const primary = lines.find((l) => l.msg === 'primary line');
    const worker = lines.find((l) => l.msg === 'worker line');
    assert.ok(primary && worker, r.stdout);
    assert.equal(typeof primary.pid, 'number');
    assert.equal(primary.worker, undefined);
    assert.equal(typeof worker.pid, 'number');
    assert.notEqual(worker.pid, primary.pid);
    assert.equal(worker.worker, 1);
  });
});
