// keel:integration
/**
 * keel's types under every TypeScript module setting users have (issue 43 item 2), checked from outside the
 * repository: test/types/legacy-app.ts (Express with six factories, keel/express, createApp, keel/jsonrpc,
 * keel/harness) in a consumer project whose node_modules/keel is the packed tarball (test/legacy/consumer.ts),
 * strict, skipLibCheck false, each setting with the current TypeScript (the repo's `typescript`) and TypeScript 5
 * (test/legacy/typescript5):
 * - "module": "commonjs" — TypeScript 5 then resolves as node10, which reads no "exports": package.json
 *   "typesVersions" maps keel/middleware/*, the protocol subpaths, keel/express* and keel/harness;
 * - node16 and nodenext, from a CommonJS file (.ts in a "type": "commonjs" project: the "require" condition's
 *   declarations) and from an ES module (.mts: the "import" condition's index.d.mts);
 * - "moduleResolution": "bundler".
 * The CommonJS settings also check test/types/legacy-require.ts: `import cors = require('keel/middleware/cors')`, the
 * factory callable and its types on it, as @types/cors declares the package (scripts/build-cjs-types.mjs).
 * The fixture's @ts-expect-error lines fail the check if a module resolved to `any`.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { consumer, ROOT, SKIP, type Consumer } from '../legacy/consumer.js';

/** One tsc run: TypeScript 5 with skipLibCheck off reads @types/node, Express's and keel's declarations (~10 s CPU). */
const TSC_TIMEOUT_MS = 120_000;

/** Each compiler's package folder: the repository's TypeScript, and TypeScript 5 nested under test/legacy/typescript5. */
const COMPILERS = { current: join(ROOT, 'node_modules/typescript'), 'TypeScript 5': join(ROOT, 'test/legacy/typescript5/node_modules/typescript') } as const;

/** Each setting: its compiler options and the fixture copies it checks (src/ is CommonJS, esm/*.mts ES modules). */
const SETTINGS: Record<string, { options: Record<string, unknown>; files: string[]; compilers: (keyof typeof COMPILERS)[] }> = {
  'commonjs (node10)': { options: { module: 'commonjs' }, files: ['src/app.ts', 'src/require.ts'], compilers: ['current', 'TypeScript 5'] },
  node16: { options: { module: 'node16' }, files: ['src/app.ts', 'src/require.ts', 'esm/app.mts'], compilers: ['current'] },
  nodenext: { options: { module: 'nodenext' }, files: ['src/app.ts', 'src/require.ts', 'esm/app.mts'], compilers: ['current', 'TypeScript 5'] },
  bundler: { options: { module: 'esnext', moduleResolution: 'bundler' }, files: ['src/app.ts'], compilers: ['current'] },
};

function tsc(dir: string, compiler: string, project: string): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(compiler, 'bin', 'tsc'), '-p', project], { cwd: dir, timeout: TSC_TIMEOUT_MS });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (out += d));
    child.on('close', (status) => resolve({ status, out }));
  });
}

describe('when a TypeScript app imports keel under each module setting', { skip: SKIP, timeout: 4 * TSC_TIMEOUT_MS }, () => {
  let app: Consumer;
  const results = new Map<string, Promise<{ status: number | null; out: string }>>();

  before(() => {
    app = consumer({});
    mkdirSync(join(app.dir, 'src'));
    mkdirSync(join(app.dir, 'esm'));
    copyFileSync(join(ROOT, 'test/types/legacy-app.ts'), join(app.dir, 'src/app.ts'));
    copyFileSync(join(ROOT, 'test/types/legacy-app.ts'), join(app.dir, 'esm/app.mts'));
    copyFileSync(join(ROOT, 'test/types/legacy-require.ts'), join(app.dir, 'src/require.ts'));
    // Two checks at a time (CI has two cores); each test awaits its own.
    const queue: (() => Promise<unknown>)[] = [];
    for (const [name, { options, files, compilers }] of Object.entries(SETTINGS)) {
      const project = `tsconfig.${name.replace(/\W+/g, '-')}.json`;
      writeFileSync(join(app.dir, project), JSON.stringify({
        compilerOptions: { ...options, target: 'ES2022', strict: true, skipLibCheck: false, noEmit: true, esModuleInterop: true, types: ['node'] },
        files,
      }, null, 2));
      for (const compiler of compilers) {
        let start!: () => void;
        const started = new Promise<void>((r) => (start = r));
        results.set(`${name} ${compiler}`, started.then(() => tsc(app.dir, COMPILERS[compiler], project)));
        queue.push(() => (start(), results.get(`${name} ${compiler}`)!));
      }
    }
    const worker = async (): Promise<void> => {
      for (let job = queue.shift(); job; job = queue.shift()) await job();
    };
    void Promise.all([worker(), worker()]);
  });

  after(() => app?.remove());

  for (const [name, { compilers }] of Object.entries(SETTINGS)) {
    for (const compiler of compilers) {
      it(`should type-check with 0 errors under ${name}, ${compiler === 'current' ? 'the current TypeScript' : compiler}`, async () => {
        const r = await results.get(`${name} ${compiler}`)!;
        assert.equal(r.status, 0, r.out);
        assert.doesNotMatch(r.out, /error TS/);
      });
    }
  }

  it('should fail when the app misuses a factory (the check can fail)', async () => {
    writeFileSync(join(app.dir, 'src/wrong.ts'), "import { cors } from 'keel/middleware/cors';\ncors({ allowed_origins: 42 });\n");
    writeFileSync(join(app.dir, 'tsconfig.wrong.json'), JSON.stringify({ compilerOptions: { module: 'commonjs', strict: true, noEmit: true, types: ['node'] }, files: ['src/wrong.ts'] }));
    const r = await tsc(app.dir, COMPILERS.current, 'tsconfig.wrong.json');
    assert.match(r.out, /src\/wrong\.ts\(2,.*error TS2322/);
  });
});
