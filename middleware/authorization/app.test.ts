import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { pino } from 'pino';
import { SignJWT } from 'jose';
import { ConfigError, createApp } from '../../lib/index.js';

const silent = { logger: pino({ level: 'silent' }) };
const SECRET = 'a-test-secret-that-is-32-bytes!!';
const bearer = async (claims: Record<string, unknown>) =>
  `Bearer ${await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(SECRET))}`;

describe('authorization inside createApp', () => {
  const router = createApp({ jwt_auth: { secret: SECRET } }, (a) => {
    a.get('/admin', () => ({ ok: true }), { authorization: { required_role: 'admin' } });
    a.get('/reports', () => ({ ok: true }), { authorization: { required_scopes: ['reports:read'], required_permissions: ['export'], require_all: false } });
    a.get('/open', () => ({ ok: true }), { jwt_auth: { enabled: false }, authorization: { required_roles: ['admin'] } });
  }, silent).intoRouter();

  describe('when the token carries the required role', () => {
    it('should serve the route', async () => {
      assert.equal((await request(router).get('/admin').set('Authorization', await bearer({ roles: ['admin'] }))).status, 200);
    });
  });

  describe('when the token lacks it', () => {
    it('should answer a 403 problem naming what is missing', async () => {
      const res = await request(router).get('/admin').set('Authorization', await bearer({ sub: 'user123' }));
      assert.equal(res.status, 403);
      assert.match(res.headers['content-type']!, /^application\/problem\+json/);
      assert.equal(res.body.type, 'https://keel.dev/errors/forbidden');
      assert.deepEqual(res.body.missing, { roles: ['admin'] });
    });
  });

  describe('when any one requirement suffices', () => {
    it('should accept the permission alone and refuse neither', async () => {
      assert.equal((await request(router).get('/reports').set('Authorization', await bearer({ permissions: ['export'] }))).status, 200);
      const res = await request(router).get('/reports').set('Authorization', await bearer({ scope: 'reports:write' }));
      assert.equal(res.status, 403);
      assert.equal(res.headers['www-authenticate'], 'Bearer error="insufficient_scope", scope="reports:read"');
    });
  });

  describe('when the route has no token authentication', () => {
    it('should answer 403: no authenticator can produce claims, so there is no challenge to answer', async () => {
      const res = await request(router).get('/open');
      assert.equal(res.status, 403);
      assert.equal(res.headers['www-authenticate'], undefined);
      assert.match(res.headers['content-type']!, /^application\/problem\+json/);
      assert.deepEqual(res.body, { type: 'https://keel.dev/errors/forbidden', title: 'Forbidden', status: 403, detail: 'Insufficient permissions to access this resource' });
    });
    it('should answer 403 even to a request carrying a token nobody verifies', async () => {
      assert.equal((await request(router).get('/open').set('Authorization', await bearer({ roles: ['admin'] }))).status, 403);
    });
  });

  describe('when the server has no JWT authentication at all', () => {
    const bare = createApp({}, (a) => {
      a.get('/admin/config', () => ({ ok: true }), { authorization: { required_role: 'admin' } });
    }, silent).intoRouter();
    it('should answer the 403 problem without a challenge', async () => {
      const res = await request(bare).get('/admin/config');
      assert.equal(res.status, 403);
      assert.equal(res.headers['www-authenticate'], undefined);
    });
  });

  describe('when a route enables its own JWT authentication', () => {
    const own = createApp({}, (a) => {
      a.get('/admin', () => ({ ok: true }), { jwt_auth: { secret: SECRET }, authorization: { required_role: 'admin' } });
    }, silent).intoRouter();
    it('should keep the 401 Bearer challenge for a request without a token and serve the role', async () => {
      const res = await request(own).get('/admin');
      assert.equal(res.status, 401);
      assert.equal(res.headers['www-authenticate'], 'Bearer');
      assert.equal((await request(own).get('/admin').set('Authorization', await bearer({ roles: ['admin'] }))).status, 200);
    });
  });

  describe('when the record is bad', () => {
    // Bad values on purpose (the compiler refuses them too): the runtime check is under test.
    const build = (authorization: unknown) => () => createApp({}, (a) => a.get('/', () => ({}), { authorization: authorization as never }), silent).intoRouter();
    // The App reports a bad route record as AppError('Route') whose cause is the ConfigError.
    const configError = (pattern: RegExp) => (err: unknown) =>
      (err instanceof ConfigError || (err as Error).cause instanceof ConfigError) && pattern.test((err as Error).message);
    it('should fail when the app is built for a record the parser rejects', () => {
      assert.throws(build({ required_roles: 'admin' }), configError(/required_roles/));
    });
    it('should fail when the app is built for a scope that can never match', () => {
      assert.throws(build({ required_scopes: ['read write'] }), configError(/scope token/));
    });
  });
});
