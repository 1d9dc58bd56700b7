// keel:integration
/**
 * The legacy test runners (issue 43 item 1): a CommonJS Express 4 app that require()s five factories in the shape of
 * the packages they replace and mounts an App from createApp (test/legacy/fixtures/), in a consumer project whose
 * node_modules/keel is the packed tarball (./consumer.ts), under Jest 29 and Jest 30 with their default
 * configuration (no config file: babel-jest, CommonJS, no ESM support), ts-jest (TypeScript 5, "module": "commonjs",
 * strict, skipLibCheck false), Mocha and Vitest. Each run reports 2/2.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { binOf, consumer, ROOT, RUN_TIMEOUT_MS, SKIP, type Consumer } from './consumer.js';

const FIXTURES = join(ROOT, 'test/legacy/fixtures');

describe('when a CommonJS Express 4 app tests keel factories with its own runner', { skip: SKIP, timeout: 6 * RUN_TIMEOUT_MS }, () => {
  let app: Consumer;

  before(() => {
    app = consumer({});
    cpSync(FIXTURES, app.dir, { recursive: true });
  });

  after(() => app?.remove());

  for (const jest of ['jest', 'jest30']) {
    it(`should pass 2/2 under ${jest === 'jest' ? 'Jest 29' : 'Jest 30'} with its default configuration`, () => {
      const r = app.node([binOf(jest, 'jest'), '--ci', '--cacheDirectory', join(app.dir, `.cache-${jest}`), 'legacy\\.test\\.js$']);
      assert.equal(r.status, 0, r.out);
      assert.match(r.out, /Tests:\s+2 passed, 2 total/, r.out);
    });
  }

  it('should verify an RS256 token under Jest 29\'s default runtime (jose, an ES module, is bundled as CommonJS)', () => {
    const r = app.node([binOf('jest', 'jest'), '--ci', '--cacheDirectory', join(app.dir, '.cache-jwt'), 'jwt-rs256\\.test\\.js$']);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /Tests:\s+1 passed, 1 total/, r.out);
  });

  for (const jest of ['jest', 'jest30']) {
    it(`should pass 2/2 under ts-jest on ${jest === 'jest' ? 'Jest 29' : 'Jest 30'} (TypeScript 5, module commonjs, strict, skipLibCheck false)`, () => {
      writeFileSync(join(app.dir, 'tsconfig.json'), JSON.stringify({
        compilerOptions: { module: 'commonjs', target: 'ES2022', strict: true, skipLibCheck: false, esModuleInterop: true, types: ['node'], paths: { express4: ['../node_modules/@types/express4'] } },
        files: ['ts-jest.test.ts'],
      }));
      // As in an app with ts-jest: its `typescript` is TypeScript 5 (ts-jest requires `typescript` itself, and 7 has no
      // JavaScript API); a copy of ts-jest in the project resolves it there, the rest from the repository.
      if (!existsSync(join(app.dir, 'node_modules/ts-jest'))) {
        cpSync(join(ROOT, 'node_modules/ts-jest'), join(app.dir, 'node_modules/ts-jest'), { recursive: true });
        symlinkSync(join(ROOT, 'test/legacy/typescript5/node_modules/typescript'), join(app.dir, 'node_modules/typescript'), 'dir');
      }
      writeFileSync(join(app.dir, 'jest.ts-jest.config.js'), `module.exports = {
    testEnvironment: 'node',
    testMatch: ['**/ts-jest.test.ts'],
    transform: { '^.+\\\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  };\n`);
      const r = app.node([binOf(jest, 'jest'), '--ci', '--cacheDirectory', join(app.dir, `.cache-ts-${jest}`), '--config', 'jest.ts-jest.config.js']);
      assert.equal(r.status, 0, r.out);
      assert.match(r.out, /Tests:\s+2 passed, 2 total/, r.out);
    });
  }

  it('should pass 2/2 under Mocha', () => {
    const r = app.node([binOf('mocha', 'mocha'), 'legacy.test.js']);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /2 passing/, r.out);
  });

  it('should pass 2/2 under Vitest', () => {
    const r = app.node([binOf('vitest', 'vitest'), 'run', '--root', app.dir, 'vitest.test.mjs'], { NO_COLOR: '1' });
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /Tests\s+2 passed \(2\)/, r.out);
  });
});
