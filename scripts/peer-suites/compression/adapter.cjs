// What compression's suite imports: `compression(options)` with `compression.filter(req, res)` (the
// default filter), keel's built factory as it is.
'use strict';
const { join } = require('node:path');
module.exports = require(join(process.env.KEEL_ROOT, 'dist', 'middleware', 'compression', 'index.js')).compression;
