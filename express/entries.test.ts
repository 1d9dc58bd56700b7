import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The entries are resolved through package.json "exports" from the built dist/, as an installed package's are.
const built = existsSync(new URL('../dist/express/index.cjs', import.meta.url));
const root = fileURLToPath(new URL('..', import.meta.url));

/** Runs a CommonJS or ESM snippet in plain node (no tsx) from the repository root: its stdout, after checking it
 * exited 0 with nothing on stderr (no warning). */
function run(code: string, type: 'commonjs' | 'module'): string {
  const r = spawnSync(process.execPath, [`--input-type=${type}`, '-e', code], {
    cwd: root, encoding: 'utf8', env: { ...process.env, NODE_ENV: 'test' },
  });
  assert.equal(r.stderr, '');
  assert.equal(r.status, 0);
  return r.stdout;
}

/** The named exports node gives `import * as express from 'express'` (cjs-module-lexer on Express's lib/express.js). */
const EXPRESS5_NAMES = ['Route', 'Router', 'application', 'json', 'raw', 'request', 'response', 'static', 'text', 'urlencoded'] as const;
const EXPRESS4_NAMES = [...EXPRESS5_NAMES, 'query'] as const;

const probe = (express: string) => `
  const app = ${express}();
  app.get('/x/:id', (req, res) => res.json({ id: req.params.id }));
  const server = app.listen(0, '127.0.0.1', async () => {
    const r = await fetch('http://127.0.0.1:' + server.address().port + '/x/7');
    console.log(typeof ${express}, typeof ${express}.Router, r.status, await r.text());
    server.close();
  });`;

describe('when keel/express and keel/express4 are loaded by name', { skip: built ? false : 'dist/ is not built (run npm run build)' }, () => {
  for (const name of ['keel/express', 'keel/express4']) {
    it(`should give require('${name}') the express function itself, without warnings`, () => {
      const out = run(`const express = require('${name}');${probe('express')}`, 'commonjs');
      assert.equal(out.trim(), 'function function 200 {"id":"7"}');
    });

    it(`should give import of '${name}' the same function as its default export, without warnings`, () => {
      const out = run(`import express from '${name}'; import { createRequire } from 'node:module';
        const same = createRequire(import.meta.url)('${name}') === express; console.log('same', same);${probe('express')}`, 'module');
      assert.equal(out.trim(), 'same true\nfunction function 200 {"id":"7"}');
    });
  }

  for (const [name, named] of [['keel/express', EXPRESS5_NAMES], ['keel/express4', EXPRESS4_NAMES]] as const) {
    it(`should give ${name} the named exports of express (ESM), each the same value as the default export's property`, () => {
      const out = run(`import * as ns from '${name}';
        const names = Object.keys(ns).filter((k) => k !== 'default').sort();
        const same = names.every((k) => ns[k] === ns.default[k]);
        console.log(JSON.stringify(names), same, ['Router', 'json', 'urlencoded', 'Route'].map((k) => typeof ns[k]).join(' '));`, 'module');
      assert.equal(out.trim(), `${JSON.stringify([...named].sort())} true function function function function`);
    });

    it(`should give require('${name}') Router, json, urlencoded and Route as functions`, () => {
      const out = run(`const { Router, json, urlencoded, Route } = require('${name}');
        console.log([Router, json, urlencoded, Route].map((f) => typeof f).join(' '));`, 'commonjs');
      assert.equal(out.trim(), 'function function function function');
    });

    it(`should load ${name} from CommonJS without require(esm): no ES module of keel is loaded`, () => {
      // --no-experimental-require-module is what Jest, older node and bundlers amount to: require() of an ES module fails
      const r = spawnSync(process.execPath, ['--no-experimental-require-module', '-e', `const express = require('${name}');
        const ours = Object.keys(require.cache).filter((f) => !f.includes('/node_modules/'));
        console.log(typeof express, ours.map((f) => f.slice(f.indexOf('/dist/'))).join(' '));`], { cwd: root, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout.trim(), `function /dist/express/${name === 'keel/express' ? 'index' : 'express4'}.cjs`);
    });

    it(`should load only its own major's libraries and one mime table per kind when ${name} starts an app (load time, npm run bench:load)`, () => {
      // what an app's start-up loads: the entry, express(), a route, the parsers and express.static
      const out = run(`const express = require('${name}'); const app = express();
        app.use(express.json(), express.urlencoded({ extended: false }), express.static(__dirname));
        app.get('/x/:id', (req, res) => res.send(req.params.id));
        const pkgs = new Set(Object.keys(require.cache).filter((f) => f.includes('/node_modules/'))
          .map((f) => f.slice(f.lastIndexOf('/node_modules/') + 14).split('/').slice(0, f.includes('/node_modules/@') ? 2 : 1).join('/')
            + (f.startsWith(${JSON.stringify(join(root, 'node_modules'))} + '/') && f.lastIndexOf('/node_modules/') === ${join(root, 'node_modules').length - 13} ? '' : ' (nested)')));
        const dbs = Object.keys(require.cache).filter((f) => f.endsWith('/mime-db/db.json'));
        console.log(JSON.stringify({ pkgs: [...pkgs].sort(), dbs: dbs.length }));`, 'commonjs');
      const { pkgs, dbs } = JSON.parse(out) as { pkgs: string[]; dbs: number };
      // the other major's packages: Express 4's are installed under -v0/-v1 aliases, Express 5's under their own names
      const foreign = name === 'keel/express'
        ? pkgs.filter((p) => /-v\d/.test(p))
        : pkgs.filter((p) => ['accepts', 'type-is', 'send', 'mime-types', 'mime-db', 'path-to-regexp', 'content-disposition', 'serve-static', 'body-parser'].includes(p));
      assert.deepEqual(foreign, []);
      assert.equal(dbs, 1);
    });

    it(`should keep Express's function names in the bundle of ${name} (tools read layer.name: 'router', and 'handle' or Express 4's 'bound dispatch')`, () => {
      const out = run(`const express = require('${name}'); const app = express(); const router = express.Router();
        app.use(router); app.get('/r', (req, res) => res.end()); console.log(app.name, router.name, (app._router ?? app.router).stack.map((l) => l.name).join(','));`, 'commonjs');
      assert.equal(out.trim(), `app router router,${name === 'keel/express4' ? 'bound dispatch' : 'handle'}`);
    });

    it(`should make the ConfigError that ${name}'s app.listen() throws an instance of keel's ConfigError (no dual-package hazard)`, () => {
      const out = run(`import express from '${name}'; import { ConfigError, KeelError, AppError } from 'keel';
        const app = express(); app.set('graceful shutdown', { timeout_ms: -1 });
        try { app.listen(0).close(); console.log('listened'); } catch (err) {
          console.log(err.name, err instanceof ConfigError, err instanceof KeelError, err instanceof AppError, err instanceof Error, new ConfigError('x', { record: 'r', path: 'p', key: 'k' }) instanceof ConfigError);
        }`, 'module');
      assert.equal(out.trim(), 'ConfigError true true false true true');
    });
  }

  it('should give a bundler (esbuild, the "module" condition) one instance for import and require() of keel/express, and a bundle that serves', async () => {
    const { build } = await import('esbuild');
    const dir = join(root, 'test-output', 'entries-bundle');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'required.cjs'), "module.exports = require('keel/express');\n");
    writeFileSync(join(dir, 'app.mjs'), `import express, { Router } from 'keel/express';
      import required from './required.cjs';
      const app = express(); const api = Router(); api.get('/x/:id', (req, res) => res.json({ id: req.params.id })); app.use('/api', api);
      const server = app.listen(0, '127.0.0.1', async () => {
        const r = await fetch('http://127.0.0.1:' + server.address().port + '/api/x/7');
        console.log(required === express, r.status, await r.text()); server.close();
      });`);
    const result = await build({ entryPoints: [join(dir, 'app.mjs')], outfile: join(dir, 'out.mjs'), bundle: true, platform: 'node', format: 'esm', metafile: true, logLevel: 'silent',
      banner: { js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);" } });
    const keelFiles = Object.keys(result.metafile.inputs).filter((f) => f.includes('dist/express/')).map((f) => f.slice(f.indexOf('dist/express/'))).sort();
    assert.deepEqual(keelFiles, ['dist/express/index.bundler.js', 'dist/express/index.cjs']);
    const r = spawnSync(process.execPath, [join(dir, 'out.mjs')], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.stdout.trim(), 'true 200 {"id":"7"}', r.stderr);
  });
});

