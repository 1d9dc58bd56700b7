// keel:integration
// Switching a typed Express app to keel by one import, replayed on the packed tarball as a user gets it (issue 33):
// an Express 5 app (ES modules, @types/express 5) and an Express 4 app (CommonJS, @types/express 4, Jest 29 and
// supertest) each installed from the registry beside keel's tarball, in fresh projects. Bounded in time (~1-2 min).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = existsSync(join(root, 'dist/express/index.cjs'));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** One npm install: generous for a cold cache, bounded so a hung registry fails the test. */
const INSTALL_TIMEOUT_MS = 240_000;
const TSC = join(root, 'node_modules/typescript/bin/tsc');
const JEST = join(root, 'node_modules/jest/bin/jest.js');
const env = { ...process.env, NODE_ENV: 'test', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };

function run(cmd: string, args: string[], cwd: string, timeout = 120_000): { status: number | null; out: string } {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env });
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

/** `tsc --strict` (NodeNext, skipLibCheck: false) on the project: its error lines. */
function typeErrors(project: string): string[] {
  const r = run(process.execPath, [TSC, '-p', project], project);
  return r.out.split('\n').filter((l) => /error TS\d+/.test(l));
}

const STRICT = { compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noEmit: true, types: ['node'] }, include: ['src'] };
/** The typed app of test/types (inline handlers, Router(), express.json(), error handlers, req.params…) importing `entry`. */
const typedApp = (entry: string) => readFileSync(join(root, 'test/types/keel-express-app.ts'), 'utf8').replace(/'keel\/express'/g, `'${entry}'`);

const JEST_TEST = `
const request = require('supertest');
const entries = { 'keel/express': require('keel/express'), 'keel/express4': require('keel/express4') };

describe.each(Object.entries(entries))('%s under Jest', (name, express) => {
  test('serves a request routed through a mounted Router', async () => {
    const app = express();
    const users = express.Router();
    users.get('/:id', (req, res) => res.json({ id: req.params.id, via: name }));
    app.use(express.json());
    app.use('/api/users', users);
    const res = await request(app).get('/api/users/7');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: '7', via: name });
  });
});
`;

describe('when a typed Express app switches to keel by changing its import (packed tarball)', { skip: built ? false : 'dist/ is not built (run npm run build)', timeout: INSTALL_TIMEOUT_MS + 240_000 }, () => {
  let dir = '';
  const installs: Record<'v5' | 'v4', { status: number | null; out: string }> = { v5: { status: null, out: '' }, v4: { status: null, out: '' } };
  const project = (v: 'v5' | 'v4') => join(dir, v);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keel-switch-'));
    const packed = JSON.parse(execFileSync(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: root, encoding: 'utf8' })) as { filename: string }[];
    const tarball = join(dir, packed[0]!.filename);
    const projects = { v5: { type: 'module', deps: ['@types/express@5', '@types/node@20'] }, v4: { type: 'commonjs', deps: ['@types/express@4', '@types/node@20', 'supertest@7'] } } as const;
    await Promise.all((['v5', 'v4'] as const).map(async (v) => {
      mkdirSync(join(project(v), 'src'), { recursive: true });
      writeFileSync(join(project(v), 'package.json'), JSON.stringify({ name: `keel-switch-${v}`, private: true, type: projects[v].type }));
      try {
        const r = await promisify(execFile)(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball, ...projects[v].deps], { cwd: project(v), env, timeout: INSTALL_TIMEOUT_MS });
        installs[v] = { status: 0, out: `${r.stdout}${r.stderr}` };
      } catch (err) {
        installs[v] = { status: 1, out: String(err) };
      }
    }));
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('should install keel with each app\'s own @types/express', () => {
    assert.equal(installs.v5.status, 0, installs.v5.out);
    assert.equal(installs.v4.status, 0, installs.v4.out);
    assert.match(readFileSync(join(project('v4'), 'node_modules/@types/express/package.json'), 'utf8'), /"version": "4\./);
  });

  for (const [v, entry] of [['v5', 'keel/express'], ['v4', 'keel/express4']] as const) {
    const major = v === 'v5' ? 5 : 4;
    it(`should type-check the strict Express ${major} app with 0 errors on ${entry}, as on express`, () => {
      writeFileSync(join(project(v), 'tsconfig.json'), JSON.stringify(STRICT));
      writeFileSync(join(project(v), 'src/app.ts'), typedApp('express'));
      assert.deepEqual(typeErrors(project(v)), [], 'the app compiles against @types/express itself');
      writeFileSync(join(project(v), 'src/app.ts'), typedApp(entry));
      assert.deepEqual(typeErrors(project(v)), []);
      // the check can fail: a string route parameter assigned to a number is an error on keel's entry too
      writeFileSync(join(project(v), 'src/wrong.ts'), `import express from '${entry}';\nexpress().get('/u/:id', (req, res) => { const id: number = req.params.id; res.send(id); });\n`);
      assert.deepEqual(typeErrors(project(v)).map((l) => /src\/wrong\.ts\(2,\d+\): error (TS\d+)/.exec(l)?.[1]), ['TS2322']);
      rmSync(join(project(v), 'src/wrong.ts'));
    });

    it(`should give Router, json, urlencoded and Route by name from ${entry}, as functions, to import and to require()`, () => {
      const esm = run(process.execPath, ['--input-type=module', '-e', `import { Router, json, urlencoded, Route } from '${entry}'; console.log([Router, json, urlencoded, Route].map((f) => typeof f).join(' '));`], project(v));
      assert.equal(esm.out.trim(), 'function function function function');
      const cjs = run(process.execPath, ['--input-type=commonjs', '-e', `const { Router, json, urlencoded, Route } = require('${entry}'); const same = require('${entry}') === require('${entry}'); import('${entry}').then((m) => console.log([Router, json, urlencoded, Route].map((f) => typeof f).join(' '), same && m.default === require('${entry}')));`], project(v));
      assert.equal(cjs.out.trim(), 'function function function function true');
    });
  }

  it('should pass a Jest 29 test file with the default configuration that require()s both entries and serves a routed request through supertest', () => {
    writeFileSync(join(project('v4'), 'app.test.js'), JEST_TEST);
    const r = run(process.execPath, [JEST, '--ci', '--rootDir', project('v4')], project('v4'), 180_000);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /Tests:\s+2 passed, 2 total/, r.out);
  });

  it("should resolve `express` to keel/express4 in Jest with moduleNameMapper (docs/express-engine.md)", () => {
    writeFileSync(join(project('v4'), 'mapped.test.js'), `
const request = require('supertest');
test('require("express") is keel/express4', async () => {
  const express = require('express');
  expect(express).toBe(require('keel/express4'));
  const app = express();
  app.get('/users/:id?', (req, res) => res.send(req.params.id || 'all'));
  expect((await request(app).get('/users')).text).toBe('all');
});
`);
    const config = JSON.stringify({ rootDir: project('v4'), moduleNameMapper: { '^express$': 'keel/express4' } });
    const r = run(process.execPath, [JEST, '--ci', '--config', config, 'mapped.test.js'], project('v4'), 180_000);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /Tests:\s+1 passed, 1 total/, r.out);
  });

  it('should resolve `express` to keel/express4 through a local package named express, with @types/express still typing the app (docs/express-engine.md)', () => {
    const vendor = join(project('v4'), 'vendor', 'express');
    mkdirSync(vendor, { recursive: true });
    writeFileSync(join(vendor, 'package.json'), JSON.stringify({ name: 'express', version: '4.99.0', main: 'index.js' }));
    writeFileSync(join(vendor, 'index.js'), "module.exports = require('keel/express4');\n");
    const installed = run(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', 'express@file:./vendor/express'], project('v4'), INSTALL_TIMEOUT_MS);
    assert.equal(installed.status, 0, installed.out);
    const same = run(process.execPath, ['-e', "console.log(require('express') === require('keel/express4'), typeof require('express').Router)"], project('v4'));
    assert.equal(same.out.trim(), 'true function');
    writeFileSync(join(project('v4'), 'src/app.ts'), typedApp('express'));
    assert.deepEqual(typeErrors(project('v4')), []);
  });
});

