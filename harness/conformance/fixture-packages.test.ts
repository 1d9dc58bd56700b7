// keel:integration
/**
 * keel-conformance in a project without keel's optional peer dependencies (`npm install keel` and nothing else):
 * the packed tarball, with only the packages of keel's "dependencies" beside it. keel's fixture app serves every
 * case it can and skips, saying which packages and how to install them, those it cannot (WebSocket and GraphQL
 * subscription cases without `ws`, `graphql`…): keel-conformance used to stop at start-up with
 * "Cannot find module 'ws'" (fixture-app.ts imported keel/ws eagerly).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, SKIP } from '../../test/legacy/consumer.js';

/** The CLI over three categories: a few seconds of cases, bounded so a hang fails instead of stalling CI. */
const RUN_TIMEOUT_MS = 120_000;

describe('when keel-conformance runs keel\'s fixture app without the optional peer dependencies', { skip: SKIP, timeout: 3 * RUN_TIMEOUT_MS }, () => {
  let base: string;
  let cli: string;

  before(() => {
    base = mkdtempSync(join(tmpdir(), 'keel-bare-'));
    const app = join(base, 'app');
    const keel = join(app, 'node_modules', 'keel');
    mkdirSync(keel, { recursive: true });
    const packed = JSON.parse(execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', base], { cwd: ROOT, encoding: 'utf8' })) as { filename: string }[];
    execFileSync('tar', ['-xzf', join(base, packed[0]!.filename), '-C', keel, '--strip-components=1']);
    // keel's own dependencies only (each resolves its own from the repository's node_modules, by its real path).
    const deps = Object.keys((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies);
    for (const dep of deps) {
      const at = join(app, 'node_modules', dep);
      mkdirSync(join(at, '..'), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules', dep), at, 'dir');
    }
    cli = join(keel, 'dist', 'harness', 'cli.js');
  });

  after(() => rmSync(base, { recursive: true, force: true }));

  it('should not find ws from the project (the premise)', () => {
    const r = spawnSync(process.execPath, ['-e', "require.resolve('ws')"], { cwd: join(base, 'app', 'node_modules', 'keel'), encoding: 'utf8' });
    assert.notEqual(r.status, 0);
  });

  it('should run the HTTP cases, skip the WebSocket ones naming the install command, and exit 0', () => {
    const r = spawnSync(process.execPath, [cli, '--filter', 'keel/routing/', '--filter', 'keel/websocket_session/', '--filter', 'keel/graphql_subscription/'], { cwd: join(base, 'app'), encoding: 'utf8', timeout: RUN_TIMEOUT_MS, env: { ...process.env, NODE_OPTIONS: '' } });
    const out = `${r.stdout}${r.stderr}`;
    assert.equal(r.status, 0, out);
    assert.match(r.stderr, /note: cases that need .*ws@8.* are skipped .*npm install .*ws@8/);
    assert.match(out, /routing\s+27\s+0\s+0\s+0\s+100\.0%/);
    assert.match(out, /websocket_session\s+0\s+0\s+0\s+8\b/);
    assert.match(out, /graphql_subscription\s+0\s+0\s+0\s+7\b/);
    assert.doesNotMatch(out, /Cannot find module/);
  });
});
