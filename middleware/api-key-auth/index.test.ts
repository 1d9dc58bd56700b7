import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import type express from 'express';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import request from 'supertest';
import { ConfigError } from '../../lib/http/errors.js';
import type { KeelRequest } from '../../lib/http/request.js';
import { apiKeyAuth, type ApiKeyAuthOptions } from './index.js';
import { describeOnReject, describeOnRejectConfig } from '../../test/helpers/on-reject.js';

// Every test in this block runs under Express 4 and under Express 5 (test/helpers/express-versions.ts).
for (const { name: expressVersion, express } of EXPRESS_VERSIONS) describe(`under ${expressVersion}`, () => {
function appWith(options: ApiKeyAuthOptions): express.Express {
  const app = express();
  app.use(apiKeyAuth(options));
  app.get('/data', (req, res) => {
    res.json({ apiKey: (req as KeelRequest).apiKey ?? null });
  });
  return app;
}

const KEYS = ['sk_live_first_0123456789', 'sk_live_second_0123456789'];

const MISSING = 'Missing API key';
const INVALID = 'Invalid API key';

/** The whole problem, title and detail as the reference implementation words them. */
async function expect401(req: request.Test, title: string, detail: string, challenge = 'ApiKey header="X-API-Key"') {
  const res = await req;
  assert.equal(res.status, 401);
  assert.match(res.headers['content-type']!, /^application\/problem\+json/);
  assert.deepEqual(res.body, { type: 'https://keel.dev/errors/unauthorized', title, status: 401, detail });
  assert.equal(res.headers['www-authenticate'], challenge);
  assert.equal(JSON.stringify(res.body).includes('sk_live'), false, 'no key material in the problem');
}

describe('apiKeyAuth', () => {
  describe('when the configuration is invalid', () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['a server config without keys', {}, /ApiKeyConfig.*keys.*required/],
      ['a server config with an empty key list', { keys: [] }, /ApiKeyConfig.*keys/],
      ['an enabled route without keys', { enabled: true }, /ApiKeyAuthConfig.*keys.*never an open gate/],
      ['an enabled route with an empty key list', { enabled: true, keys: [] }, /never an open gate/],
      ['the <API_KEY> placeholder', { keys: ['<API_KEY>'] }, /placeholder/],
      ['an empty key', { keys: ['ok-key', ''] }, /keys\[1\]/],
      ['a key that is not a string', { keys: [42] }, /keys\[0\]/],
      ['an empty header name', { keys: KEYS, header_name: '' }, /header_name/],
      ['a header name with spaces', { keys: KEYS, header_name: 'X API Key' }, /header_name.*RFC 9110/],
      ['allow_query that is not a boolean', { keys: KEYS, allow_query: 'yes' }, /allow_query.*true or false/],
      ['an empty query parameter name', { keys: KEYS, allow_query: true, query_param: '' }, /query_param/],
      ['allow_query given twice', { keys: KEYS, allow_query: true, allowQuery: true }, /only one of/],
      ['a duplicated key', { keys: [KEYS[0], KEYS[1], KEYS[0]] }, /keys\[2\].*keys\[0\]/],
      ['an unknown key', { keys: KEYS, header: 'X-Key' }, /Unknown key "header"/],
    ];
    for (const [name, options, message] of cases) {
      it(`should throw a ConfigError for ${name}`, () => {
        assert.throws(() => apiKeyAuth(options as ApiKeyAuthOptions), (err: unknown) => err instanceof ConfigError && message.test(err.message));
      });
    }
    it('should not print a duplicated key', () => {
      assert.throws(() => apiKeyAuth({ keys: [KEYS[0]!, KEYS[0]!] }), (err: unknown) => err instanceof ConfigError && !err.message.includes('sk_live'));
    });
  });

  describe('when the requirement is disabled', () => {
    it('should pass every request, even without keys', async () => {
      const res = await request(appWith({ enabled: false })).get('/data');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { apiKey: null });
    });
  });

  describe('when keys are read from the default header', () => {
    const app = appWith({ keys: KEYS });
    it('should accept a valid key and record which one matched', async () => {
      const res = await request(app).get('/data').set('X-API-Key', KEYS[1]!);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.apiKey, { source: 'header', index: 1 });
    });
    it('should read the header name case-insensitively', async () => {
      const res = await request(app).get('/data').set('x-api-key', KEYS[0]!);
      assert.equal(res.status, 200);
    });
    it('should say "missing" when no key is sent', async () => {
      await expect401(request(app).get('/data'), MISSING, "Expected 'X-API-Key' header with valid API key");
    });
    it('should say "missing" for an empty header', async () => {
      await expect401(request(app).get('/data').set('X-API-Key', ''), MISSING, "Expected 'X-API-Key' header with valid API key");
    });
    it('should not read the query string by default', async () => {
      await expect401(request(app).get(`/data?api_key=${KEYS[0]}`), MISSING, "Expected 'X-API-Key' header with valid API key");
    });
    const wrong: Array<[string, string]> = [
      ['an unknown key', 'sk_live_unknown'],
      ['a prefix of a valid key', KEYS[0]!.slice(0, -1)],
      ['a valid key with a suffix', `${KEYS[0]}x`],
      ['a valid key in another case', KEYS[0]!.toUpperCase()],
      ['a much longer value', 'x'.repeat(4096)],
      ['two valid keys joined', `${KEYS[0]}, ${KEYS[1]}`],
    ];
    for (const [name, value] of wrong) {
      it(`should say "invalid" for ${name} (compared over fixed-length digests, so lengths never throw)`, async () => {
        await expect401(request(app).get('/data').set('X-API-Key', value), INVALID, 'The provided API key is not valid');
      });
    }
  });

  describe('when a custom header name is configured', () => {
    const app = appWith({ enabled: true, keys: KEYS, headerName: 'X-API-Token' });
    it('should accept the key in that header', async () => {
      const res = await request(app).get('/data').set('X-API-Token', KEYS[0]!);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.apiKey, { source: 'header', index: 0 });
    });
    it('should ignore the default header and name the custom one in the challenge', async () => {
      await expect401(request(app).get('/data').set('X-API-Key', KEYS[0]!), MISSING, "Expected 'X-API-Token' header with valid API key", 'ApiKey header="X-API-Token"');
    });
  });

  describe('when query keys are allowed', () => {
    const app = appWith({ keys: KEYS, allow_query: true });
    const challenge = 'ApiKey header="X-API-Key", query="api_key"';
    it('should accept the key in the api_key parameter', async () => {
      const res = await request(app).get(`/data?x=1&api_key=${KEYS[0]}`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.apiKey, { source: 'query', index: 0 });
    });
    it('should decode a percent-encoded key', async () => {
      const app2 = appWith({ keys: ['key with spaces&more'], allowQuery: true });
      const res = await request(app2).get(`/data?api_key=${encodeURIComponent('key with spaces&more')}`);
      assert.equal(res.status, 200);
    });
    it('should use a custom parameter name', async () => {
      const app2 = appWith({ keys: KEYS, allow_query: true, query_param: 'token' });
      assert.equal((await request(app2).get(`/data?token=${KEYS[1]}`)).status, 200);
      await expect401(request(app2).get(`/data?api_key=${KEYS[1]}`), MISSING, "Expected 'X-API-Key' header or 'token' query parameter with valid API key", 'ApiKey header="X-API-Key", query="token"');
    });
    it('should name both places when the key is missing', async () => {
      await expect401(request(app).get('/data'), MISSING, "Expected 'X-API-Key' header or 'api_key' query parameter with valid API key", challenge);
    });
    it('should reject a parameter given twice', async () => {
      await expect401(request(app).get(`/data?api_key=${KEYS[0]}&api_key=${KEYS[1]}`), INVALID, "The 'api_key' query parameter is given more than once", challenge);
    });
    it('should not let a valid query key rescue a wrong header key', async () => {
      await expect401(request(app).get(`/data?api_key=${KEYS[0]}`).set('X-API-Key', 'wrong'), INVALID, 'The provided API key is not valid', challenge);
    });
    it('should reject a wrong query key', async () => {
      await expect401(request(app).get('/data?api_key=wrong'), INVALID, 'The provided API key is not valid', challenge);
    });
  });
});

// ------------------------------------------------------------------ conformance corpus (read-only, never copied)
const CORPUS = new URL('../../../shared/conformance/', import.meta.url);

function loadCases(): Array<{ name: string; config: Record<string, unknown>; path: string; headers: Record<string, string>; status: number }> | null {
  let files: string[];
  try {
    files = readdirSync(new URL('testing_data/auth/', CORPUS)).filter((f) => /^\d+_.*\.json$/.test(f));
  } catch {
    return null;
  }
  const raw: Array<[string, { handler: { middleware?: Record<string, unknown> }; request: { path: string; headers?: Record<string, string> }; expected_response: { status_code: number } }]> = [
    ...files.map((f) => [f, JSON.parse(readFileSync(new URL(`testing_data/auth/${f}`, CORPUS), 'utf8'))] as [string, never]),
    ...JSON.parse(readFileSync(new URL('fixtures/auth.json', CORPUS), 'utf8')).map((c: { id: string; http: unknown }) => [`fixtures/auth.json#${c.id}`, c.http] as [string, never]),
  ];
  return raw
    .filter(([, c]) => c.handler.middleware?.api_key_auth && !c.handler.middleware.jwt_auth)
    .map(([name, c]) => ({ name, config: c.handler.middleware!.api_key_auth as Record<string, unknown>, path: c.request.path, headers: c.request.headers ?? {}, status: c.expected_response.status_code }));
}

describe('apiKeyAuth against the conformance corpus', () => {
  const cases = loadCases();
  if (cases === null) {
    it('should run the corpus cases (skipped: ../shared/conformance is absent)', { skip: 'conformance corpus not found' }, () => {});
    return;
  }
  for (const c of cases) {
    // Query keys are opt-in in keel (keys in URLs leak into logs); the query cases turn the extension on.
    const query = c.path.includes('api_key=');
    it(`${c.name}: should answer ${c.status}${query ? ' (with the keel extension allow_query: true)' : ''}`, async () => {
      let req = request(appWith({ ...c.config, ...(query ? { allow_query: true } : {}) })).get(c.path.replace(/^\/[^?]*/, '/data'));
      for (const [k, v] of Object.entries(c.headers)) req = req.set(k, v);
      const res = await req;
      assert.equal(res.status, c.status);
    });
  }
});
});

describeOnReject('apiKeyAuth, a missing key', {
  make: (onReject) => apiKeyAuth({ keys: ['k-1234567890'], onReject }),
  send: (agent) => agent.get('/'),
  status: 401,
  headers: ['WWW-Authenticate'],
});
describeOnReject('apiKeyAuth, a wrong key', {
  make: (onReject) => apiKeyAuth({ keys: ['k-1234567890'], onReject }),
  send: (agent) => agent.get('/').set('X-API-Key', 'nope'),
  status: 401,
  headers: ['WWW-Authenticate'],
});
describeOnRejectConfig('apiKeyAuth', (o) => apiKeyAuth({ keys: ['k-1234567890'], ...o }), /ApiKeyConfig/);
describeOnRejectConfig('apiKeyAuth per route', (o) => apiKeyAuth({ enabled: true, keys: ['k-1234567890'], ...o }), /ApiKeyAuthConfig/);
