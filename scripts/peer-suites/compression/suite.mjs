// compression's suite (mocha 9, middleware called from a bare http.createServer): run directly and
// with the middleware mounted in a real Express 4 and 5 app. --exit: Express cannot serve node's http2
// compatibility objects (its http2 test fails for the original package too, inside Express), and the
// failed test leaves its http2 server and client open, which kept mocha from exiting until the timeout.
export default {
  runner: 'mocha',
  devDependencies: ['mocha', 'supertest', 'after'],
  args: ['--check-leaks', '--exit'],
  files: ['test/compression.js'],
  variants: ['direct', 'express 4', 'express 5'],
  wrapInExpress: true,
  redirect: { 'index.js': 'adapter.cjs' },
};
