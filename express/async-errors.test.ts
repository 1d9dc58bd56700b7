import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import express4 from './express4.js';
import express5 from './index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = existsSync(join(root, 'dist', 'express', 'express4.cjs'));

const rejecting = async () => {
  await Promise.resolve();
  throw new Error('async boom');
};
const errorHandler = (err: any, _req: any, res: any, _next: any) => res.status(500).json({ caught: err.message });

describe("when a keel/express4 app sets 'async errors' (express-async-errors' behaviour)", () => {
  it('should send the rejection of an async handler to the error handler', async () => {
    const app = express4();
    app.set('async errors', true);
    app.get('/', rejecting);
    app.use(errorHandler);
    await request(app).get('/').expect(500, { caught: 'async boom' });
  });

  it('should do it for middleware in a mounted router, an async param callback and an async error handler', async () => {
    const app = express4();
    app.enable('async errors');
    const router = express4.Router();
    router.use(async (req: any, _res: any, next: any) => {
      if (req.query.fail) await rejecting();
      next();
    });
    router.param('id', async (_req: any, _res: any, next: any, id: string) => {
      if (id === 'bad') throw new Error('bad id');
      next();
    });
    router.get('/items/:id', (req: any, res: any) => res.send(req.params.id));
    app.use('/api', router);
    app.get('/twice', rejecting);
    app.use('/twice', async (err: any, _req: any, _res: any, _next: any) => { throw new Error(`again: ${err.message}`); });
    app.use(errorHandler);
    await request(app).get('/api/items/7').expect(200, '7');
    await request(app).get('/api/items/7?fail=1').expect(500, { caught: 'async boom' });
    await request(app).get('/api/items/bad').expect(500, { caught: 'bad id' });
    await request(app).get('/twice').expect(500, { caught: 'again: async boom' });
  });

  it('should apply to a mounted sub-app, which inherits the setting as other settings', async () => {
    const app = express4();
    app.set('async errors', true);
    const sub = express4();
    sub.get('/', rejecting);
    app.use('/sub', sub);
    app.use(errorHandler);
    await request(app).get('/sub').expect(500, { caught: 'async boom' });
  });

  it('should not look at a returned promise without the setting, as Express 4', async () => {
    // the handler's own catch keeps the rejection handled: only keel's forwarding can reach the error handler
    const handler = (_req: any, res: any) => {
      setTimeout(() => { if (!res.headersSent) res.send('answered by a timer'); }, 50);
      const p = rejecting();
      p.catch(() => {});
      return p;
    };
    const app = express4().get('/', handler).use(errorHandler);
    await request(app).get('/').expect(200, 'answered by a timer');
    const enabled = express4().enable('async errors').get('/', handler).use(errorHandler);
    await request(enabled).get('/').expect(500, { caught: 'async boom' });
  });

  it('should not be needed on keel/express, which forwards rejections as Express 5', async () => {
    const app = express5();
    app.get('/', rejecting);
    app.use(errorHandler);
    await request(app).get('/').expect(500, { caught: 'async boom' });
  });
});

describe('when express-async-errors patched the real Express 4 while the app runs on keel/express4', { skip: built ? false : 'dist/ is not built (run npm run build)' }, () => {
  let dir: string;
  before(() => {
    // express is the real Express 4 here (a link to the repository's express4), express-async-errors beside it
    dir = mkdtempSync(join(tmpdir(), 'keel-async-errors-'));
    const modules = join(dir, 'node_modules');
    mkdirSync(modules, { recursive: true });
    symlinkSync(root, join(modules, 'keel'), 'dir');
    symlinkSync(join(root, 'node_modules', 'express4'), join(modules, 'express'), 'dir');
    cpSync(join(root, 'node_modules', 'express-async-errors'), join(modules, 'express-async-errors'), { recursive: true });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function run(preload: string): { stdout: string; stderr: string; status: number | null } {
    return spawnSync(process.execPath, [join(root, 'express', 'fixtures', 'async-errors-app.cjs')], {
      cwd: dir, encoding: 'utf8', timeout: 30_000, env: { ...process.env, NODE_ENV: 'test', PRELOAD: preload },
    });
  }

  it("should warn at start-up that the patch has no effect and name the 'async errors' setting", () => {
    const r = run('express-async-errors');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /KeelWarning: a package patched Express's own \S+layer\.js \(express-async-errors does\)/);
    assert.match(r.stderr, /app\.set\('async errors', true\)/);
    assert.match(r.stdout, /done/);
  });

  it('should say nothing when the real Express 4 is loaded but unpatched', () => {
    const r = run('express');
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
  });
});
