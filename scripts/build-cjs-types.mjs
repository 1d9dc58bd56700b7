// The `require` condition's declarations of keel/middleware/<name> (index.d.cts): the shape of the package it replaces
// under TypeScript's CommonJS forms. require('keel/middleware/cors') is the factory itself (scripts/build-cjs.mjs), as
// require('cors') is, and @types/cors, @types/compression and @types/serve-static say so with `export =`: legacy
// TypeScript apps write `import cors = require('cors')`, or `import * as cors from 'cors'` without esModuleInterop,
// and call `cors()`. ES-style declarations type those as a namespace that cannot be called. So each callable entry
// gets `declare const entry: typeof m.<factory> & typeof m; export = entry;` — the factory's own overloads, every named
// export as a property — merged with a namespace of the entry's types (`cors.CorsOptions`, and `import { type
// CorsOptions }` still works: TypeScript resolves named imports of an `export =` through both).
//
// The namespace must stay type-only to merge with a const (an `export import` would instantiate it), so each type is
// re-declared as `export type X<T> = m.X<T>`. Which exports are types, and their type parameters, come from the
// TypeScript 5 compiler API (TypeScript 7, the repository's compiler, has no JavaScript API): keel-typescript5 is a
// devDependency, and the build runs only in a development install (npm test, prepack).
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** TypeScript 5's API, from the keel-typescript5 devDependency (test/legacy/typescript5). */
function typescript5(root) {
  try {
    return createRequire(join(root, 'package.json'))('keel-typescript5/node_modules/typescript');
  } catch (err) {
    throw new Error(`scripts/build-cjs-types.mjs needs TypeScript 5's compiler API from the keel-typescript5 devDependency (test/legacy/typescript5): run npm install (${err.message})`);
  }
}

/**
 * One program over every entry's index.d.ts, then per entry: its type-bearing exports (interfaces, type aliases,
 * classes' instance types, enums) with their type parameter lists.
 * @param {string} root the repository
 * @param {string[]} files index.d.ts paths
 * @returns {Map<string, { name: string, params: string, args: string }[]>} by file
 */
export function typeExportsOf(root, files) {
  const ts = typescript5(root);
  const program = ts.createProgram(files, { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16, noEmit: true, types: [] });
  const checker = program.getTypeChecker();
  const out = new Map();
  for (const file of files) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`${file}: TypeScript 5 read no module there`);
    const types = [];
    for (const exported of checker.getExportsOfModule(module)) {
      if (exported.name === 'default') continue;
      const target = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      if (!(target.flags & ts.SymbolFlags.Type)) continue;
      const declaration = target.declarations?.find((d) => d.typeParameters) ?? target.declarations?.[0];
      const parameters = declaration?.typeParameters ?? [];
      // A constraint or default names types of the declaring file, not in scope here: say so rather than emit a
      // declaration that fails to compile in a user's project (skipLibCheck false).
      const bounded = parameters.filter((p) => p.constraint || p.default);
      if (bounded.length) throw new Error(`${file}: exported type ${exported.name} has a bounded type parameter (${bounded.map((p) => p.getText()).join(', ')}); teach scripts/build-cjs-types.mjs to carry it`);
      const names = parameters.map((p) => p.name.text);
      types.push({ name: exported.name, params: names.length ? `<${names.join(', ')}>` : '', args: names.length ? `<${names.join(', ')}>` : '' });
    }
    out.set(file, types);
  }
  return out;
}

/**
 * Writes dir/index.d.cts for a callable entry.
 * @param {string} dir the entry's folder in dist
 * @param {string} subpath e.g. keel/middleware/cors
 * @param {string} main the export require() returns (a factory name, or 'default')
 * @param {{ name: string, params: string, args: string }[]} types the entry's type exports
 */
export function writeRequireDeclarations(dir, subpath, main, types) {
  const lines = types.map(({ name, params, args }) => `    export type ${name}${params} = m.${name}${args};`);
  writeFileSync(join(dir, 'index.d.cts'), `// require('${subpath}') under TypeScript's CommonJS forms (scripts/build-cjs-types.mjs): the factory itself, with every
// named export as a property, as \`export =\` declares the package it replaces; its types in the merged namespace.
import * as m from './index.js';
declare const entry: typeof m.${main} & typeof m;
declare namespace entry {
${lines.join('\n')}
}
export = entry;
`);
}
