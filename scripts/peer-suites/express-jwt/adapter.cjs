// What express-jwt's suite imports: `expressjwt(options)` and `UnauthorizedError`, from keel's built
// jwtAuth() (which takes express-jwt's options).
'use strict';
const { join } = require('node:path');
const keel = require(join(process.env.KEEL_ROOT, 'dist', 'middleware', 'jwt-auth', 'index.js'));
exports.expressjwt = function expressjwt(options) {
  return keel.jwtAuth(options);
};
exports.UnauthorizedError = keel.UnauthorizedError;
