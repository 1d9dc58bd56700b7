// `npm run pack:express`: keel's engine as two packages a user installs *as* `express` (the zero-edit switch, as
// ultimate-express is adopted): `npm install express@npm:keel-express` (Express 5's API) or
// `express@npm:keel-express4` (Express 4's), or from the tarballs this writes to packs/:
// `npm install express@file:packs/keel-express4-4.22.3.tgz`.
//
// Each package depends on keel and is a few one-line files at the paths of Express's own package, each the engine's
// real object, so packages that require Express's files (express-async-errors requires express/lib/router/layer and
// express/lib/router, and patches Layer.prototype) patch what keel runs. Its version is the Express release whose
// API and test suite it stands for (the repository's express and express4 devDependencies, the ones
// `npm run express-suite` runs), so peer ranges such as `express: ^4.17.0` are met.
//
// Usage: node scripts/pack-express.mjs [--keel <version range or spec>] [--out <dir>]
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));
const keel = readJson(join(root, 'package.json'));
const { values } = parseArgs({ options: { keel: { type: 'string' }, out: { type: 'string' } } });
const keelSpec = values.keel ?? `^${keel.version}`;
const out = resolve(values.out ?? join(root, 'packs'));

/** The Express release each alias stands for: the one whose suite keel's entry passes. */
const expressVersion = (dir) => readJson(join(root, 'node_modules', dir, 'package.json')).version;

const PARTS = "require('keel/%ENTRY%')[Symbol.for('keel.express.parts')]";

/**
 * The files of one alias package: path → contents. Express 5 has no lib/router (it routes with the `router`
 * package), so its alias has none either: an Express 4 patcher such as express-async-errors fails to load there as on
 * Express 5 (where keel/express forwards rejected promises itself) instead of forwarding each rejection twice.
 */
function files(entry, major) {
  const parts = PARTS.replace('%ENTRY%', entry);
  const header = (what) => `'use strict';\n// ${what}: keel's engine (${entry}), installed as express. See keel's docs/express-engine.md.\n`;
  const list = {
    'index.js': `${header("Express's index.js")}module.exports = require('./lib/express');\n`,
    'lib/express.js': `${header('createApplication and the express namespace')}module.exports = require('keel/${entry}');\n`,
    'lib/application.js': `${header('The application prototype')}module.exports = require('keel/${entry}').application;\n`,
    'lib/request.js': `${header('The request prototype')}module.exports = require('keel/${entry}').request;\n`,
    'lib/response.js': `${header('The response prototype')}module.exports = require('keel/${entry}').response;\n`,
    'lib/view.js': `${header("The default 'view' class")}module.exports = ${parts}.View;\n`,
  };
  if (major === 4) {
    // Export the engine's classes only: an APM loader that rewrites Express 4's Layer.prototype.handle_request
    // finds no such assignment here, and keel publishes the same diagnostics channels itself (router/channels.ts)
    list['lib/router/index.js'] = `${header("Express 4's Router (routers inherit it, so its statics are their methods)")}module.exports = ${parts}.Router;\n`;
    list['lib/router/layer.js'] = `${header("Express 4's Layer (the engine calls handle_request and handle_error through its prototype)")}module.exports = ${parts}.Layer;\n`;
    list['lib/router/route.js'] = `${header("Express 4's Route")}module.exports = ${parts}.Route;\n`;
  }
  return list;
}

function manifest(name, entry, version) {
  return {
    name,
    version,
    description: `keel's engine (${entry}) to install as express: Express ${version.split('.')[0]}'s API, Express's file paths, keel's engine.`,
    license: keel.license,
    repository: keel.repository,
    homepage: keel.homepage,
    keywords: ['express', 'keel', 'alias'],
    main: 'index.js',
    engines: keel.engines,
    dependencies: { keel: keelSpec },
    files: ['index.js', 'lib', 'README.md'],
  };
}

function readme(name, entry, version) {
  return `# ${name}\n\nkeel's Express engine (\`${entry}\`, Express ${version}'s API) packaged to be installed *as* \`express\`, so an\nExpress app switches engine without editing a line:\n\n\`\`\`sh\nnpm install express@npm:${name}\n\`\`\`\n\nIt carries the paths of Express's own package (${Object.keys(files(entry, Number(version.split('.')[0]))).join(', ')}) mapped onto\nthe engine's real objects, so packages that require or patch them work as on Express. See keel's\ndocs/express-engine.md.\n`;
}

mkdirSync(out, { recursive: true });
const staging = mkdtempSync(join(tmpdir(), 'keel-pack-express-'));
try {
  for (const [name, entry, dir, major] of [['keel-express', 'express', 'express', 5], ['keel-express4', 'express4', 'express4', 4]]) {
    const version = expressVersion(dir);
    const pkgDir = join(staging, name);
    for (const [file, contents] of Object.entries(files(entry, major))) {
      mkdirSync(dirname(join(pkgDir, file)), { recursive: true });
      writeFileSync(join(pkgDir, file), contents);
    }
    writeFileSync(join(pkgDir, 'package.json'), `${JSON.stringify(manifest(name, entry, version), null, 2)}\n`);
    writeFileSync(join(pkgDir, 'README.md'), readme(name, entry, version));
    const r = spawnSync('npm', ['pack', pkgDir, '--pack-destination', out, '--json', '--ignore-scripts'], { encoding: 'utf8', shell: process.platform === 'win32' });
    if (r.status !== 0) {
      process.stderr.write(r.stderr);
      process.exit(r.status ?? 1);
    }
    const [{ filename }] = JSON.parse(r.stdout);
    console.log(`${join(out, filename)}  (install as express: npm install express@file:${join(out, filename)})`);
  }
} finally {
  rmSync(staging, { recursive: true, force: true });
}
