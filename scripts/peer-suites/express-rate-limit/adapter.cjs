// What express-rate-limit's suite imports from source/index.ts, from keel's built rateLimit():
// `rateLimit` (default and named), `ipKeyGenerator`, and `MemoryStore`, which is keel's
// FixedWindowMemoryStore (express-rate-limit's MemoryStore semantics; keel's own `MemoryStore` is the
// token-bucket store of `{ per_second, burst }`). Loaded with Node's own require: keel's dist is ES
// modules, which jest's module registry cannot load.
'use strict';
const { createRequire } = require('node:module');
const { join } = require('node:path');
const nodeRequire = createRequire(join(process.env.KEEL_ROOT, 'package.json'));
const keel = nodeRequire(join(process.env.KEEL_ROOT, 'dist', 'middleware', 'rate-limit', 'index.js'));
const SECOND = 1000;
module.exports = Object.assign(keel.rateLimit, {
  default: keel.rateLimit,
  rateLimit: keel.rateLimit,
  ipKeyGenerator: keel.ipKeyGenerator,
  MemoryStore: keel.FixedWindowMemoryStore,
  SECOND, MINUTE: 60 * SECOND, HOUR: 3600 * SECOND, DAY: 86400 * SECOND,
});
