/**
 * keel's published declarations in strict TypeScript projects (tsc --noEmit, no skipLibCheck):
 * an Express 4 app and an Express 5 app (the `express` module mapped to @types/express 4 or 5)
 * read `req.auth`, `req.requestId`, `req.traceContext`, `req.apiKey` without casts and use the
 * factories' `onReject` and problemHandler(); a project without Express's types compiles too.
 *
 * The declarations are emitted from the sources first (as `npm pack` would ship them in dist/),
 * into test-output/, so the test never reads a stale dist/.
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const OUT = join(ROOT, 'test-output', 'types-dist');
const TSC = join(ROOT, 'node_modules', '.bin', 'tsc');

function tsc(args: string[]): { status: number | null; output: string } {
  const r = spawnSync(TSC, args, { cwd: ROOT, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** Type-check one fixture in a strict project of its own; `express` maps to the given types package. */
function check(fixture: string, express: '@types/express' | '@types/express4' | null): { status: number | null; output: string } {
  const dir = join(ROOT, 'test-output', 'types-projects', `${fixture.replace(/\W/g, '-')}-${express?.replace(/\W/g, '') ?? 'none'}`);
  mkdirSync(dir, { recursive: true });
  const paths: Record<string, string[]> = {
    keel: [join(OUT, 'lib', 'index.d.ts')],
    'keel/middleware/*': [join(OUT, 'middleware', '*', 'index.d.ts')],
  };
  if (express) paths.express = [join(ROOT, 'node_modules', express, 'index.d.ts')];
  const config = {
    compilerOptions: {
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2023'],
      types: ['node'],
      paths,
    },
    files: [join(ROOT, 'test', 'types', fixture)],
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(config, null, 2));
  return tsc(['-p', join(dir, 'tsconfig.json')]);
}

/**
 * Type-check a typed Express app whose import was switched to keel's entry: `express` maps to @types/express 5 or 4
 * (as in an Express 5 or 4 app) and `keel/express`/`keel/express4` to the declarations the package ships
 * (express/entries, copied to dist/express by the build, reached through package.json "exports"). The fixtures import 'keel/express'; for Express 4 the copy
 * compiled imports 'keel/express4' instead, as the app would.
 */
function checkSwitched(fixtures: string[], major: 4 | 5): { status: number | null; output: string } {
  const dir = join(ROOT, 'test-output', 'types-projects', `switched-${fixtures.map((f) => f.replace(/\W/g, '-')).join('-')}-${major}`);
  mkdirSync(dir, { recursive: true });
  const files = fixtures.map((fixture) => {
    const file = join(dir, fixture);
    const source = readFileSync(join(ROOT, 'test', 'types', fixture), 'utf8');
    writeFileSync(file, major === 4 ? source.replace(/'keel\/express'/g, "'keel/express4'") : source);
    return file;
  });
  const config = {
    compilerOptions: {
      strict: true, noEmit: true, skipLibCheck: false, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023'], types: ['node'],
      paths: {
        express: [join(ROOT, 'node_modules', major === 4 ? '@types/express4' : '@types/express', 'index.d.ts')],
      },
    },
    files,
  };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(config, null, 2));
  // keel's package.json "exports" for the two entries (import and require conditions), over the files the build ships
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  const keel = join(dir, 'node_modules', 'keel');
  mkdirSync(keel, { recursive: true });
  const exports = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).exports as Record<string, unknown>;
  const entries = JSON.stringify({ './express': exports['./express'], './express4': exports['./express4'] }).replaceAll('./dist/express/', './entries/');
  writeFileSync(join(keel, 'package.json'), JSON.stringify({ name: 'keel', type: 'module', exports: JSON.parse(entries) }));
  rmSync(join(keel, 'entries'), { force: true });
  symlinkSync(join(ROOT, 'express', 'entries'), join(keel, 'entries'));
  return tsc(['-p', join(dir, 'tsconfig.json')]);
}

/** Errors in keel's declarations or in the fixture (a dependency's own .d.ts is not ours to judge). */
function ourErrors(output: string): string[] {
  return output.split('\n').filter((l) => /error TS\d+/.test(l) && (l.includes('test-output/types-dist') || l.includes('test/types/')));
}

describe('when a strict TypeScript project uses keel', () => {
  before(() => {
    const r = tsc(['-p', 'tsconfig.build.json', '--emitDeclarationOnly', '--outDir', OUT]);
    assert.equal(r.status, 0, r.output);
  });

  for (const types of ['@types/express', '@types/express4'] as const) {
    const version = types === '@types/express' ? 'Express 5' : 'Express 4';
    it(`should type-check a strict ${version} app using the factories, onReject and problemHandler() without casts`, () => {
      const r = check('express-app.ts', types);
      assert.deepEqual(ourErrors(r.output), [], r.output);
    });

    it(`should still report req.auth as unknown on ${version}'s Request without keel (the check can fail)`, () => {
      const r = check('no-keel.ts', types);
      const errors = ourErrors(r.output);
      assert.equal(errors.length, 2, r.output);
      assert.ok(errors.every((e) => e.includes('TS2339')), r.output);
    });
  }

  it('should refuse a literal route schema that is not JSON Schema, keeping every line of test/types/schema-check.types.ts as it expects', () => {
    // Each `@ts-expect-error` there must stay an error: an unused one is itself reported here.
    const r = check('schema-check.types.ts', null);
    assert.deepEqual(ourErrors(r.output), [], r.output);
  });

  it('should type-check a project on node:http alone, without Express types', () => {
    const r = check('no-express-types.ts', null);
    assert.deepEqual(ourErrors(r.output), [], r.output);
    assert.doesNotMatch(r.output, /express-serve-static-core|@types\/express/);
  });

  it('should refuse every marked line of test/types/typed-api-errors.types.ts, and only those (each fails for itself)', () => {
    // `@ts-expect-error` alone would be satisfied by a line that fails for another reason or by one
    // error among several lines; compiled without the marks, the errors must be exactly the marked lines.
    const source = readFileSync(join(ROOT, 'test', 'types', 'typed-api-errors.types.ts'), 'utf8').split('\n');
    const marked = source.flatMap((line, i) => (/^\s*\/\/ @ts-expect-error/.test(line) ? [i + 2] : []));
    assert.ok(marked.length >= 15, `${marked.length} marked lines`);
    const dir = join(ROOT, 'test-output', 'types-projects', 'typed-api-errors-unmarked');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'unmarked.ts');
    writeFileSync(file, source.map((line) => (/^\s*\/\/ @ts-expect-error/.test(line) ? '' : line.replace("'../../lib/index.js'", `'${join(ROOT, 'lib', 'index.js')}'`))).join('\n'));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ extends: join(ROOT, 'tsconfig.json'), compilerOptions: { noEmit: true, rootDir: ROOT }, files: [file], include: [] }));
    const r = tsc(['-p', join(dir, 'tsconfig.json')]);
    const lines = [...new Set(r.output.split('\n').flatMap((l) => { const m = /unmarked\.ts\((\d+),\d+\): error TS/.exec(l); return m ? [Number(m[1])] : []; }))];
    assert.deepEqual(lines.sort((a, b) => a - b), marked, r.output);
    // Block-bodied handlers (docs/routes.md): each error at its member or response(...) argument in at most 3 lines.
    const first = source.findIndex((l) => l.includes('---- block-bodied handlers')) + 1;
    const last = source.findIndex((l) => l.includes('---- end of block-bodied handlers')) + 1;
    const out = r.output.split('\n');
    const blockErrors = out.flatMap((l, i) => { const m = /unmarked\.ts\((\d+),\d+\): error TS/.exec(l); return m && Number(m[1]) > first && Number(m[1]) < last ? [i] : []; });
    assert.equal(blockErrors.length, marked.filter((n) => n > first && n < last).length, r.output);
    for (const i of blockErrors) {
      let n = 1;
      while (i + n < out.length && /^\s/.test(out[i + n]!)) n++;
      assert.ok(n <= 3, `${n} lines:\n${out.slice(i, i + n).join('\n')}`);
    }
  });

  for (const major of [5, 4] as const) {
    const entry = major === 5 ? 'keel/express' : 'keel/express4';
    it(`should type-check a strict Express ${major} app (inline handlers, Router(), express.json(), error handlers, req.params) with only the import switched to ${entry}`, () => {
      const r = checkSwitched(['keel-express-app.ts', 'keel-express4-app.cts'], major);
      assert.equal(r.status, 0, r.output);
      assert.doesNotMatch(r.output, /error TS/);
    });

    it(`should keep @types/express ${major}'s checks on ${entry}: a wrong parameter type, status and option fail, and nothing else`, () => {
      const r = checkSwitched(['keel-express-app-wrong.ts'], major);
      const codes = r.output.split('\n').flatMap((l) => { const m = /keel-express-app-wrong\.ts\((\d+),\d+\): error (TS\d+)/.exec(l); return m ? [`${m[1]}:${m[2]}`] : []; });
      assert.deepEqual(codes, ['6:TS2322', '7:TS2345', '9:TS2322'], r.output);
      assert.equal(r.output.split('\n').filter((l) => /error TS/.test(l)).length, 3, r.output);
    });
  }
});
