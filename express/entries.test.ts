import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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
});
