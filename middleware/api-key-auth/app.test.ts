import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { pino } from 'pino';
import { ConfigError, createApp } from '../../lib/index.js';
import { apiKeyAuth } from './index.js';

const silent = { logger: pino({ level: 'silent' }) };
const KEYS = ['sk_test_123456', 'sk_test_789012'];

describe('apiKeyAuth inside createApp', () => {
  describe('when ServerConfig.api_key_auth is set', () => {
    const router = createApp({ api_key_auth: { keys: KEYS } }, (a) => {
      a.get('/data', () => ({ data: 'sensitive information' }));
    }, silent).intoRouter();
    it('should serve a request with a valid key', async () => {
      const res = await request(router).get('/data').set('X-API-Key', KEYS[1]!);
      assert.equal(res.status, 200);
    });
    it('should tell a missing key from an invalid one', async () => {
      const missing = await request(router).get('/data');
      const invalid = await request(router).get('/data').set('X-API-Key', 'nope');
      assert.deepEqual([missing.status, invalid.status], [401, 401]);
      assert.deepEqual([missing.body.title, missing.body.detail], ['Missing API key', "Expected 'X-API-Key' header with valid API key"]);
      assert.deepEqual([invalid.body.title, invalid.body.detail], ['Invalid API key', 'The provided API key is not valid']);
      assert.equal(invalid.headers['www-authenticate'], 'ApiKey header="X-API-Key"');
      assert.match(invalid.headers['content-type']!, /^application\/problem\+json/);
    });
  });

  describe('when a route carries its own api_key_auth', () => {
    const router = createApp({}, (a) => {
      a.get('/public', () => ({ ok: true }));
      a.get('/token', () => ({ ok: true }), { api_key_auth: { enabled: true, keys: ['token_xyz789'], header_name: 'X-API-Token' } });
      // The query extension is not a record key, so a route passes the factory itself.
      a.get('/webhook', () => ({ ok: true }), { middleware: [apiKeyAuth({ keys: KEYS, allow_query: true })] });
    }, silent).intoRouter();
    it('should guard only that route, with its header name', async () => {
      assert.equal((await request(router).get('/public')).status, 200);
      assert.equal((await request(router).get('/token').set('X-API-Key', 'token_xyz789')).status, 401);
      assert.equal((await request(router).get('/token').set('X-API-Token', 'token_xyz789')).status, 200);
    });
    it('should accept a query key where the route allows it', async () => {
      assert.equal((await request(router).get('/webhook?api_key=sk_test_123456')).status, 200);
      assert.equal((await request(router).get('/webhook?api_key=bad')).status, 401);
    });
  });

  describe('when a route requires API keys but lists none', () => {
    it('should fail when the app is built, never open the gate', () => {
      assert.throws(
        () => createApp({}, (a) => a.get('/', () => ({}), { api_key_auth: { enabled: true, header_name: 'X-Key' } }), silent).intoRouter(),
        (err: unknown) => err instanceof ConfigError && /never an open gate/.test(err.message),
      );
    });
  });
});
