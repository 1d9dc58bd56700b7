/**
 * cors inside keel's createApp (route-level CorsConfig records) and against the shared conformance
 * cases, which are read in place from ../shared/conformance and never copied into the repository.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import express from 'express';
import request from 'supertest';
import { pino } from 'pino';
import { createApp, response } from '../../lib/index.js';
import { cors, type CorsOptions } from './index.js';

const silent = { logger: pino({ level: 'silent' }) };
const EXAMPLE = 'https://example.com';

describe('cors inside a keel App (route-level CorsConfig)', () => {
  const app = createApp(
    { port: 0 },
    (a) => {
      a.get('/api/data', () => response({ ok: true }, { headers: { 'X-Total-Count': '42' } }), {
        cors: { allowed_origins: [EXAMPLE], allowed_methods: ['GET', 'POST'], allowed_headers: ['Content-Type'], expose_headers: ['X-Total-Count'], max_age: 600 },
      });
      a.get('/open', () => ({ ok: true }));
    },
    silent,
  );
  const router = app.intoRouter();

  it('should answer a preflight with 204 and the configured headers', async () => {
    const res = await request(router).options('/api/data').set({ Origin: EXAMPLE, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], EXAMPLE);
    assert.equal(res.headers['access-control-allow-methods'], 'GET, POST');
    assert.equal(res.headers['access-control-allow-headers'], 'Content-Type');
    assert.equal(res.headers['access-control-max-age'], '600');
  });

  for (const [name, headers] of [
    ['origin', { Origin: 'https://evil.test', 'Access-Control-Request-Method': 'GET' }],
    ['method', { Origin: EXAMPLE, 'Access-Control-Request-Method': 'DELETE' }],
    ['header', { Origin: EXAMPLE, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'X-Custom-Header' }],
  ] as const) {
    it(`should answer a preflight with a disallowed ${name} with a 403 problem`, async () => {
      const res = await request(router).options('/api/data').set(headers);
      assert.equal(res.status, 403);
      assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
      assert.equal(res.body.status, 403);
    });
  }

  it('should decorate an actual response from an allowed origin', async () => {
    const res = await request(router).get('/api/data').set('Origin', EXAMPLE);
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], EXAMPLE);
    assert.equal(res.headers['access-control-expose-headers'], 'X-Total-Count');
    assert.match(res.headers.vary ?? '', /Origin/);
  });

  it('should refuse an actual request from a disallowed origin with a 403, as the reference does', async () => {
    const res = await request(router).get('/api/data').set('Origin', 'https://EXAMPLE.COM');
    assert.equal(res.status, 403);
    assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
    assert.deepEqual(res.body, { type: 'https://keel.dev/errors/forbidden', title: 'Forbidden', status: 403, detail: "CORS request from origin 'https://EXAMPLE.COM' not allowed" });
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });

  it('should serve a request without Origin (not a CORS request)', async () => {
    assert.equal((await request(router).get('/api/data')).status, 200);
  });

  it('should add nothing to a route without a CorsConfig', async () => {
    const res = await request(router).get('/open').set('Origin', EXAMPLE);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });

  it('should reject disallowed origins on keel routes through app.use(cors({ rejectDisallowedOrigins }))', async () => {
    const strict = createApp({ port: 0 }, (a) => {
      a.use(cors({ allowed_origins: [EXAMPLE], rejectDisallowedOrigins: true }));
      a.get('/x', () => ({ ok: true }));
    }, silent);
    const res = await request(strict.intoRouter()).get('/x').set('Origin', 'https://malicious-site.com');
    assert.equal(res.status, 403);
    assert.equal(res.body.detail, "CORS request from origin 'https://malicious-site.com' not allowed");
  });
});

describe('when a keel route has a CorsConfig, answering as the reference does (cors.rs, server/mod.rs)', () => {
  let optionsHandlerRuns = 0;
  const app = createApp(
    { port: 0 },
    (a) => {
      a.get('/any', () => ({ ok: true }), { cors: {} });
      a.post('/listed', () => ({ ok: true }), { cors: { allowed_origins: [EXAMPLE], allowed_methods: ['GET', 'POST'], allowed_headers: ['Content-Type', 'X-Custom-Header'], max_age: 3600, allow_credentials: true } });
      a.get('/own-options', () => ({ ok: true }), { cors: { allowed_origins: [EXAMPLE] } });
      a.options('/own-options', () => {
        optionsHandlerRuns++;
        return { own: true };
      }, { cors: { allowed_origins: [EXAMPLE] } });
      a.get('/plain-options', () => ({ ok: true }), { cors: { allowed_origins: [EXAMPLE] } });
      a.options('/plain-options', () => ({ plain: true }));
    },
    silent,
  );
  const router = app.intoRouter();

  it('should echo the origin allowed through "*", with Vary: Origin, and list the configured methods and headers', async () => {
    const res = await request(router).options('/any').set({ Origin: 'https://a.test', 'Access-Control-Request-Method': 'GET' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], 'https://a.test');
    assert.equal(res.headers['access-control-allow-methods'], '*');
    assert.equal(res.headers['access-control-allow-headers'], '');
    assert.match(res.headers.vary ?? '', /Origin/);
    const actual = await request(router).get('/any').set('Origin', 'https://a.test');
    assert.equal(actual.status, 200);
    assert.equal(actual.headers['access-control-allow-origin'], 'https://a.test');
    assert.match(actual.headers.vary ?? '', /Origin/);
  });

  it('should refuse a preflight asking for a header when allowed_headers is left empty', async () => {
    const res = await request(router).options('/any').set({ Origin: 'https://a.test', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'Content-Type' });
    assert.equal(res.status, 403);
    assert.equal(res.body.detail, "CORS preflight for header(s) 'Content-Type' not allowed");
  });

  it('should list the configured headers (not the requested ones) and grant credentials to a listed origin', async () => {
    const res = await request(router).options('/listed').set({ Origin: EXAMPLE, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'x-custom-header' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], EXAMPLE);
    assert.equal(res.headers['access-control-allow-methods'], 'GET, POST');
    assert.equal(res.headers['access-control-allow-headers'], 'Content-Type, X-Custom-Header');
    assert.equal(res.headers['access-control-max-age'], '3600');
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
    const actual = await request(router).post('/listed').set('Origin', EXAMPLE);
    assert.equal(actual.headers['access-control-allow-credentials'], 'true');
    assert.equal(actual.headers['access-control-expose-headers'], undefined);
  });

  it('should answer an OPTIONS request with Origin but without Access-Control-Request-Method as a preflight', async () => {
    const res = await request(router).options('/listed').set('Origin', EXAMPLE);
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], EXAMPLE);
    assert.equal(res.headers['access-control-allow-methods'], 'GET, POST');
  });

  it("should refuse an OPTIONS request without Origin with the reference's 403 (origin '')", async () => {
    const res = await request(router).options('/listed');
    assert.equal(res.status, 403);
    assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
    assert.equal(res.body.detail, "CORS request from origin '' not allowed");
  });

  it("should answer an OPTIONS route's preflights itself when that route has a CorsConfig", async () => {
    const before = optionsHandlerRuns;
    const res = await request(router).options('/own-options').set('Origin', EXAMPLE);
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], EXAMPLE);
    assert.equal(optionsHandlerRuns, before);
  });

  it('should leave an OPTIONS route without a CorsConfig to its handler', async () => {
    const res = await request(router).options('/plain-options').set({ Origin: EXAMPLE, 'Access-Control-Request-Method': 'GET' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { plain: true });
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });
});

// ---------------------------------------------------------------- conformance
const root = join(process.cwd(), '..', 'shared', 'conformance');
const present = existsSync(root);

/** The fixtures spell the keys `allow_*`; CorsConfig's are `allowed_*`. */
function fromFixture(c: Record<string, unknown>): CorsOptions {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(c)) out[k.replace(/^allow_(origins|methods|headers)$/, 'allowed_$1')] = v;
  return out as CorsOptions;
}

/**
 * Cases that carry no CorsConfig: the configuration their notes/expectations imply, stated here
 * (keel's reading of each case). `null` = outside CorsConfig, with the reason.
 */
const IMPLIED: Record<string, CorsOptions | string> = {
  '09_cors_expose_headers': { allowed_origins: [EXAMPLE], allowed_methods: ['GET'], expose_headers: ['X-Total-Count', 'X-Request-Id'] },
  '12_cors_regex_origin_pattern': 'regex origins are outside CorsConfig (exact matches and "*" only)',
  '13_cors_origin_case_sensitivity': { allowed_origins: [EXAMPLE] },
  '14_cors_put_method': { allowed_origins: ['https://app.example.com'], allowed_methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], allowed_headers: ['Content-Type', 'X-Custom-Header'], max_age: 3600 },
  '17_cors_private_network_access': { allowed_origins: ['https://public.example.com'], allowed_methods: ['GET', 'POST'], allowPrivateNetwork: true },
  cors_request_blocked: { allowed_origins: [EXAMPLE], rejectDisallowedOrigins: true },
  cors_safelisted_headers_without_preflight: { allowed_origins: ['https://app.example.com'] },
  cors_allow_credentials_flag: { allowed_origins: [EXAMPLE], allow_credentials: true },
  cors_restricted_methods_post_get_only: 'expects Access-Control-Allow-Methods on a non-preflight response, which the Fetch standard only reads on preflights',
};

interface Case { id: string; handler: Record<string, any>; request: Record<string, any>; expected: Record<string, any> }

function loadCases(): Case[] {
  const out: Case[] = [];
  const dir = join(root, 'testing_data', 'cors');
  for (const f of readdirSync(dir).filter((n) => /^\d+_.*\.json$/.test(n))) {
    const c = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    out.push({ id: f.replace(/\.json$/, ''), handler: c.handler ?? {}, request: c.request, expected: c.expected_response });
  }
  for (const c of JSON.parse(readFileSync(join(root, 'fixtures', 'cors.json'), 'utf8'))) {
    out.push({ id: `fixtures/${c.id}`, handler: c.http.handler, request: c.http.request, expected: c.http.expected_response });
  }
  return out;
}

function appFor(c: Case, options: CorsOptions) {
  const app = express();
  app.use(cors(options));
  // The handler produces the case's *own* body and non-CORS headers; every CORS header and every
  // rejection comes from the middleware.
  app.all(/.*/, (_req, res) => {
    for (const [k, v] of Object.entries((c.expected.headers ?? {}) as Record<string, string>)) {
      if (!/^(access-control-|vary$)/i.test(k)) res.setHeader(k, v);
    }
    res.status(200).json(c.expected.body ?? {});
  });
  return app;
}

describe('cors conformance cases (../shared/conformance, cors)', () => {
  if (!present) {
    it.skip('skipped: ../shared/conformance is absent', () => {});
    return;
  }
  for (const c of loadCases()) {
    const key = c.id.replace(/^fixtures\//, '');
    const given = c.handler.cors ?? c.handler.middleware?.cors;
    const options = given ? fromFixture(given) : IMPLIED[key];
    if (typeof options === 'string' || options === undefined) {
      it.skip(`skipped ${c.id}: ${options ?? 'no configuration'}`, () => {});
      continue;
    }
    it(`should pass ${c.id}${given ? '' : ' (implied configuration)'}`, async () => {
      const res = await request(appFor(c, options))[c.request.method.toLowerCase() as 'get'](c.request.path).set(c.request.headers ?? {});
      assert.equal(res.status, c.expected.status_code);
      for (const [k, v] of Object.entries((c.expected.headers ?? {}) as Record<string, string>)) {
        assert.equal(res.headers[k.toLowerCase()], v, k);
      }
      if (c.expected.body !== undefined && c.expected.status_code < 400) assert.deepEqual(res.body, c.expected.body);
      if (c.expected.body?.detail) assert.equal(res.body.detail, c.expected.body.detail);
    });
  }
});
