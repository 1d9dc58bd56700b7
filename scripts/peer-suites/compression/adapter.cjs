// What compression's suite imports: `compression(options)` and `compression.filter(req, res)`, the
// default filter (a compressible Content-Type), from keel's built factory.
'use strict';
const { join } = require('node:path');
const keel = require(join(process.env.KEEL_ROOT, 'dist', 'middleware', 'compression', 'index.js'));
function compression(options) {
  return keel.compression(options);
}
compression.filter = function shouldCompress(req, res) {
  return keel.isCompressible(res.getHeader('Content-Type'));
};
module.exports = compression;
