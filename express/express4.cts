// CommonJS entry of keel/express4: require('keel/express4') is the express function itself, as with Express 4
// This file is the entry scripts/build.mjs bundles into dist/express/express4.cjs (no require(esm) at run time).
import mod = require('./express4.js');
export = mod.default;
