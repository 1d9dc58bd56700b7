// What express-rate-limit's suite imports from source/index.ts, from keel's built rateLimit():
// `rateLimit` (default and named), `ipKeyGenerator`, and `MemoryStore`, which is keel's
// FixedWindowMemoryStore (express-rate-limit's MemoryStore semantics; keel's own `MemoryStore` is the
// token-bucket store of `{ per_second, burst }`).
//
// jest's module registry loads CommonJS only, and replaces Node's require inside the suite: keel's dist/ is
// CommonJS (scripts/build-cjs.mjs), so it is required as it is, as a CommonJS app requires it, and the
// third-party packages keel loads lazily (ip-address, proxy-addr) resolve from keel's node_modules.
'use strict';
const { join } = require('node:path');

const keel = require(join(process.env.KEEL_ROOT, 'dist', 'middleware', 'rate-limit', 'index.js'));
const SECOND = 1000;
module.exports = Object.assign(keel.rateLimit, {
  default: keel.rateLimit,
  rateLimit: keel.rateLimit,
  ipKeyGenerator: keel.ipKeyGenerator,
  MemoryStore: keel.FixedWindowMemoryStore,
  SECOND, MINUTE: 60 * SECOND, HOUR: 3600 * SECOND, DAY: 86400 * SECOND,
});
