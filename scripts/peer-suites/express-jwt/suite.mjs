// express-jwt's suite (mocha 10 + ts-node, fake req/res; no Express app).
export default {
  runner: 'mocha',
  devDependencies: ['mocha', 'ts-node', 'typescript', '@types/express', '@types/mocha', '@types/node', 'express'],
  // ts-node without type checking: the suite's types come from its own src/, which keel does not replace.
  // keel's dist/ is left to Node as node_modules would be (ts-node refuses to require ES modules
  // from files it handles; an installed keel lives under node_modules, which ts-node ignores).
  env: { TS_NODE_TRANSPILE_ONLY: 'true', TS_NODE_IGNORE: '/node_modules/,/dist/' },
  args: ['--require', 'ts-node/register'],
  files: ['UnauthorizedError', 'jwt', 'multitenancy', 'revocation', 'string_token'].map((f) => `test/${f}.test.ts`),
  variants: ['direct'],
  redirect: { 'src/index.ts': 'adapter.cjs', 'src/errors/UnauthorizedError.ts': 'adapter.cjs' },
};
