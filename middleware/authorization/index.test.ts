import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type express from 'express';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import request from 'supertest';
import { SignJWT } from 'jose';
import { ConfigError } from '../../lib/http/errors.js';
import type { KeelRequest } from '../../lib/http/request.js';
import { jwtAuth } from '../jwt-auth/index.js';
import { authorization, grantsOf, type AuthorizationConfigInput, type AuthorizationOptions } from './index.js';
import { describeOnReject, describeOnRejectConfig } from '../../test/helpers/on-reject.js';

/** The app under test takes its claims from a test header, standing in for an authenticator. */
// Every test in this block runs under Express 4 and under Express 5 (test/helpers/express-versions.ts).
for (const { name: expressVersion, express } of EXPRESS_VERSIONS) describe(`under ${expressVersion}`, () => {
function appWith(options: AuthorizationOptions): express.Express {
  const app = express();
  app.use((req, _res, next) => {
    const claims = req.headers['x-test-claims'];
    if (typeof claims === 'string') (req as KeelRequest).auth = JSON.parse(claims);
    next();
  });
  app.use(authorization(options));
  app.get('/', (_req, res) => {
    res.json({ ok: true });
  });
  return app;
}

const get = (app: express.Express, claims?: Record<string, unknown>) => {
  const req = request(app).get('/');
  return claims ? req.set('X-Test-Claims', JSON.stringify(claims)) : req;
};

/** The whole 403: the reference's title and detail, what is lacking in `missing`. */
async function expect403(res: request.Response, missing: Record<string, string[]>) {
  assert.equal(res.status, 403);
  assert.match(res.headers['content-type']!, /^application\/problem\+json/);
  assert.deepEqual(res.body, { type: 'https://keel.dev/errors/forbidden', title: 'Forbidden', status: 403, detail: 'Insufficient permissions to access this resource', missing });
}

describe('authorization', () => {
  describe('when the configuration is invalid', () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['required_roles that is not a list', { required_roles: 'admin' }, /required_roles/],
      ['an empty role name', { required_roles: [''] }, /required_roles\[0\]/],
      ['a scope that is not a string', { required_scopes: [1] }, /required_scopes\[0\]/],
      ['a scope with a space', { required_scopes: ['read write'] }, /required_scopes\[0\].*scope token/],
      ['a scope with a quote', { required_scopes: ['read"'] }, /required_scopes\[0\]/],
      ['require_all that is not a boolean', { require_all: 'yes' }, /require_all/],
      ['required_role that is a number', { required_role: 5 }, /required_role/],
      ['an unknown key', { required_claims: ['x'] }, /Unknown key "required_claims"/],
      ['challenge that is not a boolean', { challenge: 'no' }, /AuthorizationConfig.challenge: expected true or false, got "no"/],
    ];
    for (const [name, options, message] of cases) {
      it(`should throw a ConfigError for ${name}`, () => {
        assert.throws(() => authorization(options as AuthorizationConfigInput), (err: unknown) => err instanceof ConfigError && message.test(err.message));
      });
    }
  });

  describe('when the request carries no verified claims', () => {
    it('should answer 401 with a Bearer challenge', async () => {
      const res = await get(appWith({ required_roles: ['admin'] }));
      assert.equal(res.status, 401);
      assert.equal(res.body.type, 'https://keel.dev/errors/unauthorized');
      assert.equal(res.headers['www-authenticate'], 'Bearer');
    });
    it('should answer 401 with the defaults (nothing listed still needs authentication)', async () => {
      assert.equal((await get(appWith({}))).status, 401);
      assert.equal((await get(appWith({}), { sub: 'u' })).status, 200);
    });
  });

  describe('when challenge is false (no authenticator in front can produce claims)', () => {
    const closed = { type: 'https://keel.dev/errors/forbidden', title: 'Forbidden', status: 403, detail: 'Insufficient permissions to access this resource' };
    it('should answer the 403 without a challenge and without restating the requirements', async () => {
      const res = await get(appWith({ required_roles: ['admin'], required_scopes: ['a:b'], challenge: false }));
      assert.equal(res.status, 403);
      assert.deepEqual(res.body, closed);
      assert.equal(res.headers['www-authenticate'], undefined);
    });
    it('should answer 403 with nothing listed, and still check claims that are there', async () => {
      assert.deepEqual((await get(appWith({ challenge: false }))).body, closed);
      assert.equal((await get(appWith({ challenge: false }), { sub: 'u' })).status, 200);
      await expect403(await get(appWith({ required_roles: ['admin'], challenge: false }), { roles: ['user'] }), { roles: ['admin'] });
    });
  });

  describe('when every requirement must hold (require_all: true, the default)', () => {
    const app = appWith({ required_roles: ['admin', 'ops'], required_scopes: ['users:write'], required_permissions: ['delete:users'] });
    it('should pass a caller holding everything', async () => {
      const res = await get(app, { roles: ['admin', 'ops', 'x'], scope: 'users:read users:write', permissions: ['delete:users'] });
      assert.equal(res.status, 200);
    });
    it('should name exactly what is missing', async () => {
      const res = await get(app, { roles: ['admin'], scope: 'users:read', permissions: ['delete:users'] });
      await expect403(res, { roles: ['ops'], scopes: ['users:write'] });
      assert.equal(res.headers['www-authenticate'], 'Bearer error="insufficient_scope", scope="users:write"');
    });
    it('should list all requirements for a caller holding none', async () => {
      const res = await get(app, { sub: 'u' });
      await expect403(res, { roles: ['admin', 'ops'], scopes: ['users:write'], permissions: ['delete:users'] });
    });
    it('should not send a scope challenge when only roles are missing', async () => {
      const res = await get(app, { roles: ['admin'], scope: 'users:write', permissions: ['delete:users'] });
      assert.equal(res.status, 403);
      assert.equal(res.headers['www-authenticate'], undefined);
    });
  });

  describe('when any one requirement suffices (require_all: false)', () => {
    const app = appWith({ requiredRoles: ['admin'], requiredScopes: ['write'], requireAll: false });
    it('should pass a caller with only the role', async () => {
      assert.equal((await get(app, { roles: 'admin' })).status, 200);
    });
    it('should pass a caller with only the scope', async () => {
      assert.equal((await get(app, { scp: ['write'] })).status, 200);
    });
    it('should report every listed requirement when none is held', async () => {
      const res = await get(app, { roles: ['user'], scope: 'read' });
      await expect403(res, { roles: ['admin'], scopes: ['write'] });
    });
  });

  describe('when claims come in their different shapes', () => {
    const cases: Array<[string, Record<string, unknown>, boolean]> = [
      ['roles as an array', { roles: ['admin'] }, true],
      ['roles as one string', { roles: 'admin' }, true],
      ['a singular role claim', { role: 'admin' }, true],
      ['roles as a space-separated string (not split)', { roles: 'user admin' }, false],
      ['a role in another case', { roles: ['Admin'] }, false],
      ['non-string role values', { roles: [1, null, { admin: true }] }, false],
    ];
    const app = appWith({ required_role: 'admin' });
    for (const [name, claims, ok] of cases) {
      it(`should ${ok ? 'accept' : 'reject'} ${name}`, async () => {
        assert.equal((await get(app, claims)).status, ok ? 200 : 403);
      });
    }
    const scopeCases: Array<[string, Record<string, unknown>, boolean]> = [
      ['a space-separated scope string (RFC 8693 §4.2)', { scope: 'read write' }, true],
      ['an scp array', { scp: ['read', 'write'] }, true],
      ['an scp string', { scp: 'read write' }, true],
      ['a scope array', { scope: ['read', 'write'] }, true],
      ['a scope that only contains the requirement as a substring', { scope: 'read write:all' }, false],
    ];
    const scopeApp = appWith({ required_scopes: ['read', 'write'] });
    for (const [name, claims, ok] of scopeCases) {
      it(`should ${ok ? 'accept' : 'reject'} ${name}`, async () => {
        assert.equal((await get(scopeApp, claims)).status, ok ? 200 : 403);
      });
    }
    it('should read permissions as an array or one string', async () => {
      const permApp = appWith({ required_permissions: ['read:data'] });
      assert.equal((await get(permApp, { permissions: ['read:data'] })).status, 200);
      assert.equal((await get(permApp, { permissions: 'read:data' })).status, 200);
      assert.equal((await get(permApp, { permission: 'read:data' })).status, 403);
    });
    it('should expose the claim reading as grantsOf', () => {
      const g = grantsOf({ role: 'a', roles: ['b'], scope: 'c d', scp: ['e'], permissions: ['f'] });
      assert.deepEqual([[...g.roles], [...g.scopes], [...g.permissions]], [['b', 'a'], ['c', 'd', 'e'], ['f']]);
    });
  });

  describe('when placed after jwtAuth', () => {
    const secret = 'a-test-secret-that-is-32-bytes!!';
    const app = express();
    app.use(jwtAuth({ secret }), authorization({ required_roles: ['admin'], required_permissions: ['read'] }));
    app.get('/', (_req, res) => {
      res.json({ ok: true });
    });
    const sign = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret));
    it('should pass a token carrying the role and permission', async () => {
      const res = await request(app).get('/').set('Authorization', `Bearer ${await sign({ roles: ['admin'], permissions: ['read'] })}`);
      assert.equal(res.status, 200);
    });
    it('should answer 403 for a valid token without them', async () => {
      const res = await request(app).get('/').set('Authorization', `Bearer ${await sign({ sub: 'user123' })}`);
      await expect403(res, { roles: ['admin'], permissions: ['read'] });
    });
  });
});
});

const setClaims = (req: KeelRequest, _res: unknown, next: () => void) => {
  const claims = req.headers['x-test-claims'];
  if (typeof claims === 'string') req.auth = JSON.parse(claims);
  next();
};

describeOnReject('authorization, no verified token', {
  make: (onReject) => [setClaims, authorization({ required_roles: ['admin'], onReject })],
  send: (agent) => agent.get('/'),
  status: 401,
  headers: ['WWW-Authenticate'],
  check: (err) => {
    // What express-jwt with credentialsRequired: false, then a missing token, would have said.
    assert.equal(err.name, 'UnauthorizedError');
    assert.equal(err.code, 'credentials_required');
  },
});
describeOnReject('authorization, a lacking scope', {
  make: (onReject) => [setClaims, authorization({ required_scopes: ['users:write'], onReject })],
  send: (agent) => agent.get('/').set('X-Test-Claims', JSON.stringify({ scope: 'users:read' })),
  status: 403,
  headers: ['WWW-Authenticate'],
  check: (err) => assert.deepEqual(err.extensions.missing, { scopes: ['users:write'] }),
});
describeOnRejectConfig('authorization', (o) => authorization(o), /AuthorizationConfig/);
