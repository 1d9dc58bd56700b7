// CommonJS entry of keel/express: require('keel/express') is the express function itself, as with Express.
module.exports = require('./index.js').default;
