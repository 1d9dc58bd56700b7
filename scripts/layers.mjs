// `npm run layers` (npm test runs it, beside `npm run cycles`): lib/ is layered one way (docs/architecture.md,
// "Layers"). Fails naming each import that runs up, and each lib/ root file that belongs to no layer.
//
// Floors, bottom up. A file may import its own floor and those below, never one above: directly, or through a
// protocol folder (lib/graphql, lib/background, lib/observability, …: not floors, the App loads them). And the
// issue-39 rule in its own words: nothing that middleware/ imports, however indirectly, may import middleware/
// or the App (a folder-level cycle lib → middleware → lib, the tangle the layers exist to prevent).
// Imports are read with dpdm, the parser `npm run cycles` uses: static, type-only and import() alike.
// Test files are not layered (a test may drive anything); the files they import are.
//   node scripts/layers.mjs [--root dir]
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseDependencyTree } from 'dpdm';

/** Floors, bottom up: path prefixes of each. */
export const FLOORS = [
  { name: 'foundation', paths: ['lib/records/', 'lib/http/'] },
  { name: 'ops', paths: ['lib/ops/'] },
  { name: 'middleware', paths: ['middleware/'] },
  { name: 'server', paths: ['lib/server/'] },
  { name: 'app', paths: ['lib/app/'] },
  { name: 'entry', paths: ['lib/index.ts'] },
  { name: 'consumers', paths: ['express/', 'harness/'] },
];
/** What may stay at lib/'s root: the package's entry point. Anything else goes to a floor or a protocol folder. */
export const ROOT_FILES = ['index.ts'];

const floorOf = (file) => FLOORS.findIndex((f) => f.paths.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p)));
const isTest = (file) => /\.test\.[cm]?ts$/.test(file);
const folderOf = (file) => FLOORS[floorOf(file)]?.paths.find((p) => file.startsWith(p)) ?? file;

export async function checkLayers(root) {
  const problems = [];
  for (const name of readdirSync(join(root, 'lib'))) {
    if (/\.[cm]?ts$/.test(name) && !isTest(name) && !ROOT_FILES.includes(name)) {
      problems.push(`lib/${name} is in no layer: move it to ${FLOORS.flatMap((f) => f.paths).filter((p) => p.startsWith('lib/') && p.endsWith('/')).join(', ')} (or a protocol folder)`);
    }
  }
  const globs = ['lib/**/*.ts', 'middleware/**/*.ts', 'express/**/*.ts', 'harness/**/*.ts'];
  const tsconfig = existsSync(join(root, 'tsconfig.json')) ? join(root, 'tsconfig.json') : undefined;
  const tree = await parseDependencyTree(globs, { cwd: root, context: root, tsconfig, transform: false, skipDynamicImports: false, onProgress: () => {} });
  /** repo file → the repo files it imports, with the specifier as written. */
  const edges = new Map();
  for (const [file, deps] of Object.entries(tree)) {
    const f = relative(root, join(root, file)).split('\\').join('/');
    edges.set(f, (deps ?? []).filter((d) => d.id && !d.id.includes('node_modules') && !d.id.startsWith('node:'))
      .map((d) => ({ to: relative(root, join(root, d.id)).split('\\').join('/'), spec: d.request })));
  }
  const says = (from, spec, to) => `${from} imports '${spec}' (${to})`;

  // 1. Floors: from each layered file, follow imports through protocol folders to the first layered file.
  for (const [file, deps] of edges) {
    const floor = floorOf(file);
    if (floor < 0 || isTest(file)) continue;
    const seen = new Set();
    const walk = (from, list, via) => {
      for (const { to, spec } of list) {
        const g = floorOf(to);
        if (g > floor) problems.push(`${says(from, spec, to)}${via.length ? `, reached from ${file}` : ''}: ${FLOORS[floor].name} (${folderOf(file)}) may not import ${FLOORS[g].name} (${folderOf(to)})`);
        else if (g < 0 && to.startsWith('lib/') && !seen.has(to)) { seen.add(to); walk(to, edges.get(to) ?? [], [...via, to]); }
      }
    };
    walk(file, deps, []);
  }
  // 2. Nothing that middleware/ imports may import middleware/ or anything above it.
  const mw = FLOORS.findIndex((f) => f.name === 'middleware');
  const reached = new Map(); // lib/ file → the middleware file that reaches it
  const queue = [...edges.keys()].filter((f) => floorOf(f) === mw && !isTest(f)).map((f) => [f, f]);
  while (queue.length) {
    const [file, origin] = queue.shift();
    for (const { to } of edges.get(file) ?? []) {
      if (floorOf(to) === mw || reached.has(to)) continue;
      reached.set(to, origin);
      queue.push([to, origin]);
    }
  }
  for (const [file, origin] of reached) {
    for (const { to, spec } of edges.get(file) ?? []) {
      if (floorOf(to) >= mw) problems.push(`${says(file, spec, to)}: ${file} is imported by middleware/ (${origin}), so it may not import middleware/ or the layers above`);
    }
  }
  return { problems: [...new Set(problems)], files: edges.size };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const at = process.argv.indexOf('--root');
  const root = at > 0 ? process.argv[at + 1] : process.cwd();
  const { problems, files } = await checkLayers(root);
  if (problems.length) {
    console.error(`Layers (docs/architecture.md): ${problems.length} import(s) run up, floors bottom up: ${FLOORS.map((f) => `${f.name} [${f.paths.join(' ')}]`).join(' < ')}`);
    for (const p of problems) console.error(`  ${p}`);
    process.exit(1);
  }
  console.log(`Layers: ${files} files, no import runs up (${FLOORS.map((f) => f.name).join(' < ')})`);
}
