/**
 * KEEL_LOG_LEVEL (issue 25, item 3): an unknown level is a start-up ConfigError listing the valid
 * ones, where pino alone would say "default level:verbose must be included in custom levels".
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { App } from '../lib/index.js';
import { ConfigError } from '../lib/errors.js';
import { LOG_LEVELS, logLevelFromEnv } from '../lib/log-level.js';

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

  it('should default to info, and to silent under NODE_ENV=test', () => {
    assert.equal(logLevelFromEnv({}), 'info');
    assert.equal(logLevelFromEnv({ KEEL_LOG_LEVEL: '' }), 'info');
    assert.equal(logLevelFromEnv({ NODE_ENV: 'test' }), 'silent');
  });
});
