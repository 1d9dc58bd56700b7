// serve-static's suite (mocha 10, middleware called from a bare http.createServer; fixtures in the
// copy): run directly and mounted in a real Express 4 and 5 app (express.static is serve-static).
// No --bail: every test's outcome is counted.
export default {
  runner: 'mocha',
  devDependencies: ['mocha', 'supertest'],
  args: ['--check-leaks'],
  files: ['test/test.js'],
  variants: ['direct', 'express 4', 'express 5'],
  wrapInExpress: true,
  redirect: { 'index.js': 'adapter.cjs' },
};
