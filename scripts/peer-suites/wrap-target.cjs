// The module a middleware-level suite loads in an Express variant: the original package or keel's
// adapter (KEEL_PEER_TARGET_FILE), its factory mounted inside a real Express app (express-wrap.cjs).
'use strict';
const wrapInExpress = require('./express-wrap.cjs');
module.exports = wrapInExpress(require(process.env.KEEL_PEER_TARGET_FILE));
