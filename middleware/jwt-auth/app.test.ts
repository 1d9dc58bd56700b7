import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { pino } from 'pino';
import { SignJWT, exportSPKI, generateKeyPair } from 'jose';
import { AppError, ConfigError, createApp } from '../../lib/index.js';

const silent = { logger: pino({ level: 'silent' }) };
const SECRET = 'a-test-secret-that-is-32-bytes!!';
const sign = (claims: Record<string, unknown>, secret = SECRET) =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret));

describe('jwtAuth inside createApp', () => {
  describe('when ServerConfig.jwt_auth is set', () => {
    const app = createApp({ jwt_auth: { secret: SECRET, issuer: 'https://auth.example.com' } }, (a) => {
      a.get('/me', (data) => ({ sub: data.auth?.sub ?? null }));
    }, silent);
    const router = app.intoRouter();
    it('should hand the verified claims to the handler', async () => {
      const res = await request(router).get('/me').set('Authorization', `Bearer ${await sign({ sub: 'u1', iss: 'https://auth.example.com' })}`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { sub: 'u1' });
    });
    it('should answer 401 problems before the handler runs', async () => {
      const res = await request(router).get('/me').set('Authorization', `Bearer ${await sign({ sub: 'u1', iss: 'https://evil.example.com' })}`);
      assert.equal(res.status, 401);
      assert.match(res.headers['content-type']!, /^application\/problem\+json/);
      assert.equal(res.body.detail, "Token issuer is invalid, expected 'https://auth.example.com'");
      assert.match(res.headers['www-authenticate']!, /^Bearer error="invalid_token"/);
    });
    it('should answer 401 without a token', async () => {
      const res = await request(router).get('/me');
      assert.equal(res.status, 401);
      assert.equal(res.headers['www-authenticate'], 'Bearer');
    });
  });

  describe('when a route carries its own jwt_auth', () => {
    it('should verify with the route key (RS256) and leave other routes open', async () => {
      const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
      const pem = await exportSPKI(publicKey);
      const app = createApp({}, (a) => {
        a.get('/open', () => ({ open: true }));
        a.get('/secure', (data) => ({ sub: data.auth?.sub }), { jwt_auth: { enabled: true, algorithm: 'RS256', public_key: pem } });
      }, silent);
      const router = app.intoRouter();
      assert.equal((await request(router).get('/open')).status, 200);
      assert.equal((await request(router).get('/secure')).status, 401);
      const token = await new SignJWT({ sub: 'rs' }).setProtectedHeader({ alg: 'RS256' }).sign(privateKey);
      const res = await request(router).get('/secure').set('Authorization', `Bearer ${token}`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { sub: 'rs' });
    });
    it('should let a route turn the server requirement off with enabled: false', async () => {
      const app = createApp({ jwt_auth: { secret: SECRET } }, (a) => {
        a.get('/health', () => ({ ok: true }), { jwt_auth: { enabled: false } });
        a.get('/private', () => ({ ok: true }));
      }, silent);
      const router = app.intoRouter();
      assert.equal((await request(router).get('/health')).status, 200);
      assert.equal((await request(router).get('/private')).status, 401);
    });
  });

  describe('when the configuration is bad', () => {
    it('should fail when the app is built, not on the first request', () => {
      assert.throws(() => createApp({ jwt_auth: { secret: 'too-short' } }, (a) => a.get('/', () => ({})), silent).intoRouter(), ConfigError);
    });
    it('should refuse an enabled route without key material when the route is registered', () => {
      // Route errors are AppError('Route') naming the route (as for schemas), the record's ConfigError as the cause.
      assert.throws(
        () => createApp({}, (a) => a.get('/', () => ({}), { jwt_auth: { enabled: true, algorithm: 'RS256' } }), silent),
        (err: unknown) => err instanceof AppError && err.cause instanceof ConfigError && /Route\(GET \/\)\.jwt_auth\.public_key/.test(err.message),
      );
    });
  });
});
