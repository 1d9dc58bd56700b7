import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// express-ws adds `ws` to the `express` it requires itself, so the app runs where `express` is a package
// re-exporting keel's entry (the zero-edit switch), with express-ws installed beside it (copied from
// node_modules, its own ws@7 with it). keel is loaded by name from the built dist/.
const root = fileURLToPath(new URL('..', import.meta.url));
const built = existsSync(join(root, 'dist', 'express', 'express4.cjs'));

describe('when an express-ws app runs on keel/express4', { skip: built ? false : 'dist/ is not built (run npm run build)' }, () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'keel-express-ws-'));
    const modules = join(dir, 'node_modules');
    mkdirSync(join(modules, 'express'), { recursive: true });
    symlinkSync(root, join(modules, 'keel'), 'dir');
    writeFileSync(join(modules, 'express', 'package.json'), JSON.stringify({ name: 'express', version: '4.21.2', main: 'index.js' }));
    writeFileSync(join(modules, 'express', 'index.js'), "module.exports = require('keel/express4');\n");
    cpSync(join(root, 'node_modules', 'express-ws'), join(modules, 'express-ws'), { recursive: true });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('should give routers Router#ws and carry a WebSocket message through a mounted router', () => {
    const r = spawnSync(process.execPath, [join(root, 'express', 'fixtures', 'ws-app.cjs')], {
      cwd: dir, encoding: 'utf8', timeout: 30_000, env: { ...process.env, NODE_ENV: 'test', EXPRESS: 'express' },
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.deepEqual(JSON.parse(r.stdout.trim()), { routerHasWs: true, echoed: 'middleware: hello' });
  });
});
