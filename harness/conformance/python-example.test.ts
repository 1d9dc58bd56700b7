// keel:integration
/**
 * docs/conformance.md's Python standard-library server, run as written there against the shipped
 * suite: it must start, route, answer the handlers' answers, and end with the figures the page gives
 * (it fails the framework-owned cases, which is what the page says it shows).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../test/helpers/conformance-cli.js';

const DOC = readFileSync(new URL('../../docs/conformance.md', import.meta.url), 'utf8');
const python = spawnSync('python3', ['--version']).status === 0;

/** The ```python block after the page's python-example marker. */
function example(): string {
  const at = DOC.indexOf('<!-- python-example');
  const m = /```python\n([\s\S]*?)```/.exec(DOC.slice(at));
  assert.ok(at >= 0 && m, 'docs/conformance.md has the python-example block');
  return m[1]!;
}

describe('when docs/conformance.md\'s Python server runs the shipped suite', { skip: python ? false : 'python3 is not installed' }, () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'keel-python-example-'));
    writeFileSync(join(dir, 'serve.py'), example());
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('should end with the summary the page states, failing the cases the framework owns', { timeout: 300_000 }, async () => {
    const claimed = /ends `(\d+ passed, \d+ failed, \d+ skipped)` \(exit\s+code 1\)/.exec(DOC);
    assert.ok(claimed, 'the page states the summary line');
    const r = await runCli(['--exec', `python3 ${join(dir, 'serve.py')} {case_file} {port}`, '--quiet', '--no-diffs']);
    assert.equal(r.code, 1, r.err);
    assert.equal(r.last, claimed[1], r.out.slice(-3000));
    assert.match(r.out, /^validation_query +(\d+) +\1 +0 +0 /m, 'in-bound values pass, every 422 fails (one of each per keyword)');
  });
});
