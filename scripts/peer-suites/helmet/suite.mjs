// helmet's suite (node:test through tsx, middleware called from a bare http server): the top-level
// helmet() and each standalone middleware. project-setups and source-files build and inspect helmet's
// own package, which keel does not replace, so they are not run.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED } from '../lib.mjs';

const MIDDLEWARES = readdirSync(join(SHARED, 'helmet', 'middlewares'));
export default {
  runner: 'node-test',
  devDependencies: ['tsx', 'supertest', '@types/supertest', '@types/node', 'typescript'],
  args: readdirSync(join(SHARED, 'helmet', 'test'))
    .filter((f) => f.endsWith('.test.ts') && !['project-setups.test.ts', 'source-files.test.ts'].includes(f))
    .map((f) => join('test', f)),
  variants: ['direct'],
  redirect: {
    'index.ts': 'adapter.mjs',
    ...Object.fromEntries(MIDDLEWARES.map((m) => [join('middlewares', m, 'index.ts'), `adapter.mjs?middleware=${m}`])),
  },
};
