// keel:integration
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runSentryApp } from '../test/helpers/sentry-app.js';

// The zero-edit switch: `npm run pack:express` (scripts/pack-express.mjs) packs keel's engine as two packages, each
// installed here *as* `express` in a fresh project, with npm itself (offline: the alias depends only on keel, which
// the project has as a link to this checkout). Packages the apps use resolve from the project (express-async-errors,
// copied in, requires `express/lib/router/layer` from there), then from the repository (@sentry/node, NODE_PATH).
const root = fileURLToPath(new URL('..', import.meta.url));
const fixtures = join(root, 'express', 'fixtures');
const built = existsSync(join(root, 'dist', 'express', 'express4.cjs'));
const readJson = (file: string) => JSON.parse(spawnSync(process.execPath, ['-p', `JSON.stringify(require(${JSON.stringify(file)}))`], { encoding: 'utf8' }).stdout);

function run(cwd: string, args: string[], timeout = 120_000) {
  return spawnSync(args[0]!, args.slice(1), { cwd, encoding: 'utf8', timeout, env: { ...process.env, NODE_ENV: 'test', NODE_PATH: join(root, 'node_modules') } });
}

describe("when keel's alias packages are installed as express (npm run pack:express)", { skip: built ? false : 'dist/ is not built (run npm run build)' }, () => {
  let tmp: string;
  const project: Record<4 | 5, string> = { 4: '', 5: '' };
  const tarball: Record<4 | 5, string> = { 4: '', 5: '' };

  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'keel-alias-'));
    const packs = join(tmp, 'packs');
    const packed = run(root, [process.execPath, join(root, 'scripts', 'pack-express.mjs'), '--out', packs]);
    assert.equal(packed.status, 0, packed.stderr);
    for (const file of readdirSync(packs)) tarball[file.includes('express4') ? 4 : 5] = join(packs, file);
    for (const major of [4, 5] as const) {
      const dir = join(tmp, `app${major}`);
      mkdirSync(dir);
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `app${major}`, version: '1.0.0', private: true }));
      const installed = run(dir, ['npm', 'install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock',
        `express@file:${tarball[major]}`, `keel@file:${root}`]);
      assert.equal(installed.status, 0, installed.stderr);
      cpSync(join(root, 'node_modules', 'express-async-errors'), join(dir, 'node_modules', 'express-async-errors'), { recursive: true });
      project[major] = dir;
    }
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('should write one package per major, the Express 4 one named express4, at a version of that major', () => {
    assert.match(tarball[4], /keel-express4-4\.\d+\.\d+\.tgz$/);
    assert.match(tarball[5], /keel-express-5\.\d+\.\d+\.tgz$/);
    for (const major of [4, 5] as const) {
      const pkg = readJson(join(project[major], 'node_modules', 'express', 'package.json'));
      assert.equal(pkg.version.split('.')[0], String(major));
      assert.deepEqual(Object.keys(pkg.dependencies), ['keel']);
    }
  });

  for (const major of [4, 5] as const) {
    const entry = major === 4 ? 'keel/express4' : 'keel/express';
    it(`should map Express's own files onto ${entry}'s objects`, () => {
      const files = ['express', 'express/lib/express', 'express/lib/application', 'express/lib/request', 'express/lib/response', 'express/lib/view', 'express/package.json',
        ...(major === 4 ? ['express/lib/router/index', 'express/lib/router/layer', 'express/lib/router/route'] : [])];
      const r = run(project[major], [process.execPath, '-e', `
        const k = require('${entry}'), parts = k[Symbol.for('keel.express.parts')];
        const same = { express: k, 'express/lib/express': k, 'express/lib/application': k.application, 'express/lib/request': k.request,
          'express/lib/response': k.response, 'express/lib/view': parts.View, 'express/lib/router/index': k.Router,
          'express/lib/router/layer': parts.Layer, 'express/lib/router/route': k.Route };
        for (const f of ${JSON.stringify(files)}) {
          const m = require(f);
          if (f !== 'express/package.json' && m !== same[f]) throw new Error(f + ' is not keel\\'s');
        }
        console.log('ok');`]);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout.trim(), 'ok');
    });

    it(`should have Sentry 11 name the transaction "GET /api/users/:id" (source route) with Express spans (${entry} as express)`, () => {
      const ok = runSentryApp(project[major], 'express');
      assert.equal(ok.status, 200);
      assert.equal(ok.transaction, 'GET /api/users/:id');
      assert.equal(ok.source, 'route');
      assert.deepEqual(ok.spans, ['middleware stamp', `router ${major === 4 ? '/api' : '/'}`, 'handler /api/users/:id']);
      const fail = runSentryApp(project[major], 'express', { env: { REQUEST_PATH: '/api/fail' } });
      assert.equal(fail.transaction, 'GET /api/fail');
      assert.deepEqual(fail.errors, ['boom auto.http.express']);
    });
  }

  it('should let express-async-errors turn an async throw into the error handler\'s 500 (Express 4), without KEEL_EXPRESS_PATCHED', () => {
    const r = run(project[4], [process.execPath, join(fixtures, 'alias-async-errors.cjs')], 60_000);
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /KEEL_EXPRESS_PATCHED|patched Express/);
    const out = JSON.parse(r.stdout.trim());
    assert.deepEqual(out.answers, ['500 {"caught":"async boom"}', '200 7', '500 {"caught":"bad id"}']);
    assert.equal(out.patched, true);
    assert.equal(out.engineLayer, true);
    // Express 4's names: a route's layer is route.dispatch bound, a mounted router is 'router'
    assert.deepEqual(out.layers, ['bound dispatch', 'router', '<anonymous>']);
  });

  it('should leave express-async-errors unable to load on the Express 5 package, as on Express 5 (which has no lib/router)', () => {
    const r = run(project[5], [process.execPath, '-e', "require('express-async-errors')"], 60_000);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /Cannot find module 'express\/lib\/router\/layer'/);
  });
});
