// CommonJS entry of keel/express4: require('keel/express4') is the express function itself, as with Express 4.
module.exports = require('./express4.js').default;
