// keel:integration
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runSentryApp, type SentryRun } from '../test/helpers/sentry-app.js';

// Sentry 11's Express integration subscribes to the diagnostics channels its loader injects into Express's files
// (orchestrion:express:* for Express 4, orchestrion:router:* for Express 5's router); keel's engines publish them
// (router/channels.ts). The app (fixtures/sentry-app.cjs) runs in a child process, Sentry initialised first, with a
// transport that sends nothing; it prints the transaction and the errors Sentry captured.
const root = fileURLToPath(new URL('..', import.meta.url));
const built = existsSync(join(root, 'dist', 'express', 'express4.cjs'));

describe('when an app traced by Sentry 11 imports keel/express or keel/express4', { skip: built ? false : 'dist/ is not built (run npm run build)' }, () => {
  let tmp: string;
  /** A directory where `express` is the real Express 4 (the repository has it as `express4`). */
  let express4Dir: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'keel-sentry-'));
    express4Dir = join(tmp, 'express4');
    mkdirSync(join(express4Dir, 'node_modules'), { recursive: true });
    symlinkSync(join(root, 'node_modules', 'express4'), join(express4Dir, 'node_modules', 'express'), 'dir');
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  /** The app on the real Express of that major (Sentry's loader rewriting its files). */
  function realExpress(major: 4 | 5, env?: Record<string, string>): SentryRun {
    if (major === 5) return runSentryApp(root, 'express', { env });
    // the link stays `node_modules/express`: Sentry's loader matches a package by its directory's name
    return runSentryApp(express4Dir, 'express', { nodeArgs: ['--preserve-symlinks'], env });
  }

  for (const [entry, major] of [['keel/express', 5], ['keel/express4', 4]] as const) {
    it(`should name the transaction by route with Express spans, as on express@${major} (${entry})`, () => {
      const run = runSentryApp(root, entry);
      assert.equal(run.status, 200);
      assert.equal(run.transaction, 'GET /api/users/:id');
      assert.equal(run.source, 'route');
      assert.deepEqual(run.spans.map((s) => s.split(' ')[0]).sort(), ['handler', 'middleware', 'router']);
      assert.deepEqual(run, realExpress(major));
    });

    it(`should capture an error passed to next once, as on express@${major} (${entry})`, () => {
      const env = { REQUEST_PATH: '/api/fail' };
      const run = runSentryApp(root, entry, { env });
      assert.equal(run.status, 500);
      assert.equal(run.transaction, 'GET /api/fail');
      assert.deepEqual(run.errors, ['boom auto.http.express']);
      assert.deepEqual(run, realExpress(major, env));
    });
  }
});
