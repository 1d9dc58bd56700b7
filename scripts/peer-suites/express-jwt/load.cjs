// Loaded before ts-node by express-jwt's suite run (suite.mjs). Two things, neither touching a test:
// - ts-node compiles only the suite's own files: files outside the copy (keel's dist/, an ES module
//   loaded through require(esm)) go to node's loader, which ts-node's CommonJS check would refuse.
// - a describe block whose body throws (keel refuses the suite's 7-byte HS secret when the factory
//   runs, at load time in revocation.test.ts) becomes one failing test, "<describe> the describe
//   block threw", instead of mocha's "Exception during run", which would stop every other file too.
'use strict';
process.env.TS_NODE_IGNORE = '^\\.\\./,(?:^|/)node_modules/';
const Mocha = require(require.resolve('mocha', { paths: [process.cwd()] }));
const bdd = Mocha.interfaces.bdd;
Mocha.interfaces.bdd = function bddReportingLoadErrors(suite) {
  bdd(suite);
  suite.on('pre-require', (context) => {
    const describe = context.describe;
    const wrapped = function (title, fn) {
      return describe.call(this, title, function () {
        try {
          return fn.call(this);
        } catch (err) {
          context.it('the describe block threw', () => { throw err; });
        }
      });
    };
    Object.assign(wrapped, describe);
    context.describe = context.context = wrapped;
  });
};
