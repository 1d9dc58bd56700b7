// What serve-static's suite imports: `serveStatic(root, options)`, from keel's built staticFiles().
// keel's factory takes a StaticFilesConfig (directory, route_prefix, index_file); serve-static's
// options are passed through so keel decides what it accepts (the static-files owner refines this).
'use strict';
const { join } = require('node:path');
const { staticFiles } = require(join(process.env.KEEL_ROOT, 'dist', 'middleware', 'static-files', 'index.js'));
function serveStatic(root, options) {
  const { index, ...rest } = options || {};
  return staticFiles({
    directory: root,
    route_prefix: '/',
    ...(index === false ? { index_file: false } : {}),
    ...rest,
  });
}
module.exports = serveStatic;
