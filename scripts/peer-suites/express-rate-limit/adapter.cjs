// What express-rate-limit's suite imports from source/index.ts (`rateLimit` default and named,
// `MemoryStore`, `ipKeyGenerator`), from keel's built rateLimit(). Loaded with Node's own require
// (keel's dist is ES modules, which jest's module registry cannot load; jest also replaces the
// `module` builtin's createRequire, so the real one is taken from process.getBuiltinModule).
'use strict';
const { join } = require('node:path');
const realModule = typeof process.getBuiltinModule === 'function' ? process.getBuiltinModule('node:module') : require('node:module');
const nodeRequire = realModule.createRequire(join(process.env.KEEL_ROOT, 'package.json'));
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
