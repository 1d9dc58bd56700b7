/**
 * docs/testing.md's JWT example runs as written (its `keel` import pointed at this checkout's lib/), so the page a
 * user copies a test from stays true.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = new URL('..', import.meta.url).pathname;
const page = readFileSync(join(root, 'docs/testing.md'), 'utf8');
const block = /<!-- checked by test\/docs-testing\.test\.ts -->\n```ts\n([\s\S]*?)```/.exec(page)?.[1];
const contractBlock = /<!-- checked by test\/docs-testing\.test\.ts: contract -->\n```ts\n([\s\S]*?)```/.exec(page)?.[1];

for (const [name, code] of [['JWT route test', block], ['response contract test', contractBlock]] as const) describe(`when docs/testing.md's ${name} is run`, () => {
  it('should pass as written', async () => {
    assert.ok(code, 'docs/testing.md has the checked block');
    const block = code;
    // Inside the checkout (under test/), so `jose` resolves from its node_modules.
    // Without NODE_TEST_CONTEXT the child reports as a test run of its own (TAP), not to this runner.
    const { NODE_TEST_CONTEXT: _, ...childEnv } = process.env;
    const dir = mkdtempSync(join(root, 'test', '.docs-testing-'));
    try {
      const file = join(dir, 'jwt.test.ts');
      writeFileSync(file, block.replace(/from 'keel'/g, `from ${JSON.stringify(join(root, 'lib/index.ts'))}`));
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', file], { cwd: root, timeout: 60_000, env: childEnv });
      assert.match(stdout, /^# pass 2$/m, stdout);
      assert.match(stdout, /^# fail 0$/m, stdout);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
