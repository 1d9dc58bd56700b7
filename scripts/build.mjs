// `npm run build` (run first by `npm test`, and as `prepack`, so `npm pack`, `npm publish` and a git install build too): a clean dist/ from tsconfig.build.json (its
// declarations; the JavaScript is rewritten as CommonJS by scripts/build-cjs.mjs), keel/express and keel/express4
// bundled (below), then the package's bin made executable. tsc writes files with the default mode (0644 under the
// usual umask), so without this a rebuilt dist/harness/cli.js answers "Permission denied" to
// `npx keel-conformance` in a checkout (npm sets the bit itself only when it installs a package).
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

rmSync(join(root, 'dist'), { recursive: true, force: true });
const tsPackage = createRequire(join(root, 'package.json')).resolve('typescript/package.json');
const tsc = join(dirname(tsPackage), JSON.parse(readFileSync(tsPackage, 'utf8')).bin.tsc);
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);

// Everything else (keel, keel/middleware/*, the protocol subpaths, keel/harness) is CommonJS in dist/, one file per
// source file: scripts/build-cjs.mjs says why and how.
const { buildCommonJs } = await import('./build-cjs.mjs');
await buildCommonJs(root, pkg);

// keel/express and keel/express4 are one CommonJS file each, bundled with esbuild from express/*.cts (the engine and
// the few lib/ modules it uses), with every npm package left as a require() of the installed package:
// - Jest's default runtime, older tools and bundlers load them without require(esm), which they cannot do;
// - the ES module entries (express/entries/*.js) re-export these files instead of being a second build, so import and
//   require() give one instance (no dual-package hazard);
// - one file instead of ~30 ES modules loads about as fast as express itself (`npm run bench:load`).
// The lib/ code inlined here (errors, connection limits, records) keeps no state an App shares, and keel's error
// classes answer `instanceof` for an error built by either copy (lib/http/errors.ts).
// No keepNames: it would wrap every closure the router creates per request in a __name() call; no minification, so
// function names stay as written (only top-level names two modules share get a suffix).
const { build } = await import('esbuild');
/** esbuild plugin: `const require = createRequire(import.meta.url);` in express/ becomes the bundle's own require. */
const ownRequire = {
  name: 'keel-own-require',
  setup(b) {
    b.onLoad({ filter: /[\\/]express[\\/].*\.ts$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      return { contents: source.replace(/^const require = createRequire\(import\.meta\.url\);$/m, ''), loader: 'ts' };
    });
  },
};
const expressDir = join(root, 'dist', 'express');
mkdirSync(expressDir, { recursive: true });
for (const entry of ['index', 'express4']) {
  await build({
    entryPoints: [join(root, 'express', `${entry}.cts`)],
    outfile: join(expressDir, `${entry}.cjs`),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    // The engine loads Express 4's libraries (accepts 1, type-is 1, send 0.19…) with `createRequire(import.meta.url)`
    // when first used; in this CommonJS file that is the module's own `require`, so the plugin below makes it so:
    // the calls stay plain `require('accepts-v1')` that node resolves from here and that a bundler bundling an app
    // follows. Any other import.meta.url becomes this file's URL (or the working directory's, bundled into ESM).
    plugins: [ownRequire],
    define: { 'import.meta.url': '__keel_import_meta_url' },
    // "use strict" first: the banner comes before esbuild's own directive, which then is no directive at all, and the
    // functions esbuild hoists to the top level would run in sloppy mode, unlike the ES modules they come from (sloppy
    // `arguments` objects alias the parameters, which V8 can seldom optimise away).
    banner: { js: "'use strict';\nconst __keel_import_meta_url = require('node:url').pathToFileURL(typeof __filename === 'string' ? __filename : process.cwd() + '/').href;" },
    legalComments: 'inline',
    logLevel: 'warning',
  });
}
// The ES module entries and the declarations of both (typed from the app's @types/express: docs/express-engine.md).
for (const file of readdirSync(join(root, 'express', 'entries'))) copyFileSync(join(root, 'express', 'entries', file), join(expressDir, file));

// Every bin: add the execute bits wherever the read bits are (0644 → 0755). chmod is a no-op on Windows.
for (const bin of Object.values(typeof pkg.bin === 'string' ? { [pkg.name]: pkg.bin } : pkg.bin ?? {})) {
  const file = join(root, bin);
  const mode = statSync(file).mode & 0o777;
  chmodSync(file, mode | ((mode & 0o444) >> 2));
}
