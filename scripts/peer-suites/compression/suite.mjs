// compression's suite (mocha 9, middleware called from a bare http.createServer): run directly and
// with the middleware mounted in a real Express 4 and 5 app.
export default {
  runner: 'mocha',
  devDependencies: ['mocha', 'supertest', 'after'],
  args: ['--check-leaks'],
  files: ['test/compression.js'],
  variants: ['direct', 'express 4', 'express 5'],
  wrapInExpress: true,
  redirect: { 'index.js': 'adapter.cjs' },
};
