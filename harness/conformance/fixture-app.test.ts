import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildRequest, send } from './client.js';
import { buildFixtureApp, fixtureTarget, HANDLER_REACHED, isHandlerOwnedError, routeFor, serveFixtureApp } from './fixture-app.js';
import { runCases } from './runner.js';
import type { ConformanceCase } from './types.js';

function kase(partial: { id?: string; handler: ConformanceCase['handler']; request: ConformanceCase['request']; expected: ConformanceCase['expected'] }): ConformanceCase {
  const id = partial.id ?? 'unit/case';
  return { id, category: 'unit', name: id, source: 'memory', extra: {}, ...partial };
}

async function once(c: ConformanceCase) {
  const t = await fixtureTarget(c);
  try {
    return await send(t.baseUrl, buildRequest(c.request));
  } finally {
    await t.release?.();
  }
}

describe('fixture app', () => {
  describe('when a case expects an error keel owns', () => {
    it('should let keel answer the 422 (the handler never runs)', async () => {
      const c = kase({
        handler: { route: '/items/{id:int}', method: 'GET' },
        request: { method: 'GET', path: '/items/abc' },
        expected: { status_code: 422 },
      });
      const snap = await once(c);
      assert.equal(snap.status, 422);
      assert.equal(snap.headers['content-type'], 'application/problem+json');
    });

    it('should not fake a 401 when the case configures no authentication', async () => {
      const c = kase({ handler: { route: '/me', method: 'GET' }, request: { method: 'GET', path: '/me' }, expected: { status_code: 401 } });
      const snap = await once(c);
      assert.equal(snap.status, 200);
      assert.deepEqual(snap.json, HANDLER_REACHED);
    });
  });

  describe('when a case expects an error only the application knows', () => {
    it('should throw it so keel renders a 404 problem for a matched route', async () => {
      const c = kase({
        handler: { route: '/items/{id}', method: 'GET' },
        request: { method: 'GET', path: '/items/999' },
        expected: { status_code: 404, body: { detail: 'Item not found' } },
      });
      assert.equal(isHandlerOwnedError(c), true);
      const snap = await once(c);
      assert.equal(snap.status, 404);
      assert.deepEqual(snap.json, { type: 'https://keel.dev/errors/not-found', title: 'Resource Not Found', status: 404, detail: 'Item not found' });
    });

    it('should give the problem the instance the case shows (the handler\'s own member)', async () => {
      const c = kase({
        handler: { route: '/items/{id}', method: 'GET' },
        request: { method: 'GET', path: '/items/999' },
        expected: { status_code: 404, body: { detail: 'Item with ID 999 was not found', instance: '/items/999' } },
      });
      const snap = await once(c);
      assert.deepEqual(snap.json, { type: 'https://keel.dev/errors/not-found', title: 'Resource Not Found', status: 404, detail: 'Item with ID 999 was not found', instance: '/items/999' });
    });

    it('should leave routing 404s to keel', () => {
      const c = kase({ handler: { route: '/items/{id}', method: 'GET' }, request: { method: 'GET', path: '/other' }, expected: { status_code: 404 } });
      assert.equal(isHandlerOwnedError(c), false);
    });

    it('should throw a plain error for a 500, which keel must not leak', async () => {
      const c = kase({ handler: { route: '/boom', method: 'GET' }, request: { method: 'GET', path: '/boom' }, expected: { status_code: 500 } });
      const snap = await once(c);
      assert.equal(snap.status, 500);
      assert.doesNotMatch(snap.text, /fixture handler failure/);
      assert.deepEqual(snap.json, { type: 'https://keel.dev/errors/internal-server-error', title: 'Internal Server Error', status: 500, detail: 'Internal server error' });
    });
  });

  describe('when a case succeeds', () => {
    it('should send handler headers but never framework headers', async () => {
      const c = kase({
        handler: { route: '/x', method: 'GET' },
        request: { method: 'GET', path: '/x' },
        expected: { status_code: 201, body: { ok: true }, headers: { Location: '/x/1', 'Access-Control-Allow-Origin': '*', 'Content-Encoding': 'gzip' } },
      });
      const snap = await once(c);
      assert.equal(snap.status, 201);
      assert.equal(snap.headers.location, '/x/1');
      assert.equal(snap.headers['access-control-allow-origin'], undefined);
      assert.equal(snap.headers['content-encoding'], undefined);
    });
  });

  describe('when translating records', () => {
    it('should rename allow_* CORS keys and drop test-driver keys', () => {
      const def = routeFor(kase({
        handler: {
          route: '/r', method: 'GET',
          middleware: { cors: { allow_origins: ['https://a.example'] }, rate_limit: { per_second: 1, burst: 1, warmup_requests: 2 }, request_timeout: { seconds: 2, sleep_ms: 10 }, body_limit: { max_bytes: 64 } },
        },
        request: { method: 'GET', path: '/r' },
        expected: { status_code: 200 },
      }));
      assert.deepEqual(def.cors, { allowed_origins: ['https://a.example'] });
      assert.deepEqual(def.rate_limit, { per_second: 1, burst: 1 });
      assert.equal(def.request_timeout, 2);
      assert.equal(def.max_body_size, 64);
    });

    it('should surface a record keel refuses as a failed case, not a crash', async () => {
      const c = kase({
        handler: { route: '/r', method: 'GET', middleware: { rate_limit: { enabled: true, requests_per_second: 10 } } },
        request: { method: 'GET', path: '/r' },
        expected: { status_code: 200 },
      });
      const report = await runCases([c], { target: fixtureTarget });
      assert.equal(report.failed, 1);
      assert.match(report.results[0]!.error!, /Unknown key "requests_per_second" in RateLimitConfig/);
    });
  });

  describe('when serving many cases at once', () => {
    it('should mount the first of two cases with the same route and report the other', async () => {
      const a = kase({ id: 'a', handler: { route: '/same', method: 'GET' }, request: { method: 'GET', path: '/same' }, expected: { status_code: 200, body: 'a' } });
      const b = kase({ id: 'b', handler: { route: '/same', method: 'GET' }, request: { method: 'GET', path: '/same' }, expected: { status_code: 200, body: 'b' } });
      const served = await serveFixtureApp([a, b]);
      try {
        assert.deepEqual(served.shadowed, ['b']);
        assert.equal((await send(served.url, buildRequest(a.request))).text, 'a');
      } finally {
        await served.close();
      }
    });

    it('should serve static files from a temporary directory it removes afterwards', async () => {
      const c = kase({
        handler: { route: '/s', method: 'GET', middleware: { static_files: [{ route_prefix: '/s', files: [{ path: 'dir/a.txt', content: 'static!' }] }] } },
        request: { method: 'GET', path: '/s/dir/a.txt' },
        expected: { status_code: 200 },
      });
      const fixture = buildFixtureApp([c]);
      const dir = (fixture.app.config.static_files[0] as { directory: string }).directory;
      fixture.cleanup();
      const { existsSync } = await import('node:fs');
      assert.equal(existsSync(dir), false);
      assert.equal((await once(c)).text, 'static!');
    });
  });
});
