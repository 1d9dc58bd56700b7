// The cors package's suite (mocha 9; test.js calls the middleware with fake req/res, error-response.js
// and example-app.js use Express through supertest): run under Express 4 and 5.
export default {
  runner: 'mocha',
  devDependencies: ['mocha', 'supertest', 'after', 'express'],
  args: ['--require', 'test/support/env'],
  files: ['test/error-response.js', 'test/example-app.js', 'test/issue-2.js', 'test/test.js'],
  variants: ['express 4', 'express 5'],
  // `require('..')` and `require('../lib')` both resolve to lib/index.js.
  redirect: { 'lib/index.js': 'adapter.cjs' },
};
