/**
 * jwtAuth with express-jwt's options, against express-jwt itself on the same requests, under Express
 * 4 and 5. A refusal goes to next(err) as express-jwt's UnauthorizedError (same name, code, status,
 * message, inner name), read here by an error handler like the ones express-jwt users write. Intended
 * differences, each asserted below:
 * - the error also carries `WWW-Authenticate: Bearer …` in `err.headers` (RFC 6750 §3), which Express's
 *   default handler sends; with `onReject: 'respond'` jwtAuth answers a problem+json itself;
 * - an HS secret shorter than the hash (32 / 48 / 64 bytes for HS256 / 384 / 512, RFC 7518 §3.2) is a
 *   ConfigError at start-up; express-jwt accepts it;
 * - exactly one algorithm per configuration (RFC 8725 §3.1).
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { expressjwt } from 'express-jwt';
import { SignJWT, importPKCS8 } from 'jose';
import request from 'supertest';
import { ConfigError } from '../../lib/http/errors.js';
import { EXPRESS_VERSIONS, type ExpressFactory } from '../../test/helpers/express-versions.js';
import { expressjwt as keelExpressjwt, jwtAuth, type JwtPackageOptions } from './index.js';

const SECRET = 'a-shared-secret-of-at-least-32-bytes!!';
const ISSUER = 'https://auth.example.com';
const AUDIENCE = 'https://api.example.com';
const now = () => Math.floor(Date.now() / 1000);

async function hs256(claims: Record<string, unknown>, secret = SECRET): Promise<string> {
  const { exp, ...rest } = claims;
  const jwt = new SignJWT(rest).setProtectedHeader({ alg: 'HS256' }).setIssuedAt();
  if (exp !== undefined) jwt.setExpirationTime(exp as number);
  return jwt.sign(new TextEncoder().encode(secret));
}

type Mw = (req: any, res: any, next: any) => void;
interface Answer { status: number; headers: Record<string, string | undefined>; body: string }

function appWith(express: ExpressFactory, mw: Mw, property = 'auth', handler = false) {
  const app = express();
  app.use(mw);
  app.get('/', (req, res) => void res.json({ claims: (req as unknown as Record<string, unknown>)[property] ?? null }));
  // The error handler express-jwt's README shows, reporting what such handlers read.
  if (handler) {
    app.use((err: any, _req: unknown, res: any, next: (e: unknown) => void) => {
      if (err.name !== 'UnauthorizedError') return next(err);
      res.status(err.status).json({ name: err.name, code: err.code, status: err.status, message: err.message, inner: err.inner?.name, instance: err instanceof Error });
    });
  }
  return app;
}

async function send(app: unknown, headers: Record<string, string>, path = '/', method: 'GET' | 'OPTIONS' = 'GET'): Promise<Answer> {
  const res = await (method === 'GET' ? request(app as never).get(path) : request(app as never).options(path)).set(headers);
  return { status: res.status, headers: res.headers as Record<string, string>, body: res.text };
}

async function compare(express: ExpressFactory, options: Record<string, unknown>, headers: Record<string, string>, path = '/', method: 'GET' | 'OPTIONS' = 'GET', handler = false) {
  const property = (options.requestProperty as string | undefined) ?? 'auth';
  const pkg = await send(appWith(express, expressjwt(options as never), property, handler), headers, path, method);
  const keel = await send(appWith(express, jwtAuth(options as JwtPackageOptions), property, handler), headers, path, method);
  return { pkg, keel };
}
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const claimsOf = (a: Answer) => (JSON.parse(a.body) as { claims: Record<string, unknown> | null }).claims;

for (const { name, express } of EXPRESS_VERSIONS) {
  describe(`jwtAuth with express-jwt options under ${name}`, () => {
    const options = { secret: SECRET, algorithms: ['HS256'], issuer: ISSUER, audience: AUDIENCE };
    let valid: string;
    before(async () => {
      valid = await hs256({ sub: 'user-42', iss: ISSUER, aud: AUDIENCE, exp: now() + 600 });
    });

    it('should accept a valid token and expose the same claims on req.auth', async () => {
      const { pkg, keel } = await compare(express, options, bearer(valid));
      assert.equal(keel.status, 200);
      assert.equal(pkg.status, 200);
      assert.deepEqual(claimsOf(keel), claimsOf(pkg));
    });

    const refused: [string, () => Promise<Record<string, string>>][] = [
      ['no Authorization header', async () => ({})],
      ['an expired token', async () => bearer(await hs256({ sub: 'u', iss: ISSUER, aud: AUDIENCE, exp: now() - 60 }))],
      ['a token signed with another secret', async () => bearer(await hs256({ sub: 'u', iss: ISSUER, aud: AUDIENCE, exp: now() + 60 }, 'another-secret-of-at-least-32-bytes!!'))],
      ['another audience', async () => bearer(await hs256({ sub: 'u', iss: ISSUER, aud: 'https://other.example', exp: now() + 60 }))],
      ['another issuer', async () => bearer(await hs256({ sub: 'u', iss: 'https://evil.example', aud: AUDIENCE, exp: now() + 60 }))],
      ['a malformed token', async () => bearer('not.a.jwt')],
    ];
    for (const [what, headers] of refused) {
      it(`should hand ${what} to the error handler as express-jwt's UnauthorizedError`, async () => {
        const { pkg, keel } = await compare(express, options, await headers(), '/', 'GET', true);
        assert.equal(pkg.status, 401);
        assert.equal(keel.status, 401);
        assert.deepEqual(JSON.parse(keel.body), JSON.parse(pkg.body));
      });
      it(`should answer ${what} through Express's default handler as express-jwt does, plus WWW-Authenticate (intended difference)`, async () => {
        const { pkg, keel } = await compare(express, options, await headers());
        assert.equal(keel.status, pkg.status);
        assert.match(pkg.headers['content-type']!, /^text\/html/);
        assert.match(keel.headers['content-type']!, /^text\/html/);
        assert.equal(pkg.headers['www-authenticate'], undefined);
        assert.match(keel.headers['www-authenticate']!, /^Bearer/);
      });
    }

    it("should answer a problem+json itself with onReject: 'respond'", async () => {
      const app = appWith(express, jwtAuth({ ...options, onReject: 'respond' } as JwtPackageOptions));
      const res = await send(app, bearer('not.a.jwt'));
      assert.equal(res.status, 401);
      assert.match(res.headers['content-type']!, /^application\/problem\+json/);
      assert.match(res.headers['www-authenticate']!, /^Bearer error="invalid_token"/);
      assert.equal(JSON.parse(res.body).detail, 'invalid token');
    });

    describe('when credentialsRequired is false', () => {
      const optional = { ...options, credentialsRequired: false };
      it('should let a request without a token through without claims, as express-jwt does', async () => {
        const { pkg, keel } = await compare(express, optional, {});
        assert.equal(keel.status, pkg.status);
        assert.equal(keel.status, 200);
        assert.equal(claimsOf(keel), null);
        assert.equal(claimsOf(pkg), null);
      });
      it('should let a non-Bearer Authorization header through, as express-jwt does', async () => {
        const { pkg, keel } = await compare(express, optional, { authorization: 'Basic dXNlcjpwYXNz' });
        assert.equal(keel.status, pkg.status);
        assert.equal(keel.status, 200);
      });
      it('should still refuse a bad token, as express-jwt does', async () => {
        const { pkg, keel } = await compare(express, optional, bearer('not.a.jwt'));
        assert.equal(keel.status, pkg.status);
        assert.equal(keel.status, 401);
      });
      it('should still verify a good token', async () => {
        const { pkg, keel } = await compare(express, optional, bearer(valid));
        assert.equal(keel.status, 200);
        assert.deepEqual(claimsOf(keel), claimsOf(pkg));
      });
    });

    describe('when requestProperty is "user"', () => {
      it('should put the claims on req.user, as express-jwt does', async () => {
        const { pkg, keel } = await compare(express, { ...options, requestProperty: 'user' }, bearer(valid));
        assert.equal(keel.status, 200);
        assert.equal(claimsOf(keel)?.sub, 'user-42');
        assert.deepEqual(claimsOf(keel), claimsOf(pkg));
      });
    });

    describe('when getToken reads the query string', () => {
      for (const kind of ['synchronous', 'asynchronous']) {
        it(`should verify the token it returns (${kind}), as express-jwt does`, async () => {
          const read = (req: { query: Record<string, string> }) => req.query.token;
          const getToken = kind === 'synchronous' ? read : async (req: { query: Record<string, string> }) => read(req);
          const { pkg, keel } = await compare(express, { ...options, getToken }, {}, `/?token=${valid}`);
          assert.equal(keel.status, 200);
          assert.deepEqual(claimsOf(keel), claimsOf(pkg));
          const missing = await compare(express, { ...options, getToken }, {}, '/');
          assert.equal(missing.keel.status, missing.pkg.status);
          assert.equal(missing.keel.status, 401);
          const optional = await compare(express, { ...options, getToken, credentialsRequired: false }, {}, '/');
          assert.equal(optional.keel.status, optional.pkg.status);
          assert.equal(optional.keel.status, 200);
        });
      }
    });

    describe('when clockTolerance is given', () => {
      it('should accept a token that expired within the tolerance, as express-jwt does', async () => {
        const late = await hs256({ sub: 'u', iss: ISSUER, aud: AUDIENCE, exp: now() - 5 });
        const { pkg, keel } = await compare(express, { ...options, clockTolerance: 30 }, bearer(late));
        assert.equal(keel.status, pkg.status);
        assert.equal(keel.status, 200);
      });
    });

    describe('when a CORS preflight announces an Authorization header', () => {
      it('should let the preflight through, as express-jwt does', async () => {
        const headers = { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' };
        const { pkg, keel } = await compare(express, options, headers, '/', 'OPTIONS');
        assert.equal(keel.status, pkg.status);
        assert.notEqual(keel.status, 401);
      });
    });

    describe('when the algorithm is RS256 with a PEM public key', () => {
      it('should verify as express-jwt does', async () => {
        const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
        const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
        const key = await importPKCS8(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), 'RS256');
        const token = await new SignJWT({ sub: 'rs-user' }).setProtectedHeader({ alg: 'RS256' }).setExpirationTime('5m').sign(key);
        const { pkg, keel } = await compare(express, { secret: pem, algorithms: ['RS256'] }, bearer(token));
        assert.equal(keel.status, 200);
        assert.deepEqual(claimsOf(keel), claimsOf(pkg));
      });
    });
  });
}

describe('jwtAuth with express-jwt options: refused configuration', () => {
  it('should refuse an HS256 secret shorter than 32 bytes, which express-jwt accepts (intended difference)', () => {
    assert.doesNotThrow(() => expressjwt({ secret: 'short', algorithms: ['HS256'] }));
    assert.throws(() => jwtAuth({ secret: 'short', algorithms: ['HS256'] }), (err: unknown) => err instanceof ConfigError && /at least 32 bytes/.test(err.message));
  });
  it("should throw express-jwt's own errors from expressjwt() for a missing secret or algorithms, where jwtAuth({ secret }) is keel's record", () => {
    for (const [options, message] of [
      [undefined, 'express-jwt: `secret` is a required option'],
      [{ secret: SECRET }, 'express-jwt: `algorithms` is a required option'],
      [{ secret: SECRET, algorithms: 'HS256' }, 'express-jwt: `algorithms` must be an array'],
    ] as const) {
      assert.throws(() => expressjwt(options as never), { message });
      assert.throws(() => keelExpressjwt(options as never), (err: unknown) => err instanceof ConfigError && err.message === message);
    }
    assert.equal(typeof jwtAuth({ secret: SECRET }), 'function');
  });
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["keel's and express-jwt's keys in one call", { secret: SECRET, algorithms: ['HS256'], algorithm: 'HS256' }, /not both.*algorithms is express-jwt's, algorithm is keel's/],
    ['two algorithms', { secret: SECRET, algorithms: ['HS256', 'RS256'] }, /exactly one algorithm.*RFC 8725/],
    ['algorithm none', { secret: SECRET, algorithms: ['none'] }, /Unsigned tokens are never accepted/],
    ['a requestProperty through __proto__ (prototype pollution)', { secret: SECRET, algorithms: ['HS256'], requestProperty: '__proto__.auth' }, /requestProperty.*__proto__/],
    ['an HS256 secret that is a PEM key (RS/HS key confusion)', { secret: generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }), algorithms: ['HS256'] }, /symmetric secret.*PEM/],
    ['ignoreExpiration', { secret: SECRET, algorithms: ['HS256'], ignoreExpiration: true }, /ignoreExpiration is not supported.*onExpired/],
    ['an unknown key next to express-jwt keys', { secret: SECRET, algorithms: ['HS256'], audiance: 'x' }, /audiance/],
  ];
  for (const [what, options, message] of cases) {
    it(`should throw a ConfigError for ${what}`, () => {
      assert.throws(() => jwtAuth(options as JwtPackageOptions), (err: unknown) => err instanceof ConfigError && message.test(err.message));
    });
  }
});
