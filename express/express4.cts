// CommonJS entry of keel/express4: require('keel/express4') is the express function itself, as with Express 4
// (node ≥ 20.19 loads the ES module synchronously).
import mod = require('./express4.js');
export = mod.default;
