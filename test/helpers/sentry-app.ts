// Runs express/fixtures/sentry-app.cjs (an Express app traced by Sentry 11, nothing sent over the network) in a child
// process, as an app started with Sentry initialised first: express/sentry.test.ts, express/alias-packages.test.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = join(root, 'express', 'fixtures', 'sentry-app.cjs');

/** What the fixture prints: the answer, the transaction's name and source, its Express spans, the captured errors. */
export interface SentryRun { status: number; body: string; transaction?: string; source?: string; spans: string[]; errors: string[] }

/**
 * Runs the app in `cwd`, loading `express` (a module name resolved from `cwd`); @sentry/node and the other packages
 * resolve from `cwd`, then from the repository's node_modules (NODE_PATH).
 */
export function runSentryApp(cwd: string, express: string, opts: { nodeArgs?: string[]; env?: Record<string, string> } = {}): SentryRun {
  const r = spawnSync(process.execPath, [...(opts.nodeArgs ?? []), fixture], {
    cwd, encoding: 'utf8', timeout: 60_000,
    env: { ...process.env, NODE_ENV: 'test', EXPRESS: express, NODE_PATH: join(root, 'node_modules'), ...opts.env },
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as SentryRun;
}
