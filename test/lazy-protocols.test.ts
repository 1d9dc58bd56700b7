// Protocol modules are loaded by app.ready() with import() (lib/app/builtins.ts): the same under tsx
// (these tests) and compiled (test/package-exports.test.ts), with no module to import first.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { App, AppError, createApp } from '../lib/index.js';
import { loadedProtocol, PROTOCOLS } from '../lib/app/builtins.js';
import { REDOC_PACKAGE, SWAGGER_UI_PACKAGE } from '../lib/openapi/pages.js';
import { missingPackages, missingPackagesError, packageName, PLAYGROUND_PACKAGES, wrongMajorPackages } from '../lib/ops/packages.js';
import type { ProtocolName } from '../lib/app/plugin.js';
import { BULLMQ_PACKAGES } from '../lib/background/bullmq.js';
import { METRICS_PACKAGES } from '../lib/observability/metrics.js';
import { TRACING_PACKAGES } from '../lib/observability/tracing.js';

const NAMES = Object.keys(PROTOCOLS) as ProtocolName[];

describe('when an App uses no protocol', () => {
  it('should build without ready() and load no protocol module', () => {
    createApp({ port: 0 }, (app) => app.get('/hello', () => ({ hello: 'world' }))).intoRouter();
    assert.deepEqual(NAMES.filter((n) => loadedProtocol(n)), []);
  });
});

describe('when an App uses a protocol that is not loaded yet', () => {
  it('should refuse to build before ready(), naming the protocol and the call to make', () => {
    const app = new App({ port: 0, openapi: { enabled: true } });
    assert.throws(() => app.intoRouter(), (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.kind, 'Server');
      assert.match(err.message, /keel\/openapi/);
      assert.match(err.message, /await app\.ready\(\)/);
      return true;
    });
  });

  it('should load it in ready() and serve it, with keel\'s own error classes', async () => {
    const app = new App({ port: 0, jsonrpc: { enabled: true } });
    app.rpc('ping', () => 'pong');
    assert.equal(await app.ready(), app);
    app.intoRouter();
    assert.ok(loadedProtocol('jsonrpc'));
    assert.deepEqual(app.mounts().map((m) => m.path), ['/rpc']);
  });

  it('should load only the protocols the App uses', async () => {
    await new App({ port: 0, asyncapi: { enabled: true } }).ready();
    assert.ok(loadedProtocol('asyncapi'));
    assert.equal(loadedProtocol('grpc'), undefined);
    assert.equal(loadedProtocol('graphql'), undefined);
  });
});

describe('when a protocol\'s packages are not installed', () => {
  it('should name exactly the missing ones in the npm install command', () => {
    assert.deepEqual(missingPackages(['graphql@16', 'keel-no-such-package@1', '@keel-none/nothing@0.1']), ['keel-no-such-package@1', '@keel-none/nothing@0.1']);
    const err = missingPackagesError('keel/graphql', ['graphql@16', 'ws@8']);
    assert.ok(err instanceof AppError);
    assert.equal(err.kind, 'Server');
    assert.match(err.message, /`npm install graphql@16 ws@8`/);
  });
  // The real case (keel installed from its tarball without graphql): test/package-install.test.ts.

  it('should name a package installed at another major than the hint\'s (react 19 for the React 18 playground)', () => {
    const react = (JSON.parse(readFileSync(new URL('../node_modules/react/package.json', import.meta.url), 'utf8')) as { version: string }).version;
    const major = react.split('.')[0]!;
    assert.deepEqual(wrongMajorPackages([`react@${major}`, 'keel-no-such-package@1']), []);
    assert.deepEqual(wrongMajorPackages([`react@${Number(major) + 1}`]), [{ spec: `react@${Number(major) + 1}`, installed: react }]);
  });
});

describe('when the package lists its optional peer dependencies', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    peerDependencies: Record<string, string>; peerDependenciesMeta: Record<string, { optional?: boolean }>; devDependencies: Record<string, string>; dependencies: Record<string, string>;
  };
  // The BullMQ executor and RedisPubSub (docs/scaling.md), metrics and spans (docs/operations.md) load theirs the same way.
  const specs = [...NAMES.flatMap((n) => PROTOCOLS[n].packages), SWAGGER_UI_PACKAGE, REDOC_PACKAGE, ...PLAYGROUND_PACKAGES, ...BULLMQ_PACKAGES, ...METRICS_PACKAGES, ...TRACING_PACKAGES];

  it('should declare every package a protocol needs as an optional peer and a dev dependency, never a dependency', () => {
    for (const spec of specs) {
      const name = packageName(spec);
      assert.ok(pkg.peerDependencies[name], `${name} is a peer dependency`);
      assert.equal(pkg.peerDependenciesMeta[name]?.optional, true, `${name} is optional`);
      assert.ok(pkg.devDependencies[name], `${name} is a dev dependency`);
      assert.equal(pkg.dependencies[name], undefined, `${name} is not a dependency`);
      // The hint's version is the peer range's (first) major, or 0.minor: react's range also takes 19,
      // which Redoc and Swagger UI pages work with, while the playground's hint asks for 18.
      const major = pkg.peerDependencies[name]!.split('||')[0]!.trim().replace(/^\^/, '').split('.');
      assert.equal(spec.slice(name.length + 1), major[0] === '0' ? `0.${major[1]}` : major[0], spec);
    }
  });

  it('should have no peer dependency that no protocol or Redis feature uses (except express for merged routers, @types/express for keel/express\'s types, @types/ws for keel/ws\'s types, yaml for AsyncAPI YAML bodies)', () => {
    const used = new Set(specs.map(packageName));
    assert.deepEqual(Object.keys(pkg.peerDependencies).filter((n) => !used.has(n)), ['@types/express', '@types/ws', 'express', 'yaml']);
  });
});
