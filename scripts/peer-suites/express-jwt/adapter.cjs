// What express-jwt's suite imports (`expressjwt`, `UnauthorizedError`), from keel's built jwt-auth.
'use strict';
const { join } = require('node:path');
const { expressjwt, UnauthorizedError } = require(join(process.env.KEEL_ROOT, 'dist', 'middleware', 'jwt-auth', 'index.js'));
module.exports = { expressjwt, UnauthorizedError };
