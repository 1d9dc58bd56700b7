// What express-rate-limit's suite imports from source/index.ts (`rateLimit` default and named,
// `MemoryStore`, `ipKeyGenerator`), from keel's built rateLimit(). Loaded with Node's own require
// (keel's dist is ES modules, which jest's module registry cannot load).
'use strict';
const { createRequire } = require('node:module');
const { join } = require('node:path');
const nodeRequire = createRequire(join(process.env.KEEL_ROOT, 'package.json'));
const keel = nodeRequire(join(process.env.KEEL_ROOT, 'dist', 'middleware', 'rate-limit', 'index.js'));
function rateLimit(options) {
  return keel.rateLimit(options);
}
module.exports = Object.assign(rateLimit, {
  default: rateLimit,
  rateLimit,
  MemoryStore: keel.MemoryStore,
  ...(keel.ipKeyGenerator ? { ipKeyGenerator: keel.ipKeyGenerator } : {}),
});
