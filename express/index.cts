// CommonJS entry of keel/express: require('keel/express') is the express function itself, as with Express
// This file is the entry scripts/build.mjs bundles into dist/express/index.cjs (no require(esm) at run time).
import mod = require('./index.js');
export = mod.default;
