// keel:integration
// What a user gets from `npm install keel`: the packed tarball installed with express into a fresh
// project (npm reaches the registry, from its cache first). Runs once, bounded in time (~30-60 s).
// Sizes and counts are upper bounds measured from keel's own dependencies: a new runtime dependency
// that crosses them is a decision to make in package.json, not an accident (docs/protocols.md).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = existsSync(join(root, 'dist/lib/index.js'));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** node_modules may take at most this many bytes of disk, as `du` counts them (keel, its dependencies, express, @types/express). */
export const MAX_NODE_MODULES_BYTES = 32 * 1024 * 1024;
/**
 * ... and at most this many packages: light-my-request (app.inject()) brings 4, and keel/express4's Express 4
 * library versions (body-parser 1, send 0.19, accepts 1.3, type-is 1.6, …, installed as npm aliases) with
 * their own dependency trees most of the ~40 that keel/express added.
 */
export const MAX_PACKAGES = 170;
/**
 * How far the README's install size ("about N MB of node_modules") may be from what this install
 * measures, as a fraction of the measurement: dependency patch releases move it a little; a claim
 * off by more than this tells users something untrue.
 */
export const README_SIZE_TOLERANCE = 0.1;
/** One npm install: generous for a cold cache, bounded so a hung registry fails the test. */
const INSTALL_TIMEOUT_MS = 240_000;

function sizeOf(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = lstatSync(p);
    // Disk usage, as `du` counts it (allocated 512-byte blocks), not the files' apparent size: what the install takes.
    total += st.isDirectory() ? sizeOf(p) + st.blocks * 512 : st.blocks * 512;
  }
  return total;
}

/** Installed packages: every `node_modules/<name>` and `node_modules/@scope/<name>`, nested ones too. */
function packagesIn(modules: string): string[] {
  const found: string[] = [];
  if (!existsSync(modules)) return found;
  for (const name of readdirSync(modules)) {
    if (name.startsWith('.')) continue;
    const dirs = name.startsWith('@') ? readdirSync(join(modules, name)).map((n) => join(name, n)) : [name];
    for (const d of dirs) {
      found.push(d);
      found.push(...packagesIn(join(modules, d, 'node_modules')));
    }
  }
  return found;
}

function run(cmd: string, args: string[], cwd: string, timeout = 60_000): { status: number | null; out: string } {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout, env: { ...process.env, NODE_ENV: 'production', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' } });
  return { status: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

describe('when keel is installed from its tarball with express', { skip: built ? false : 'dist/ is not built (run npm run build)', timeout: INSTALL_TIMEOUT_MS + 120_000 }, () => {
  let dir = '';
  let installed: { status: number | null; out: string } = { status: null, out: '' };
  let files: string[] = [];

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'keel-install-'));
    // --ignore-scripts: dist/ is what `npm install` built; rebuilding it here would race other tests reading it.
    const packed = JSON.parse(execFileSync(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: root, encoding: 'utf8' })) as { filename: string; files: { path: string }[] }[];
    files = packed[0]!.files.map((f) => f.path);
    const tarball = join(dir, packed[0]!.filename);
    const project = join(dir, 'app');
    mkdirSync(join(project, 'src'), { recursive: true });
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'keel-install-check', private: true, type: 'module' }));
    installed = run(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, 'express@5', '@types/express@5'], project, INSTALL_TIMEOUT_MS);
  });

  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const project = () => join(dir, 'app');
  /** Start the App `createApp(…)` builds in the installed project: prints STARTED, or the AppError's name, kind and message. */
  const startOrSayWhy = (createAppCall: string) => run(process.execPath, ['--input-type=module', '-e', `
      const { createApp } = await import('keel');
      const app = ${createAppCall};
      try {
        const server = await app.listen({ handleSignals: false });
        await server.close();
        console.log('STARTED');
      } catch (err) {
        console.log(err.name, err.kind, err.message);
      }
    `], project());

  it('should pack the build, the schemas, the docs, the operator assets, README and LICENSE, and no tests, test helpers or source maps', () => {
    assert.ok(files.includes('LICENSE') && files.includes('README.md') && files.includes('dist/lib/index.js') && files.includes('dist/lib/index.d.ts'));
    assert.ok(files.includes('docs/configuration.md'), 'the README links docs/: they ship');
    assert.ok(files.includes('operations/grafana-dashboard.json') && files.includes('operations/prometheus-alerts.yml'), 'docs/operations.md links them: they ship');
    assert.deepEqual(files.filter((f) => !/^(dist\/(lib|middleware|harness|express)\/|schemas\/|docs\/[^/]+\.md$|docs\/img\/[^/]+\.png$|operations\/[^/]+\.(json|yml)$|package\.json$|README\.md$|LICENSE$)/.test(f)), []);
    // The alert rules' promtool cases ship beside the rules (docs/operations.md): an operator who edits a rule re-runs them.
    const promtoolCases = (f: string) => /^operations\/[^/]+\.test\.yml$/.test(f);
    assert.deepEqual(files.filter((f) => /\.test\.|testkit|h2raw|testdata|\.map$|\.tsbuildinfo$/.test(f) && !promtoolCases(f)), []);
  });

  it('should ship keel\'s own conformance suite with the runner, so `keel-conformance` needs no corpus path', () => {
    assert.ok(files.includes('dist/harness/conformance/suite/index.js'), 'the suite is in the package');
    const bin = join(project(), 'node_modules/.bin/keel-conformance');
    const r = run(bin, ['--list'], project());
    assert.equal(r.status, 0, r.out);
    const count = /^(\d+) cases to run:$/m.exec(r.out);
    assert.ok(count && Number(count[1]) >= 300, r.out.slice(0, 500));
  });

  it('should install without errors, engine warnings or an install script of keel\'s own', () => {
    assert.equal(installed.status, 0, installed.out);
    assert.doesNotMatch(installed.out, /EBADENGINE/);
    // npm warns about a tarball dependency's install-time scripts (prepare included), and npm 12 blocks them.
    assert.doesNotMatch(installed.out, /npm warn[^\n]*keel/i);
  });

  it(`should need at most ${MAX_NODE_MODULES_BYTES / 1048576} MB of node_modules and ${MAX_PACKAGES} packages`, (t) => {
    const modules = join(project(), 'node_modules');
    const bytes = sizeOf(modules);
    const packages = packagesIn(modules);
    t.diagnostic(`node_modules: ${(bytes / 1048576).toFixed(1)} MB, ${packages.length} packages`);
    assert.ok(bytes <= MAX_NODE_MODULES_BYTES, `node_modules is ${(bytes / 1048576).toFixed(1)} MB`);
    assert.ok(packages.length <= MAX_PACKAGES, `${packages.length} packages: ${packages.join(' ')}`);
    // The README tells users what this install measures: keel with express 5 and @types/express.
    const claim = /about (\d+(?:\.\d+)?) MB of node_modules/.exec(readFileSync(join(root, 'README.md'), 'utf8'));
    assert.ok(claim, 'README.md states the install size as "about N MB of node_modules"');
    const measured = bytes / 1048576;
    assert.ok(Math.abs(Number(claim[1]) - measured) <= measured * README_SIZE_TOLERANCE, `README says about ${claim[1]} MB; a fresh install measures ${measured.toFixed(1)} MB`);
    for (const heavy of ['graphql', 'graphiql', 'react', 'react-dom', 'redoc', 'swagger-ui-dist', 'swagger-ui-express', '@grpc/grpc-js', '@grpc/proto-loader', 'protobufjs', 'ws']) {
      assert.equal(packages.includes(heavy), false, `${heavy} is not installed`);
    }
  });

  it('should let a middleware factory be imported on its own', () => {
    const r = run(process.execPath, ['--input-type=module', '-e', "const { cors } = await import('keel/middleware/cors'); console.log(typeof cors(), cors({ allowed_origins: ['https://a.example'] }).name)"], project());
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /^function \w+/m);
  });

  it('should type-check an app with skipLibCheck: false', () => {
    writeFileSync(join(project(), 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noEmit: true, types: ['node'] },
      include: ['src'],
    }));
    writeFileSync(join(project(), 'src/app.ts'), `
import express from 'express';
import { createApp, AppError, type ServerHandle } from 'keel';
import { cors } from 'keel/middleware/cors';
import { rateLimit } from 'keel/middleware/rate-limit';

const app = createApp({ port: 0 }, (a) => {
  a.get('/hello/{name}', (data) => ({ hello: data.pathParams.name }));
  a.ws('/chat', async (session) => {
    for await (const message of session) if (message.type === 'text') await session.send(message.data);
  });
});
const legacy = express();
legacy.use(cors({ allowed_origins: ['https://a.example'] }), rateLimit({ per_second: 10, burst: 20 }));
legacy.use('/api', app.intoRouter());
app.mergeRouter(express.Router());
export async function start(): Promise<ServerHandle | AppError> {
  return app.listen().catch((err: unknown) => (err instanceof AppError ? err : Promise.reject(err)));
}
`);
    // Every entry that needs no optional package: each middleware, JSON-RPC, AsyncAPI, the harness.
    const entries = [...readdirSync(join(root, 'middleware')).map((m) => `keel/middleware/${m}`), 'keel/jsonrpc', 'keel/asyncapi', 'keel/harness'];
    writeFileSync(join(project(), 'src/entries.ts'), entries.map((e, i) => `import * as e${i} from '${e}';\nexport { e${i} };\n`).join(''));
    const tsc = () => run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', project()], project(), 120_000);
    const r = tsc();
    assert.equal(r.status, 0, r.out);
    // The check can fail: misusing keel's types in the same project is an error.
    writeFileSync(join(project(), 'src/wrong.ts'), `import { createApp } from 'keel';\nexport const wrong: string = createApp();\n`);
    assert.match(tsc().out, /src\/wrong\.ts.*error TS2322/);
  });

  it('should check response(body, { status }) against the schema of that status, and type data.auth from a claims schema (issue 29)', (t) => {
    for (const f of ['wrong.ts', 'entries.ts']) rmSync(join(project(), 'src', f), { force: true });
    const notes = (handler: string) => `
import { createApp, response } from 'keel';
const note = { type: 'object', required: ['id', 'title'], properties: { id: { type: 'integer' }, title: { type: 'string' } } } as const;
const claims = { type: 'object', required: ['sub'], properties: { sub: { type: 'string' } } } as const;
export const app = createApp({ port: 0 }, (a) => {
  a.post('/notes', (data) => {
    const sub: string = data.auth.sub;
    ${handler}
  }, { responses: { 201: note }, jwt_auth: { secret: 'a-secret-of-at-least-32-bytes!!!', claims } });
});
`;
    const tsc = () => run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', project()], project(), 120_000);
    writeFileSync(join(project(), 'src/app.ts'), notes("return response({ id: 1, title: sub }, { status: 201 });"));
    const ok = tsc();
    assert.equal(ok.status, 0, ok.out);
    writeFileSync(join(project(), 'src/app.ts'), notes("return response({ id: 'x', title: sub }, { status: 201 });"));
    const wrong = tsc();
    assert.notEqual(wrong.status, 0, 'a string id in a 201 must not compile');
    t.diagnostic(wrong.out.split('\n').filter((l) => /error TS|is not assignable/.test(l)).slice(0, 4).join(' | '));
    // At the member, on the response(...) line of this block-bodied handler, in one line (issue 45 item 3).
    assert.deepEqual(wrong.out.split('\n').filter((l) => /error TS/.test(l)).map((l) => /src\/app\.ts\((\d+,\d+)\)/.exec(l)?.[1]), ['8,23'], wrong.out);
    assert.match(wrong.out, /error TS2322: Type 'string' is not assignable to type 'number'\.\s*$/, wrong.out);
  });

  it('should refuse to start an App with GraphQL on, naming the npm install command', () => {
    const r = startOrSayWhy("createApp({ port: 0, host: '127.0.0.1' }, (a) => a.registerGraphqlRoute('/graphql', 'POST', 'full'))");
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /AppError Server keel\/graphql needs packages .*`npm install graphql@16 graphql-http@1 graphql-ws@6 ws@8[^`]*`/);
  });

  it('should serve /openapi.json with OpenAPI on and no page package installed, saying which page is off and why', () => {
    const r = run(process.execPath, ['--input-type=module', '-e', `
      const { createApp } = await import('keel');
      const { pino } = await import('pino');
      const lines = [];
      const logger = pino({ level: 'info' }, { write: (l) => lines.push(JSON.parse(l)) });
      const app = createApp({ port: 0, host: '127.0.0.1', openapi: { enabled: true, title: 'Notes' } }, (a) => a.get('/notes', () => []), { logger });
      const server = await app.listen({ handleSignals: false });
      const doc = await fetch(server.url + '/openapi.json');
      const docs = await fetch(server.url + '/docs');
      console.log('DOC', doc.status, (await doc.json()).openapi, 'DOCS', docs.status);
      for (const l of lines) if (l.level === 40) console.log('WARN', l.msg);
      await server.close();
    `], project());
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /DOC 200 3\.1\.\d+ DOCS 404/);
    assert.match(r.out, /WARN Swagger UI is not served at \/docs: .*`npm install swagger-ui-express@5`.*swagger_ui_path: null/);
    assert.match(r.out, /WARN Redoc is not served at \/redoc: .*`npm install redoc@2`/);
  });

  it('should refuse to start an App whose chosen Swagger UI path has no package, naming the one npm install', () => {
    const r = startOrSayWhy("createApp({ port: 0, host: '127.0.0.1', openapi: { enabled: true, swagger_ui_path: '/api-docs', redoc_path: null } })");
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /AppError Server keel\/openapi's Swagger UI page \(OpenApiConfig\.swagger_ui_path: "\/api-docs"\) needs .*`npm install swagger-ui-express@5`/);
    assert.doesNotMatch(r.out, /redoc/);
  });
});
