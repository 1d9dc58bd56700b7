// What serve-static's suite imports (`module.exports = serveStatic`): keel's built staticFiles(), whose
// two-argument form `staticFiles(root, options)` is serve-static's (middleware/static-files/serve-static.ts).
'use strict';
const { join } = require('node:path');
const { staticFiles } = require(join(process.env.KEEL_ROOT, 'dist', 'middleware', 'static-files', 'index.js'));
module.exports = staticFiles;
