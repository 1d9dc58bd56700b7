import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { WebSocket } from 'ws';
import { buildRequest, send } from './client.js';
import { buildFixtureApp, fixtureTarget, HANDLER_REACHED, isHandlerOwnedError, routeFor, serveFixtureApp } from './fixture-app.js';
import { runCases } from './runner.js';
import type { ConformanceCase } from './types.js';

function kase(partial: { id?: string; handler: ConformanceCase['handler']; request: ConformanceCase['request']; expected: ConformanceCase['expected'] }): ConformanceCase {
  const id = partial.id ?? 'unit/case';
  return { id, category: 'unit', name: id, source: 'memory', extra: {}, ...partial };
}

async function once(c: ConformanceCase, request: ConformanceCase['request'] = c.request) {
  const t = await fixtureTarget(c);
  try {
    return await send(t.baseUrl, buildRequest(request));
  } finally {
    await t.release?.();
  }
}

/** A WebSocket opening handshake for `path` (RFC 6455 §4.1) with a fresh key, and the accept value it calls for (§4.2.2). */
function handshake(path: string) {
  const key = randomBytes(16).toString('base64');
  const accept = createHash('sha1').update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11').digest('base64');
  return { accept, request: { method: 'GET', path, headers: { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': key, 'Sec-WebSocket-Version': '13' } } };
}

/** A GET /ws case with `middleware` (the corpus's ws_upgrade_handshake when it is `{websocket: {enabled: true}}`). */
function wsCase(middleware: Record<string, unknown> | undefined, expected: ConformanceCase['expected'] = { status_code: 200, body: 'plain http' }): ConformanceCase {
  return kase({ handler: { route: '/ws', method: 'GET', ...(middleware ? { middleware } : {}) }, request: handshake('/ws').request, expected });
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

  describe('when a case declares a websocket record', () => {
    it('should answer the upgrade with keel/ws\'s 101 and the accept value of RFC 6455 §4.2.2', async () => {
      const h = handshake('/ws');
      const snap = await once(wsCase({ websocket: { enabled: true } }), h.request);
      assert.equal(snap.status, 101);
      assert.equal(snap.headers.upgrade, 'websocket');
      assert.equal(snap.headers.connection, 'Upgrade');
      assert.equal(snap.headers['sec-websocket-accept'], h.accept);
      assert.equal(snap.body.length, 0);
    });

    it('should pass the case as the corpus writes it (the record without enabled counts as on)', async () => {
      for (const record of [{ enabled: true }, {}]) {
        const c = kase({
          handler: { route: '/ws', method: 'GET', middleware: { websocket: record } },
          request: { method: 'GET', path: '/ws', headers: { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', 'Sec-WebSocket-Version': '13' } },
          expected: { status_code: 101, headers: { Upgrade: 'websocket', Connection: 'Upgrade', 'Sec-WebSocket-Accept': 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=' } },
        });
        const report = await runCases([c], { target: fixtureTarget });
        assert.equal(report.passed, 1, JSON.stringify(report.results[0]));
      }
    });

    it('should read the record from the handler too, and echo messages once connected', async () => {
      const c = kase({ handler: { route: '/chat', method: 'GET', websocket: { enabled: true } }, request: { method: 'GET', path: '/chat' }, expected: { status_code: 101 } });
      const served = await serveFixtureApp([c]);
      try {
        const client = new WebSocket(`${served.url.replace(/^http/, 'ws')}/chat`);
        const reply = await new Promise<string>((resolve, reject) => {
          client.once('open', () => client.send('ping?'));
          client.once('message', (data) => resolve(String(data)));
          client.once('error', reject);
        });
        assert.equal(reply, 'ping?');
        client.close();
      } finally {
        await served.close();
      }
    });

    it('should leave a plain GET to keel, as on any path without an HTTP route', async () => {
      const c = wsCase({ websocket: { enabled: true } });
      const snap = await once(c, { method: 'GET', path: '/ws' });
      assert.equal(snap.status, 404);
      assert.equal((snap.json as { detail?: string }).detail, 'No route matches GET /ws');
    });
  });

  describe('when a case has no websocket endpoint', () => {
    it('should let keel refuse the upgrade with 404 when the record is absent', async () => {
      const snap = await once(wsCase(undefined));
      assert.equal(snap.status, 404);
      assert.equal((snap.json as { detail?: string }).detail, 'No WebSocket route for /ws');
    });

    it('should register no endpoint for enabled: false, only the HTTP route', async () => {
      const c = wsCase({ websocket: { enabled: false } });
      const upgrade = await once(c);
      assert.equal(upgrade.status, 404);
      assert.equal((upgrade.json as { detail?: string }).detail, 'No WebSocket route for /ws');
      assert.equal((await once(c, { method: 'GET', path: '/ws' })).text, 'plain http');
    });
  });

  describe('when a websocket record is malformed', () => {
    async function refusal(middleware: Record<string, unknown>): Promise<string> {
      const report = await runCases([wsCase(middleware, { status_code: 101 })], { target: fixtureTarget });
      assert.equal(report.failed, 1);
      return report.results[0]!.error!;
    }

    it('should refuse an unknown key as keel refuses one in its own records, naming record and key', async () => {
      assert.match(await refusal({ websocket: { enable: true } }), /ConfigError: Unknown key "enable" in websocket at middleware\.websocket\. Did you mean "enabled"\?/);
      assert.match(await refusal({ websocket: { enabled: true, path: '/other' } }), /Unknown key "path" in websocket at middleware\.websocket\. Allowed keys: enabled\./);
    });

    it('should refuse a record that is not an object, or an enabled that is not a boolean', async () => {
      assert.match(await refusal({ websocket: null }), /Invalid websocket at middleware\.websocket: expected an object/);
      assert.match(await refusal({ websocket: { enabled: 'yes' } }), /Invalid websocket at middleware\.websocket\.enabled: expected true or false/);
    });

    it('should refuse route records it could not apply to the endpoint rather than drop them', async () => {
      assert.match(await refusal({ websocket: { enabled: true }, jwt_auth: { secret: 'x'.repeat(32) } }), /takes none of the route's other records \(jwt_auth\) on GET \/ws/);
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
      const fixture = await buildFixtureApp([c]);
      const dir = (fixture.app.config.static_files[0] as { directory: string }).directory;
      fixture.cleanup();
      const { existsSync } = await import('node:fs');
      assert.equal(existsSync(dir), false);
      assert.equal((await once(c)).text, 'static!');
    });
  });
});
