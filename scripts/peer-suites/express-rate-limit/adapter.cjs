// What express-rate-limit's suite imports from source/index.ts, from keel's built rateLimit():
// `rateLimit` (default and named), `ipKeyGenerator`, and `MemoryStore`, which is keel's
// FixedWindowMemoryStore (express-rate-limit's MemoryStore semantics; keel's own `MemoryStore` is the
// token-bucket store of `{ per_second, burst }`).
//
// jest's module registry loads CommonJS only, and replaces Node's require inside the suite, so keel's
// ES-module dist/ cannot be required as it is: it is bundled once into one CommonJS file (esbuild, a
// keel devDependency) in the run's work dir. `import.meta.url` keeps pointing into dist/, so the
// third-party packages keel loads lazily (ip-address, proxy-addr) resolve from keel's node_modules.
'use strict';
const { mkdirSync, statSync, existsSync } = require('node:fs');
const { join } = require('node:path');
const { tmpdir } = require('node:os');
const { pathToFileURL } = require('node:url');

const root = process.env.KEEL_ROOT;
const entry = join(root, 'dist', 'middleware', 'rate-limit', 'index.js');
const outDir = join(process.env.PEER_SUITES_WORK || join(process.env.TMPDIR || tmpdir(), 'keel-peer-suites'), 'express-rate-limit');
const out = join(outDir, 'keel-rate-limit.bundle.cjs');
// Rebuilt when dist/ is newer than the bundle (one bundle per run of the suite, not per test file).
if (!existsSync(out) || statSync(out).mtimeMs < statSync(entry).mtimeMs) {
  mkdirSync(outDir, { recursive: true });
  const esbuild = require(join(root, 'node_modules', 'esbuild'));
  esbuild.buildSync({
    entryPoints: [entry], outfile: out, bundle: true, platform: 'node', format: 'cjs', logLevel: 'warning',
    define: { 'import.meta.url': '__keelImportMetaUrl' },
    banner: { js: `const __keelImportMetaUrl = ${JSON.stringify(pathToFileURL(entry).href)};` },
  });
}
const keel = require(out);
const SECOND = 1000;
module.exports = Object.assign(keel.rateLimit, {
  default: keel.rateLimit,
  rateLimit: keel.rateLimit,
  ipKeyGenerator: keel.ipKeyGenerator,
  MemoryStore: keel.FixedWindowMemoryStore,
  SECOND, MINUTE: 60 * SECOND, HOUR: 3600 * SECOND, DAY: 86400 * SECOND,
});
