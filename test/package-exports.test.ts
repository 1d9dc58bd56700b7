import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// `npm test` runs `npm run build` first, which builds dist/; these imports go through package.json "exports"
// exactly as a user's would (a package may import itself by name).
const built = existsSync(new URL('../dist/lib/index.js', import.meta.url));
const middleware = readdirSync(new URL('../middleware/', import.meta.url));
const root = fileURLToPath(new URL('..', import.meta.url));

/** One export of each protocol subpath, and one that used to come from "keel" itself. */
const PROTOCOLS: Record<string, { api: string; formerlyCore: string }> = {
  graphql: { api: 'buildSdlSchema', formerlyCore: 'graphqlSdlRoute' },
  grpc: { api: 'createGrpcRouter', formerlyCore: 'GrpcError' },
  ws: { api: 'createWebSocketUpgradeHandler', formerlyCore: 'WebSocketSession' },
  jsonrpc: { api: 'jsonRpcHandler', formerlyCore: 'JsonRpcRegistry' },
  openapi: { api: 'generateOpenApi', formerlyCore: 'openApiMounts' },
  asyncapi: { api: 'parseAsyncApi', formerlyCore: 'asyncApiMounts' },
};

/** Plain node (no tsx), the way a deployed app runs: a module in this package, importing keel by name. */
function runCompiled(code: string, preload: string[] = []): string {
  return execFileSync(process.execPath, [...preload, '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_ENV: 'test' } });
}

// Prints every module URL the process resolves (loader hooks run on their own thread; it has stdout).
const TRACE_HOOK = `data:text/javascript,${encodeURIComponent(`
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent('export async function resolve(s, c, next) { const r = await next(s, c); console.log("RESOLVED " + r.url); return r; }'));
`)}`;

describe('when keel is imported through its package exports', { skip: built ? false : 'dist/ is not built (run npm run build)' }, () => {
  it('should expose createApp and the records from "keel", with types', async () => {
    const keel = await import('keel');
    assert.equal(typeof keel.createApp, 'function');
    assert.equal(typeof keel.ServerConfig.parse, 'function');
    assert.ok(existsSync(new URL('../dist/lib/index.d.ts', import.meta.url)));
  });

  for (const [name, { api, formerlyCore }] of Object.entries(PROTOCOLS)) {
    it(`should expose the ${name} API from "keel/${name}", with types, and not from "keel"`, async () => {
      const mod = (await import(`keel/${name}`)) as Record<string, unknown>;
      assert.equal(typeof mod[api], 'function', `keel/${name} exports ${api}`);
      assert.ok(formerlyCore in mod, `keel/${name} exports ${formerlyCore}`);
      assert.ok(existsSync(new URL(`../dist/lib/${name}/index.d.ts`, import.meta.url)));
      const keel = (await import('keel')) as Record<string, unknown>;
      assert.equal(formerlyCore in keel, false, `"keel" no longer exports ${formerlyCore}`);
    });
  }

  it('should type the protocol subpaths from their .d.ts files', async () => {
    // Literal specifiers, so the typecheck resolves them through "exports" to dist/*.d.ts.
    const ws = await import('keel/ws');
    const graphql = await import('keel/graphql');
    const jsonrpc = await import('keel/jsonrpc');
    const maxPayload: number = ws.DEFAULT_MAX_PAYLOAD;
    const schemaTypes: readonly string[] = graphql.SCHEMA_TYPES;
    const parseError: number = jsonrpc.JSON_RPC_ERRORS.PARSE_ERROR.code;
    assert.deepEqual([maxPayload, schemaTypes.length, parseError], [1024 * 1024, 3, -32700]);
  });

  for (const name of middleware) {
    it(`should expose a factory from "keel/middleware/${name}", with types`, async () => {
      const mod = (await import(`keel/middleware/${name}`)) as Record<string, unknown>;
      const camel = name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      assert.equal(typeof mod[camel], 'function', `keel/middleware/${name} exports ${camel}()`);
      assert.ok(existsSync(new URL(`../dist/middleware/${name}/index.d.ts`, import.meta.url)));
    });
  }

  it('should expose the harness from "keel/harness"', async () => {
    const harness = await import('keel/harness');
    assert.equal(typeof harness.snapshotResponse, 'function');
  });
});

describe('when a compiled app uses no protocol module', { skip: built ? false : 'dist/ is not built (run npm run build)' }, () => {
  it('should load none of them, nor their libraries', () => {
    // Three views: the resolve trace (imports, static and dynamic), keel's registry of loaded protocols
    // and the CommonJS cache (ws, gRPC, protobufjs, ...).
    const out = runCompiled(`
      import { createRequire } from 'node:module';
      const { createApp } = await import('keel');
      const { loadedProtocol } = await import('./dist/lib/app/builtins.js');
      const app = createApp({ port: 0 }, (app) => app.get('/hello', () => ({ hello: 'world' })));
      await app.ready();
      app.intoRouter();
      const names = ['graphql', 'grpc', 'ws', 'jsonrpc', 'openapi', 'asyncapi'];
      console.log('REGISTRY ' + JSON.stringify(names.filter((n) => loadedProtocol(n))));
      for (const file of Object.keys(createRequire(import.meta.url).cache)) console.log('REQUIRED ' + file);
    `, ['--import', TRACE_HOOK]);
    assert.match(out, /^REGISTRY \[\]$/m);
    const lines = out.split('\n');
    const loaded = lines.filter((l) => l.startsWith('RESOLVED ') || l.startsWith('REQUIRED ')).map((l) => l.slice(l.indexOf(' ') + 1));
    assert.ok(loaded.some((file) => file.endsWith('/dist/lib/app/app.js')), 'the trace sees keel itself');
    assert.ok(loaded.some((file) => file.includes('/node_modules/pino/')), 'the CommonJS cache sees keel\'s libraries');
    const protocol = /\/dist\/lib\/(graphql|grpc|ws|jsonrpc|openapi|asyncapi)\/|\/node_modules\/(graphql|graphql-http|graphql-ws|ws|@grpc|protobufjs|swagger-ui-express|redoc-express|prom-client|@opentelemetry)\//;
    assert.deepEqual(loaded.filter((file) => protocol.test(file)), []);
  });
});

describe('when a compiled app configures protocols without importing them', { skip: built ? false : 'dist/ is not built (run npm run build)' }, () => {
  it('should load each when it starts and serve it, with keel\'s own error classes', () => {
    const out = runCompiled(`
      const { createApp, AppError } = await import('keel');
      const app = createApp({ host: '127.0.0.1', port: 0, openapi: { enabled: true }, jsonrpc: { enabled: true } }, (app) => {
        app.rpc('math.add', ({ a, b }) => a + b);
        app.registerGraphqlSdlRoute('/graphql', 'POST', 'type Query { hello: String }', { hello: 'world' }, { introspection_enabled: false });
        app.ws('/ws', () => undefined);
      });
      const bad = createApp({ port: 0 }, (app) => app.registerGraphqlSdlRoute('/bad', 'POST', 'type Query {', {}, { introspection_enabled: false }));
      await bad.listen({ handleSignals: false }).catch((err) => console.log('BAD_SDL', err instanceof AppError, err.kind));
      const server = await app.listen({ handleSignals: false });
      const base = 'http://127.0.0.1:' + server.port;
      const post = (path, body) => fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.text());
      console.log('GRAPHQL', await post('/graphql', { query: '{ hello }' }));
      console.log('RPC', await post('/rpc', { jsonrpc: '2.0', id: 1, method: 'math.add', params: { a: 1, b: 2 } }));
      console.log('OPENAPI', (await fetch(base + '/openapi.json')).status);
      await server.close();
    `);
    assert.match(out, /^BAD_SDL true GraphQl$/m);
    assert.match(out, /^GRAPHQL \{"data":\{"hello":"world"\}\}$/m);
    assert.match(out, /^RPC \{"jsonrpc":"2.0","result":3,"id":1\}$/m);
    assert.match(out, /^OPENAPI 200$/m);
  });
});
