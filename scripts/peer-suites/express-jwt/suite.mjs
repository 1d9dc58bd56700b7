// express-jwt's suite (mocha 10 + ts-node, fake req/res, no Express at run time: one variant). The
// test files import `../src` and `../src/errors/UnauthorizedError`; both are redirected to keel's
// jwt-auth exports. ts-node still type-checks the test files against the original's types.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export default {
  runner: 'mocha',
  devDependencies: ['mocha', 'ts-node', 'typescript', '@types/express', '@types/mocha', '@types/node'],
  args: ['--require', join(here, 'load.cjs'), '--require', 'ts-node/register', 'test/**'],
  variants: ['direct'],
  redirect: { 'src/index.ts': 'adapter.cjs', 'src/errors/UnauthorizedError.ts': 'adapter.cjs' },
};
