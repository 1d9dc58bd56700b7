// express-rate-limit's suite (jest 30 + ts-jest, Express 5 through supertest): the library tests
// (test/library; test/external needs published stores and loggers), under Express 5 and 4. Only the
// suite's import of source/index.ts is redirected: memory-store-test, validation-test and logger-test
// also test the package's own modules directly, which keel does not replace.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export default {
  runner: 'jest',
  devDependencies: ['jest', 'ts-jest', 'typescript', '@jest/globals', '@types/jest', '@types/node', '@types/express',
    '@types/supertest', '@types/debug', 'supertest', 'express', 'ratelimit-header-parser'],
  // The suite's tsconfig extends @express-rate-limit/tsconfig; the registry has no 1.0.5 (the pinned one).
  extraDependencies: { '@express-rate-limit/tsconfig': '^1.0.2' },
  args: [],
  variants: ['express 5', 'express 4'],
  redirect: { 'source/index.ts': 'adapter.cjs' },
  /** The suite's jest.config.json, without coverage, with the package (and express) mapped. */
  jestConfig(copy, adapterDir, expressDir) {
    const base = JSON.parse(readFileSync(join(copy, 'jest.config.json'), 'utf8'));
    const mapper = {};
    if (adapterDir) mapper['^(\\.\\./)+source/index(\\.js)?$'] = join(adapterDir, 'adapter.cjs');
    if (expressDir) mapper['^express$'] = expressDir;
    return {
      ...base,
      collectCoverage: false,
      moduleFileExtensions: [...new Set([...(base.moduleFileExtensions ?? []), 'cjs', 'mjs'])],
      moduleNameMapper: { ...mapper, ...base.moduleNameMapper },
    };
  },
};
