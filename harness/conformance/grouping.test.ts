/**
 * Grouping never changes a verdict: a server that routes correctly gets the same verdict for every
 * routing case whether the cases share servers (`--group route`, the default), share one per handler
 * definition, or get one each. The servers are real Python standard-library servers (not keel).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../test/helpers/conformance-cli.js';
import { dependsOnServerShape, EXEC_GROUPINGS, planGroups } from './grouping.js';
import { loadSuite } from './suite/index.js';
import { isRunnable, type ConformanceCase } from './types.js';

const python = spawnSync('python3', ['--version']).status === 0;
const ROUTING_SERVER = fileURLToPath(new URL('../../test/conformance-example/routing.py', import.meta.url));
const DOC = readFileSync(new URL('../../docs/conformance.md', import.meta.url), 'utf8');

const mk = (id: string, handler: [string, string], request: [string, string], status = 200, headers?: Record<string, string>): ConformanceCase => ({
  id, category: 'c', name: id, source: id,
  handler: { method: handler[0], route: handler[1] },
  request: { method: request[0], path: request[1] },
  expected: { status_code: status, ...(headers ? { headers } : {}) },
  extra: {},
});

describe('dependsOnServerShape', () => {
  it('should hold for 404, 405, Allow, HEAD, OPTIONS and requests that miss their own route', () => {
    assert.equal(dependsOnServerShape(mk('a', ['GET', '/t'], ['GET', '/t'])), false);
    assert.equal(dependsOnServerShape(mk('b', ['GET', '/t'], ['DELETE', '/t'], 405)), true);
    assert.equal(dependsOnServerShape(mk('c', ['GET', '/t'], ['GET', '/nothing'], 404)), true);
    assert.equal(dependsOnServerShape(mk('d', ['GET', '/t'], ['HEAD', '/t'])), true);
    assert.equal(dependsOnServerShape(mk('e', ['GET', '/t'], ['OPTIONS', '/t'], 204)), true);
    assert.equal(dependsOnServerShape(mk('f', ['GET', '/t/{id:int}'], ['GET', '/t/7'], 200, { allow: 'GET' })), true);
    assert.equal(dependsOnServerShape(mk('g', ['GET', '/t/{id:int}'], ['GET', '/t/7?x=1'])), false);
  });
});

describe('planGroups under --group route', () => {
  it('should keep a 405 case away from a route serving the method it expects refused', () => {
    const refused = mk('refused', ['GET', '/things'], ['POST', '/things'], 405, { Allow: 'GET, HEAD' });
    const created = mk('created', ['POST', '/things'], ['POST', '/things'], 201);
    const listed = mk('listed', ['GET', '/things'], ['GET', '/things']);
    const groups = planGroups([refused, created, listed]).map((g) => g.map((c) => c.id));
    assert.deepEqual(groups, [['refused', 'listed'], ['created']]);
  });

  it('should not group two routes that both take one request (a static segment against a placeholder)', () => {
    const item = mk('item', ['GET', '/things/{id}'], ['GET', '/things/special']);
    const special = mk('special', ['GET', '/things/special'], ['GET', '/things/special']);
    const other = mk('other', ['GET', '/other'], ['GET', '/other']);
    assert.deepEqual(planGroups([item, special, other]).map((g) => g.map((c) => c.id)), [['item', 'other'], ['special']]);
  });

  it('should give every shape-dependent case of the shipped suite a group of its own handler definition only', () => {
    const cases = loadSuite().filter(isRunnable) as ConformanceCase[];
    for (const group of planGroups(cases)) {
      if (!group.some(dependsOnServerShape)) continue;
      assert.equal(new Set(group.map((c) => JSON.stringify(c.handler))).size, 1, group.map((c) => c.id).join(', '));
    }
  });
});

/** Each routing case's verdict (id → status) under `--group mode`, from `--json`. */
async function verdicts(command: string, mode: string, dir: string): Promise<Map<string, string>> {
  const json = join(dir, `${mode}.json`);
  const r = await runCli(['--exec', command, '--group', mode, '--filter', 'keel/routing/', '--quiet', '--no-diffs', '--exit-zero', '--json', json]);
  assert.equal(r.code, 0, r.err);
  const cases = (JSON.parse(readFileSync(json, 'utf8')) as { cases: Array<{ id: string; status: string }> }).cases;
  return new Map(cases.map((c) => [c.id, c.status]));
}

describe('when a server that routes correctly runs the routing cases under every --group mode', { skip: python ? false : 'python3 is not installed' }, () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'keel-grouping-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('should pass every routing case, with identical verdicts in each mode', { timeout: 300_000 }, async () => {
    const results = [];
    for (const mode of EXEC_GROUPINGS) results.push([mode, await verdicts(`python3 ${ROUTING_SERVER} {case_file} {port}`, mode, dir)] as const);
    const [, oneEach] = results.find(([m]) => m === 'case')!;
    assert.ok(oneEach.size >= 27, `${oneEach.size} routing cases`);
    assert.deepEqual([...oneEach.values()].filter((s) => s !== 'passed'), [], 'a correct server passes every routing case');
    for (const [mode, got] of results) assert.deepEqual(Object.fromEntries(got), Object.fromEntries(oneEach), `--group ${mode}`);
  });

  it('should give docs/conformance.md\'s Python example the verdicts of one server per case under the default grouping', { timeout: 300_000 }, async () => {
    const at = DOC.indexOf('<!-- python-example');
    const m = /```python\n([\s\S]*?)```/.exec(DOC.slice(at));
    assert.ok(at >= 0 && m, 'docs/conformance.md has the python-example block');
    writeFileSync(join(dir, 'serve.py'), m[1]!);
    const command = `python3 ${join(dir, 'serve.py')} {case_file} {port}`;
    const byDefault = await verdicts(command, 'route', dir);
    const oneEach = await verdicts(command, 'case', dir);
    assert.deepEqual(Object.fromEntries(byDefault), Object.fromEntries(oneEach));
  });
});
