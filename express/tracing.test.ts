// keel:integration
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { traceOf } from './tracing.js';

// The apps run in child processes so the OpenTelemetry setup (otel-register.cjs: a tracer provider with an
// in-memory exporter, instrumentation-http, instrumentation-express) is registered before they load, as an app's
// `node --require ./tracing.js` does. keel is loaded by name (package.json "exports", the built dist/), as installed.
const root = fileURLToPath(new URL('..', import.meta.url));
const fixtures = join(root, 'express', 'fixtures');
const built = existsSync(join(root, 'dist', 'express', 'express4.cjs'));

interface Span {
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  id: string;
  parent?: string;
  scope: string;
  status: number;
}
interface Run { status: number; body: string; spans: Span[] }

const SERVER = 1;
const EXPRESS_TYPES = new Set(['middleware', 'router', 'request_handler']);

function runApp(cwd: string, express: string, opts: { nodeArgs?: string[]; env?: Record<string, string> } = {}): Run {
  const args = [...(opts.nodeArgs ?? []), '--require', join(fixtures, 'otel-register.cjs'), join(fixtures, 'otel-app.cjs')];
  const r = spawnSync(process.execPath, args, {
    cwd, encoding: 'utf8', timeout: 60_000,
    env: { ...process.env, NODE_ENV: 'test', EXPRESS: express, ...opts.env },
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Run;
}

/** A span as dashboards see it, sorted: kind, name, the Express attributes, http.route, status. Express 4's own
 * `query` and `expressInit` middleware are left out (keel/express4 does their work inside app.handle). */
function shape(run: Run): string[] {
  return run.spans
    .filter((s) => s.attributes['express.name'] !== 'query' && s.attributes['express.name'] !== 'expressInit')
    .map((s) => [s.kind, s.name, s.attributes['express.type'], s.attributes['express.name'], s.attributes['http.route'], s.status].join(' | '))
    .sort();
}

function assertTraced(run: Run, route: string): void {
  const servers = run.spans.filter((s) => s.kind === SERVER);
  assert.equal(servers.length, 1, JSON.stringify(run.spans));
  const server = servers[0]!;
  assert.equal(server.attributes['http.route'], route);
  assert.equal(server.name, `GET ${route}`);
  const express = run.spans.filter((s) => EXPRESS_TYPES.has(s.attributes['express.type'] as string));
  assert.ok(express.length >= 1, 'no Express span');
  for (const s of express) assert.equal(s.parent, server.id, `${s.name} is not a child of the SERVER span`);
}

describe('when an app traced with OpenTelemetry runs on keel/express or keel/express4', { skip: built ? false : 'dist/ is not built (run npm run build)' }, () => {
  let tmp: string;
  /** A directory where `keel` is installed (a link to this checkout). */
  let keelDir: string;
  /** Directories where `express` is a package of that name re-exporting keel's entry (the zero-edit switch). */
  const shimDir: Record<string, string> = {};
  /** A directory where `express` is the real Express 4 (the repository has it as `express4`). */
  let express4Dir: string;

  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'keel-otel-'));
    keelDir = join(tmp, 'keel');
    mkdirSync(join(keelDir, 'node_modules'), { recursive: true });
    symlinkSync(root, join(keelDir, 'node_modules', 'keel'), 'dir');
    for (const [entry, version] of [['keel/express', '5.1.0'], ['keel/express4', '4.21.2']] as const) {
      const dir = join(tmp, entry.replace('/', '-'));
      mkdirSync(join(dir, 'node_modules', 'express'), { recursive: true });
      symlinkSync(root, join(dir, 'node_modules', 'keel'), 'dir');
      writeFileSync(join(dir, 'node_modules', 'express', 'package.json'), JSON.stringify({ name: 'express', version, main: 'index.js' }));
      writeFileSync(join(dir, 'node_modules', 'express', 'index.js'), `module.exports = require('${entry}');\n`);
      shimDir[entry] = dir;
    }
    express4Dir = join(tmp, 'express4');
    mkdirSync(join(express4Dir, 'node_modules'), { recursive: true });
    symlinkSync(join(root, 'node_modules', 'express4'), join(express4Dir, 'node_modules', 'express'), 'dir');
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  /** The same app on the real Express of that major (instrumentation-express patching it). */
  function realExpress(major: 4 | 5, env?: Record<string, string>): Run {
    if (major === 5) return runApp(root, 'express', { env });
    // the link stays `node_modules/express` (instrumentation-express patches a package by its directory's name)
    return runApp(express4Dir, 'express', { nodeArgs: ['--preserve-symlinks'], env: { NODE_PATH: join(root, 'node_modules'), ...env } });
  }

  for (const [entry, major] of [['keel/express', 5], ['keel/express4', 4]] as const) {
    describe(`(${entry})`, () => {
      let expected: string[];
      before(() => {
        expected = shape(realExpress(major));
      });

      it(`should give express@${major}'s spans when the app imports ${entry}: a SERVER span named by the route, Express spans under it`, () => {
        const run = runApp(keelDir, entry);
        assert.equal(run.status, 200);
        assert.equal(run.body, '{"id":"42"}');
        assertTraced(run, '/api/users/:id');
        assert.deepEqual(shape(run), expected);
        assert.ok(run.spans.filter((s) => s.kind !== SERVER).every((s) => s.scope === 'keel/express'));
      });

      it(`should answer 200 with the same spans, not doubled, when express is a package re-exporting ${entry} (instrumentation-express patches it)`, () => {
        const run = runApp(shimDir[entry]!, 'express');
        assert.equal(run.status, 200, run.body);
        assert.equal(run.body, '{"id":"42"}');
        assertTraced(run, '/api/users/:id');
        assert.deepEqual(shape(run), expected);
        // instrumentation-express made them; keel left its wrapped layers alone
        assert.ok(run.spans.filter((s) => s.kind !== SERVER).every((s) => s.scope === '@opentelemetry/instrumentation-express'));
      });

      it(`should give the same spans when a module alias resolves express to ${entry}`, () => {
        const run = runApp(keelDir, 'express', {
          nodeArgs: ['--require', join(fixtures, 'alias-express.cjs')], env: { ALIAS_EXPRESS: entry },
        });
        assert.equal(run.status, 200);
        assertTraced(run, '/api/users/:id');
        assert.deepEqual(shape(run), expected);
      });

      it('should record an error passed to next on the route span, as express does', () => {
        const env = { REQUEST_PATH: '/api/fail' };
        const run = runApp(keelDir, entry, { env });
        assert.equal(run.status, 500);
        assertTraced(run, '/api/fail');
        const handler = run.spans.find((s) => s.attributes['express.type'] === 'request_handler');
        assert.equal(handler?.status, 2, 'the request handler span is not ERROR');
        assert.deepEqual(shape(run), shape(realExpress(major, env)));
      });

      it('should name the SERVER span by the method alone, as express does, when a later layer drops the matched route', () => {
        const env = { REQUEST_PATH: '/api/nothing' };
        const run = runApp(keelDir, entry, { env });
        assert.equal(run.status, 404);
        const servers = run.spans.filter((s) => s.kind === SERVER);
        assert.equal(servers.length, 1, JSON.stringify(run.spans));
        assert.equal(servers[0]!.name, 'GET');
        assert.equal(servers[0]!.attributes['http.route'], undefined);
        assert.ok(run.spans.some((s) => s.name === 'middleware - notFound'), JSON.stringify(run.spans));
        assert.deepEqual(shape(run), shape(realExpress(major, env)));
      });

      it('should make no Express span when the request runs under no span (no HTTP instrumentation)', () => {
        const run = runApp(keelDir, entry, { env: { OTEL_HTTP: '0' } });
        assert.equal(run.status, 200);
        assert.deepEqual(run.spans, []);
      });
    });
  }

  // instrumentation-express 0.47 instruments Express 4 only (>=4 <5); it tells a route's layer from a middleware by
  // the name Express 4 gives it, 'bound dispatch'. Installed as `express`, keel/express4 is patched by it as Express 4
  // is: the same spans, attributes and statuses. Imported, keel/express4 is not patched and makes the spans itself,
  // after the current release (http.route only once a route matched, a route's span ended by next, and so a SERVER
  // span named 'GET' where 0.47 says 'GET /' when no route matched): the same Express spans' names and types.
  describe('(keel/express4, instrumentation-express 0.47)', () => {
    const old = { OTEL_EXPRESS_INSTRUMENTATION: 'instrumentation-express-0-47' };
    const named = (run: Run) => run.spans
      .filter((s) => s.kind !== SERVER && s.attributes['express.name'] !== 'query' && s.attributes['express.name'] !== 'expressInit')
      .map((s) => [s.kind, s.name, s.attributes['express.type']].join(' | ')).sort();
    for (const path of ['/api/users/42', '/api/fail', '/api/nothing']) {
      it(`should give express@4's spans for ${path} installed as express, and their names and kinds imported`, () => {
        const env = { ...old, REQUEST_PATH: path };
        const real = realExpress(4, env);
        const expected = shape(real);
        if (path !== '/api/nothing') assert.ok(expected.some((line) => line.includes('| request_handler |')), expected.join('\n'));
        const shimmed = runApp(shimDir['keel/express4']!, 'express', { env });
        assert.deepEqual(shape(shimmed), expected);
        assert.ok(shimmed.spans.filter((s) => s.kind !== SERVER).every((s) => s.scope === '@opentelemetry/instrumentation-express'));
        assert.deepEqual(named(runApp(keelDir, 'keel/express4', { env })), named(real));
      });
    }
  });
});

describe('when no OpenTelemetry context manager is registered', () => {
  it('should leave the request untraced and untouched', () => {
    const req = { url: '/', originalUrl: '/' };
    assert.equal(traceOf(req), undefined);
    assert.deepEqual(Reflect.ownKeys(req), ['url', 'originalUrl']);
  });

  it('should trace nothing while one is registered but no span is active', () => {
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    try {
      const req = { url: '/', originalUrl: '/' };
      assert.equal(traceOf(req), undefined);
      assert.deepEqual(Reflect.ownKeys(req), ['url', 'originalUrl']);
    } finally {
      context.disable();
    }
  });
});
