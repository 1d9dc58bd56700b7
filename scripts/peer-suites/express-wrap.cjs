// Mounts a middleware factory's middleware inside a real Express app (KEEL_PEER_EXPRESS), for
// middleware-level suites that call it from a bare http server: the suite's (req, res, next) goes
// through app.use(middleware) and the app's final handler becomes `next`.
'use strict';
module.exports = function wrapInExpress(factory) {
  const express = require(process.env.KEEL_PEER_EXPRESS);
  const wrapped = function (...args) {
    const middleware = factory.apply(this, args);
    const app = express();
    app.disable('x-powered-by');
    app.use(middleware);
    return function expressMounted(req, res, next) {
      app(req, res, next);
    };
  };
  // Static members (serve-static's `mime`, compression's `filter`) stay reachable.
  for (const key of Object.keys(factory)) wrapped[key] = factory[key];
  return wrapped;
};
