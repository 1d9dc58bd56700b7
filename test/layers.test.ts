// The layer check `npm test` runs (scripts/layers.mjs, docs/architecture.md "Layers"), on small trees written for
// each case: every way an import can run up is reported, naming the file, the specifier and the layers.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkLayers } from '../scripts/layers.mjs';

const made: string[] = [];
after(() => { for (const dir of made) rmSync(dir, { recursive: true, force: true }); });

/** A repository of `files` (path → source) beside the one index a layered lib/ keeps at its root. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'keel-layers-'));
  made.push(root);
  const all: Record<string, string> = {
    'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
    'lib/index.ts': "export * from './app/app.js';\n",
    'lib/app/app.ts': "import { body } from '../http/body.js';\nexport const app = body;\n",
    'lib/http/body.ts': 'export const body = 1;\n',
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}
const problemsOf = async (files: Record<string, string>): Promise<string[]> => (await checkLayers(tree(files))).problems;

describe('when every import runs down the layers', () => {
  it('should report nothing', async () => {
    assert.deepEqual(await problemsOf({
      'middleware/cors/index.ts': "import { body } from '../../lib/http/body.js';\nexport const cors = body;\n",
      'lib/server/server.ts': "import { cors } from '../../middleware/cors/index.js';\nexport const s = cors;\n",
      'lib/graphql/install.ts': "import { app } from '../app/app.js';\nexport const g = app;\n",
      'express/index.ts': "import { s } from '../lib/server/server.js';\nexport default s;\n",
    }), []);
  });

  it('should let a test file import anything', async () => {
    assert.deepEqual(await problemsOf({ 'lib/http/body.test.ts': "import { app } from '../app/app.js';\nvoid app;\n" }), []);
  });
});

describe('when an import runs up', () => {
  it('should name the file, the specifier and both layers', async () => {
    const problems = await problemsOf({ 'lib/http/reject.ts': "import { app } from '../app/app.js';\nexport const r = app;\n" });
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /^lib\/http\/reject\.ts imports '\.\.\/app\/app\.js' \(lib\/app\/app\.ts\): foundation \(lib\/http\/\) may not import app \(lib\/app\/\)/);
  });

  it('should count a type-only import', async () => {
    const problems = await problemsOf({ 'lib/server/server.ts': "import type { app } from '../app/app.js';\nexport type S = typeof app;\n" });
    assert.match(problems.join('\n'), /lib\/server\/server\.ts imports '\.\.\/app\/app\.js'.*server \(lib\/server\/\) may not import app/);
  });

  it('should count an import()', async () => {
    const problems = await problemsOf({ 'lib/ops/log.ts': "export const load = () => import('../server/server.js');\n", 'lib/server/server.ts': 'export const s = 1;\n' });
    assert.match(problems.join('\n'), /lib\/ops\/log\.ts imports '\.\.\/server\/server\.js'.*ops \(lib\/ops\/\) may not import server/);
  });

  it('should find it through a protocol folder', async () => {
    const problems = await problemsOf({
      'lib/http/problem.ts': "import { span } from '../observability/spans.js';\nexport const p = span;\n",
      'lib/observability/spans.ts': "import { app } from '../app/app.js';\nexport const span = app;\n",
    });
    assert.match(problems.join('\n'), /lib\/observability\/spans\.ts imports '\.\.\/app\/app\.js' \(lib\/app\/app\.ts\), reached from lib\/http\/problem\.ts: foundation/);
  });

  it('should refuse middleware importing the App', async () => {
    const problems = await problemsOf({ 'middleware/cors/index.ts': "import { app } from '../../lib/app/app.js';\nexport const cors = app;\n" });
    assert.match(problems.join('\n'), /middleware\/cors\/index\.ts imports .*middleware \(middleware\/\) may not import app \(lib\/app\/\)/);
  });
});

describe('when something middleware imports imports middleware', () => {
  it('should name the chain back into middleware/', async () => {
    const problems = await problemsOf({
      'middleware/rate-limit/index.ts': "import { observe } from '../../lib/observability/observe.js';\nexport const rl = observe;\n",
      'lib/observability/observe.ts': "import { trace } from '../../middleware/http-trace/index.js';\nexport const observe = trace;\n",
      'middleware/http-trace/index.ts': 'export const trace = 1;\n',
    });
    assert.match(problems.join('\n'), /lib\/observability\/observe\.ts imports '\.\.\/\.\.\/middleware\/http-trace\/index\.js' .*is imported by middleware\/ \(middleware\/rate-limit\/index\.ts\)/);
  });
});

describe('when a file sits at lib/\'s root outside the layers', () => {
  it('should say where it may go', async () => {
    const problems = await problemsOf({ 'lib/stray.ts': 'export const stray = 1;\n' });
    assert.deepEqual(problems.filter((p) => p.startsWith('lib/stray.ts')), ['lib/stray.ts is in no layer: move it to lib/records/, lib/http/, lib/ops/, lib/server/, lib/app/ (or a protocol folder)']);
  });
});
