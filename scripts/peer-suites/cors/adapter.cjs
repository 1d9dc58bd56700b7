// What the cors suite imports (`module.exports = middlewareWrapper`), from keel's built factory.
'use strict';
const { join } = require('node:path');
const { cors } = require(join(process.env.KEEL_ROOT, 'dist', 'middleware', 'cors', 'index.js'));
module.exports = cors;
