// keel:integration
/**
 * require() of every public entry under plain node (issue 43 item 1), through package.json "exports" from the
 * repository's build (a package may require itself by name), in fresh CommonJS processes:
 * - each entry loads, and each middleware entry has the shape of require() of the package it replaces;
 * - one module instance per process: what require() gives is what import gives (functions, classes, the App
 *   registry), in either order;
 * - an App that uses no protocol loads none, under require() as under import.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, SKIP } from './consumer.js';

const MIDDLEWARE = readdirSync(join(ROOT, 'middleware'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
const PROTOCOLS = ['graphql', 'grpc', 'ws', 'jsonrpc', 'openapi', 'asyncapi'];
const ENTRIES = ['keel', ...PROTOCOLS.map((p) => `keel/${p}`), ...MIDDLEWARE.map((m) => `keel/middleware/${m}`), 'keel/harness', 'keel/express', 'keel/express4'];

/** keel/middleware/<name> → the package whose require() shape it has. */
const REPLACES: Record<string, string> = {
  'security-headers': 'helmet',
  cors: 'cors',
  compression: 'compression',
  'rate-limit': 'express-rate-limit',
  'jwt-auth': 'express-jwt',
  'static-files': 'serve-static',
};
/**
 * Names require() of the package has that keel's entry leaves out, and why: express-rate-limit's DAY/HOUR/MINUTE/
 * SECOND are millisecond constants (write 60_000); its MemoryStore is keel's FixedWindowMemoryStore (keel's
 * MemoryStore is the GCRA store of the rate-limit record).
 */
const NOT_CARRIED: Record<string, string[]> = { 'express-rate-limit': ['DAY', 'HOUR', 'MINUTE', 'SECOND'] };

function run(code: string, type: 'commonjs' | 'module' = 'commonjs'): string {
  return execFileSync(process.execPath, [`--input-type=${type}`, '-e', code], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_ENV: 'test' } });
}

describe('when an app require()s keel', { skip: SKIP }, () => {
  it('should load every public entry', () => {
    const out = run(`for (const e of ${JSON.stringify(ENTRIES)}) { const m = require(e); console.log(e, typeof m, Object.keys(m).length > 0); }`);
    assert.deepEqual(out.trim().split('\n'), ENTRIES.map((e) => `${e} ${/^keel\/(express4?|middleware\/(?!jwt-auth$).*)$/.test(e) ? 'function' : 'object'} true`));
  });

  for (const [middleware, pkg] of Object.entries(REPLACES)) {
    it(`should give require('keel/middleware/${middleware}') the shape of require('${pkg}')`, () => {
      const shape = (id: string) => `const m = require(${JSON.stringify(id)}); console.log(JSON.stringify({ type: typeof m, keys: Object.keys(m).filter((k) => k !== '__esModule').map((k) => k + ':' + typeof m[k]), isDefault: m.default === m }));`;
      const theirs = JSON.parse(run(shape(pkg))) as { type: string; keys: string[]; isDefault: boolean };
      const ours = JSON.parse(run(shape(`keel/middleware/${middleware}`))) as { type: string; keys: string[]; isDefault: boolean };
      assert.equal(ours.type, theirs.type);
      if (theirs.isDefault) assert.equal(ours.isDefault, true, `require('${pkg}').default is itself`);
      const left = NOT_CARRIED[pkg] ?? [];
      const missing = theirs.keys.filter((k) => !ours.keys.includes(k) && !left.includes(k.split(':')[0]!));
      assert.deepEqual(missing, [], `require('keel/middleware/${middleware}') lacks ${missing.join(', ')}`);
    });
  }

  it('should make every other middleware entry its factory, callable, with its named exports and .default', () => {
    const out = run(`for (const name of ${JSON.stringify(MIDDLEWARE.filter((m) => m !== 'jwt-auth'))}) {
      const m = require('keel/middleware/' + name);
      const ns = require('${ROOT}/dist/middleware/' + name + '/index.js');
      const named = Object.keys(ns).filter((k) => k !== 'default' && k !== '__esModule');
      console.log(name, typeof m, m.default === m, named.every((k) => m[k] === ns[k]));
    }`);
    for (const line of out.trim().split('\n')) assert.match(line, /^[\w-]+ function true true$/);
  });

  it('should give require() and import the same instances, whichever loads first', () => {
    const compare = `
      const pairs = [];
      for (const e of ['keel', 'keel/jsonrpc', 'keel/middleware/cors', 'keel/middleware/rate-limit', 'keel/middleware/security-headers', 'keel/harness', 'keel/express']) {
        const r = require(e);
        const i = await import(e);
        for (const k of Object.keys(i)) if (k !== 'default') pairs.push(i[k] === r[k] ? 'same' : e + ' ' + k + ' differs');
        if ('default' in i) pairs.push(i.default === (r.default ?? r) ? 'same' : e + ' default differs');
      }
      const { createApp } = require('keel');
      const { createApp: createAppI, AppError } = await import('keel');
      const a = createApp({ port: 0 }, () => {});
      pairs.push(Object.getPrototypeOf(a) === Object.getPrototypeOf(createAppI({ port: 0 }, () => {})) ? 'same' : 'App class differs');
      pairs.push(new (require('keel').AppError)('Server', 'x') instanceof AppError ? 'same' : 'AppError differs');
      const { MemoryStore } = await import('keel/middleware/rate-limit');
      pairs.push(new (require('keel/middleware/rate-limit').MemoryStore)() instanceof MemoryStore ? 'same' : 'MemoryStore differs');
      console.log([...new Set(pairs)].join('\\n'));
    `;
    const cjs = `const { createRequire } = require('node:module'); (async () => {${compare}})();`;
    const esm = `import { createRequire } from 'node:module'; const require = createRequire(${JSON.stringify(join(ROOT, 'package.json'))}); ${compare.replace("const r = require(e);\n        const i = await import(e);", 'const i = await import(e);\n        const r = require(e);')}`;
    assert.equal(run(cjs).trim(), 'same', 'require first');
    assert.equal(run(esm, 'module').trim(), 'same', 'import first');
  });

  it('should load no protocol module, nor its libraries, for an App that uses none', () => {
    const out = run(`(async () => {
      const { createApp } = require('keel');
      const app = createApp({ port: 0 }, (a) => a.get('/hello', () => ({ hello: 'world' })));
      await app.ready();
      app.intoRouter();
      for (const file of Object.keys(require.cache)) console.log(file);
    })();`);
    const files = out.trim().split('\n');
    assert.ok(files.some((f) => f.endsWith('/dist/lib/app/app.js')), 'the cache sees keel itself');
    const protocol = /\/dist\/lib\/(graphql|grpc|ws|jsonrpc|openapi|asyncapi)\/|\/node_modules\/(graphql|graphql-http|graphql-ws|ws|@grpc|protobufjs|swagger-ui-express|prom-client|@opentelemetry)\//;
    assert.deepEqual(files.filter((f) => protocol.test(f)), []);
  });

  it('should load a protocol when the App uses it, through require()', () => {
    const out = run(`(async () => {
      const { createApp } = require('keel');
      const app = createApp({ port: 0, jsonrpc: { enabled: true } }, (a) => a.rpc('math.add', ({ a, b }) => a + b));
      await app.ready();
      console.log(Object.keys(require.cache).some((f) => f.endsWith('/dist/lib/jsonrpc/install.js')));
    })();`);
    assert.equal(out.trim(), 'true');
  });
});
