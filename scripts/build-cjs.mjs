// keel, keel/middleware/*, the protocol subpaths and keel/harness as CommonJS (issue 43): most Express apps are
// CommonJS and tested under Jest, whose default runtime cannot load ES modules (nor require(esm)). So the JavaScript in
// dist/lib, dist/middleware and dist/harness is CommonJS, one file per source file (esbuild, no bundling: each module
// exists once, however many entries reach it), in folders whose package.json says "type": "commonjs"; tsc's .d.ts stay
// beside it. The ES module entries (index.mjs) re-export these files instead of being a second build, as
// express/entries/* do for the Express bundle, so `import` and `require()` give one module instance (no dual-package
// hazard): one App registry, one store class, one error class per process.
// - `import()` of keel's own protocol modules becomes a lazy `require()` (esbuild's `dynamic-import: false`): an App
//   that uses no protocol still loads none of them (test/lazy-protocols.test.ts), and Jest needs no ESM support.
// - `import.meta` becomes a per-file object with the file's URL and a `resolve()` that answers as import.meta.resolve
//   does (ERR_MODULE_NOT_FOUND when a package is missing: lib/ops/packages.ts).
// - Each middleware has an index.cjs, the `require` condition of keel/middleware/<name>: the factory itself, with
//   every named export as a property (and `.default`), the shape of the package it replaces (require('helmet'),
//   require('cors'), require('compression'), require('express-rate-limit'), require('serve-static')); jwt-auth stays
//   an object, as require('express-jwt') is.
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { typeExportsOf, writeRequireDeclarations } from './build-cjs-types.mjs';

/** The source trees compiled to CommonJS (tsconfig.build.json's "include"). */
const TREES = ['lib', 'middleware', 'harness'];

/**
 * keel/middleware/<name> → the export `require()` returns. Default: the camel-cased factory (cors, rateLimit,
 * staticFiles…); security-headers: helmet's shape (its default export); null: an object, as express-jwt's require().
 */
const CALLABLE = { 'security-headers': 'default', 'jwt-auth': null };

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * jose (the asymmetric JWT algorithms) is an ES module only. Node loads it with require(esm), but Jest's runtime cannot:
 * RS256/ES256/JWKS under Jest would fail with "Cannot use import statement outside a module". So the CommonJS build
 * loads a CommonJS bundle of the installed jose, written here, still lazily (by the first factory that needs it). Its
 * errors stay inside keel (mapped to keel's own), so another copy of jose in an app shares nothing with it.
 */
const JOSE_BUNDLE = (dist) => join(dist, 'lib', 'vendor', 'jose.cjs');

function filesUnder(dir, suffix) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(p, suffix));
    else if (entry.name.endsWith(suffix) && !entry.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

// Prepended to a file that used import.meta (url, resolve) once converted: what an ES module at this place would see.
const IMPORT_META = "const __keel_import_meta = { url: require('node:url').pathToFileURL(__filename).href, resolve(specifier) { try { return require('node:url').pathToFileURL(require.resolve(specifier)).href; } catch (err) { if (err && err.code === 'MODULE_NOT_FOUND') err.code = 'ERR_MODULE_NOT_FOUND'; throw err; } } };\n";

// harness/cli.ts awaits at its top level, which CommonJS cannot: the bin is written here instead, the same two lines.
const CLI = `#!/usr/bin/env node
'use strict';
/** Package bin \`keel-conformance\` (harness/cli.ts, as CommonJS; see harness/conformance/cli-main.ts for the options). */
require('./conformance/cli-main.js').main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
`;

export async function buildCommonJs(root, pkg) {
  const dist = join(root, 'dist');
  // Exactly what tsc compiled (tsconfig.build.json), now as CommonJS over tsc's ES modules.
  const emitted = TREES.flatMap((tree) => filesUnder(join(dist, tree), '.js'));
  const sources = emitted.map((file) => join(root, relative(dist, file)).replace(/\.js$/, '.ts')).filter((src) => !src.endsWith(join('harness', 'cli.ts')));
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: sources,
    outbase: root,
    outdir: dist,
    bundle: false,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    supported: { 'dynamic-import': false },
    define: { 'import.meta': '__keel_import_meta' },
    write: false,
    legalComments: 'inline',
    logLevel: 'warning',
  });
  let joseLoads = 0;
  for (const out of result.outputFiles) {
    let text = out.text.replace(/\(0, import_lazy_require\.lazyRequire\)\("jose"\)/g, () => {
      joseLoads++;
      return `(0, import_lazy_require.lazyRequire)(require.resolve(${JSON.stringify(`./${relative(dirname(out.path), JOSE_BUNDLE(dist))}`)}))`;
    });
    const hashbang = text.startsWith('#!') ? text.slice(0, text.indexOf('\n') + 1) : '';
    text = text.slice(hashbang.length);
    // ES modules are strict; the CommonJS copy must be too (sloppy `arguments`, `this`, silent writes).
    const head = `'use strict';\n${text.includes('__keel_import_meta') ? IMPORT_META : ''}`;
    writeFileSync(out.path, hashbang + head + text);
  }
  if (joseLoads === 0) throw new Error("no module loads jose with lazyRequire('jose') any more: update scripts/build-cjs.mjs");
  writeFileSync(join(dist, 'harness', 'cli.js'), CLI);
  for (const tree of TREES) writeFileSync(join(dist, tree, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
  // After the package.json files: node caches each folder's package scope on the first resolution from it.
  await bundleEsmOnlyDependencies(dist, build);

  // The entries: every subpath of package.json "exports" but keel/express* (bundled by scripts/build.mjs).
  const requireFromDist = createRequire(join(dist, 'package.json'));
  const entryDirs = [];
  /** Callable middleware entries, for their index.d.cts once every index.d.ts is final. */
  const callables = [];
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    const file = typeof target === 'object' ? target.require?.default ?? target.default : null;
    if (!file || !file.startsWith('./dist/') || subpath.startsWith('./express')) continue;
    if (subpath === './middleware/*') {
      for (const name of readdirSync(join(dist, 'middleware'), { withFileTypes: true })) if (name.isDirectory()) entryDirs.push({ dir: join(dist, 'middleware', name.name), middleware: name.name, subpath: `keel/middleware/${name.name}` });
    } else {
      entryDirs.push({ dir: join(root, dirname(file)), subpath: `keel${subpath.slice(1)}` });
    }
  }
  for (const { dir, middleware, subpath } of entryDirs) {
    const mod = requireFromDist(join(dir, 'index.js'));
    const names = Object.keys(mod).filter((n) => n !== 'default' && n !== '__esModule');
    const bad = names.filter((n) => !IDENTIFIER.test(n));
    if (bad.length) throw new Error(`${subpath} exports names an ES module wrapper cannot destructure: ${bad.join(', ')}`);
    const cjsEntry = middleware ? './index.cjs' : './index.js';
    if (middleware) {
      const camel = middleware.replace(/-([a-z])/g, (_, c) => c.toUpperCase());
      const main = middleware in CALLABLE ? CALLABLE[middleware] : camel;
      if (main === null) {
        writeFileSync(join(dir, 'index.cjs'), `'use strict';\n// require('${subpath}'): its named exports, an object as require() of the package it replaces is.\nmodule.exports = require('./index.js');\n`);
        writeFileSync(join(dir, 'index.d.cts'), `// require('${subpath}'): its named exports, an object (scripts/build-cjs.mjs).\nexport * from './index.js';\n`);
      } else {
        callables.push({ dir, subpath, main });
        if (typeof mod[main] !== 'function') throw new Error(`${subpath}: export ${main} is not a function`);
        writeFileSync(join(dir, 'index.cjs'), `'use strict';
// require('${subpath}'): the factory itself, with every named export as a property and as \`.default\`, the shape of
// require() of the package it replaces (scripts/build-cjs.mjs). The same function object as \`import { ${main === 'default' ? 'default' : main} }\`.
const m = require('./index.js');
const entry = m.${main};
for (const name of Object.keys(m)) if (name !== '__esModule' && !Object.prototype.hasOwnProperty.call(entry, name)) Object.defineProperty(entry, name, { enumerable: true, get: () => m[name] });
if (!Object.prototype.hasOwnProperty.call(entry, 'default')) Object.defineProperty(entry, 'default', { enumerable: true, value: entry });
module.exports = entry;
`);
      }
    }
    // A factory's entry has a default export, the factory, as the package it replaces does (`import cors from 'cors'`,
    // or TypeScript's `import cors from …` compiled to require()): in the ES module entry and in the declarations.
    const factory = middleware ? (middleware in CALLABLE ? CALLABLE[middleware] : middleware.replace(/-([a-z])/g, (_, c) => c.toUpperCase())) : null;
    const hasDefault = 'default' in mod || (factory !== null && factory !== 'default');
    if (factory !== null && factory !== 'default') {
      const dts = join(dir, 'index.d.ts');
      const text = readFileSync(dts, 'utf8');
      if (!new RegExp(`^export declare function ${factory}\\b`, 'm').test(text)) throw new Error(`${subpath}: index.d.ts declares no function ${factory}`);
      writeFileSync(dts, `${text}export default ${factory};\n`);
    }
    writeFileSync(join(dir, 'index.mjs'), `// ${subpath} as an ES module: it re-exports the CommonJS build (${cjsEntry}) rather than being a second build, so
// that \`import\` and \`require()\` give one module instance (scripts/build-cjs.mjs). createRequire rather than
// \`import ... from '${cjsEntry}'\`: node's import of CommonJS lexes the file and goes through the ES module loader.
import { createRequire } from 'node:module';

const m = createRequire(import.meta.url)('${cjsEntry}');
${names.length ? `export const { ${names.join(', ')} } = m;\n` : ''}${hasDefault ? 'export default m.default;\n' : ''}`);
    // The same declarations, read as an ES module's (the folder's package.json makes index.d.ts CommonJS's).
    copyFileSync(join(dir, 'index.d.ts'), join(dir, 'index.d.mts'));
  }
  const types = typeExportsOf(root, callables.map(({ dir }) => join(dir, 'index.d.ts')));
  for (const { dir, subpath, main } of callables) writeRequireDeclarations(dir, subpath, main, types.get(join(dir, 'index.d.ts')));
}

async function bundleEsmOnlyDependencies(dist, build) {
  await build({
    entryPoints: [createRequire(join(dist, 'lib', 'index.js')).resolve('jose')],
    outfile: JOSE_BUNDLE(dist),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    legalComments: 'inline',
    logLevel: 'warning',
  });
}
