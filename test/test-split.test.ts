/**
 * `npm test`'s two sets (scripts/test.mjs): the integration suites, marked `// keel:integration`, run under CI or with
 * --all / --integration; a plain `npm test` runs the rest, so a newcomer's run has a length they can plan for.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const list = (args: string[], env: Record<string, string | undefined> = {}) => {
  const r = spawnSync(process.execPath, ['scripts/test.mjs', '--list', ...args], { cwd: root, encoding: 'utf8', env: { ...process.env, CI: '', ...env } });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim().split('\n');
};

describe('when npm test chooses its files', () => {
  const fast = list([]);
  const integration = list(['--integration']);
  it('should leave the integration suites out of a plain run', () => {
    assert.ok(fast.some((f) => f.endsWith('test/records.test.ts')));
    assert.ok(!fast.some((f) => f.endsWith('test/package-install.test.ts')));
  });
  it('should run only the marked suites with --integration', () => {
    assert.ok(integration.some((f) => f.endsWith('test/package-install.test.ts')));
    assert.ok(!integration.some((f) => f.endsWith('test/records.test.ts')));
  });
  it('should run both sets, and nothing else, under CI or --all', () => {
    const expected = [...fast, ...integration].sort();
    assert.deepEqual(list([], { CI: 'true' }), expected);
    assert.deepEqual(list(['--all']), expected);
  });
});
