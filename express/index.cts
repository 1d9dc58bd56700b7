// CommonJS entry of keel/express: require('keel/express') is the express function itself, as with Express
// (node ≥ 20.19 loads the ES module synchronously).
import mod = require('./index.js');
export = mod.default;
