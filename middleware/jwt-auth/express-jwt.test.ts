/**
 * jwtAuth / expressjwt with express-jwt's options: the behaviours express-jwt users rely on (secret
 * callbacks, isRevoked, onExpired, requestProperty, .unless, UnauthorizedError), called as express-jwt's
 * own suite calls them (fake req, a `next` that records) and under Express 4 and 5, plus hostile tokens.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, createSecretKey, generateKeyPairSync } from 'node:crypto';
import { CompactSign, SignJWT } from 'jose';
import request from 'supertest';
import { ConfigError } from '../../lib/http/errors.js';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import { UnauthorizedError, expressjwt, jwtAuth, type JwtPackageOptions } from './index.js';

const SECRET = 'a-shared-secret-of-at-least-32-bytes!!';
const now = () => Math.floor(Date.now() / 1000);
const key = (secret: string | Buffer = SECRET) => (typeof secret === 'string' ? new TextEncoder().encode(secret) : secret);

async function hs256(claims: Record<string, unknown>, secret: string | Buffer = SECRET, header: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', ...header }).sign(key(secret));
}
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

type Req = Record<string, any>;
/** Call the middleware as express-jwt's suite does; resolves with what reached next. */
function run(mw: (req: any, res: any, next: any) => void, req: Req): Promise<{ err: any; req: Req }> {
  return new Promise((resolve) => mw(req, {}, (err?: unknown) => resolve({ err, req })));
}
const withToken = (token: string, extra: Req = {}): Req => ({ method: 'GET', url: '/', originalUrl: '/', headers: { authorization: `Bearer ${token}` }, ...extra });
const options: JwtPackageOptions = { secret: SECRET, algorithms: ['HS256'] };

describe('when UnauthorizedError is built as express-jwt builds it', () => {
  it('should take the message and inner from an error-like second argument', () => {
    const e = new UnauthorizedError('invalid_token', { message: 'Invalid token!' });
    assert.ok(e instanceof Error);
    assert.equal(e.name, 'UnauthorizedError');
    assert.equal(e.message, 'Invalid token!');
    assert.equal(e.code, 'invalid_token');
    assert.equal(e.status, 401);
    assert.deepEqual(e.inner, { message: 'Invalid token!' });
    assert.ok(e.stack!.startsWith('UnauthorizedError: Invalid token!'));
    const inner = new Error('a');
    assert.equal(new UnauthorizedError('credentials_bad_format', inner).inner, inner);
  });
});

describe('when the Authorization header is not Bearer <token>', () => {
  it("should refuse 'wrong' with credentials_bad_format, even when credentials are optional", async () => {
    for (const credentialsRequired of [true, false]) {
      const { err } = await run(expressjwt({ ...options, credentialsRequired }), { headers: { authorization: 'wrong' } });
      assert.equal(err.code, 'credentials_bad_format');
      assert.equal(err.message, 'Format is Authorization: Bearer [token]');
    }
  });
  it('should refuse another scheme with credentials_bad_scheme, and pass it when credentials are optional', async () => {
    assert.equal((await run(expressjwt(options), { headers: { authorization: 'Basic dTpw' } })).err.code, 'credentials_bad_scheme');
    const optional = await run(expressjwt({ ...options, credentialsRequired: false }), { headers: { authorization: 'Basic dTpw' } });
    assert.equal(optional.err, undefined);
    assert.equal(optional.req.auth, undefined);
  });
  it('should read a capitalised Authorization key (Lambda adapters) and a request without headers', async () => {
    const { err, req } = await run(expressjwt(options), { headers: { Authorization: `Bearer ${await hs256({ sub: 'u' })}` } });
    assert.equal(err, undefined);
    assert.equal(req.auth.sub, 'u');
    assert.equal((await run(expressjwt(options), {})).err.code, 'credentials_required');
  });
});

describe('when secret is a function (multi-tenant)', () => {
  const tenants: Record<string, string> = { a: 'tenant-a-secret-of-at-least-32-bytes!', b: 'tenant-b-secret-of-at-least-32-bytes!' };
  const calls: unknown[][] = [];
  const mw = expressjwt({
    algorithms: ['HS256'],
    secret: async (req, token) => {
      calls.push([req, token]);
      const iss = (token!.payload as Record<string, unknown>).iss as string;
      if (!tenants[iss]) throw new Error('Could not find secret for issuer.');
      return tenants[iss];
    },
  });
  it("should verify each tenant's token with that tenant's secret and pass the decoded token", async () => {
    for (const iss of ['a', 'b']) {
      const { err, req } = await run(mw, withToken(await hs256({ iss, foo: iss }, tenants[iss])));
      assert.equal(err, undefined);
      assert.equal(req.auth.foo, iss);
      const [seenReq, token] = calls.at(-1) as [Req, { header: Record<string, unknown>; payload: Record<string, unknown>; signature: string }];
      assert.equal(seenReq, req);
      assert.equal(token.header.alg, 'HS256');
      assert.equal(token.payload.iss, iss);
      assert.equal(typeof token.signature, 'string');
    }
    const crossed = await run(mw, withToken(await hs256({ iss: 'a' }, tenants.b)));
    assert.equal(crossed.err.message, 'invalid signature');
  });
  it("should hand the callback's own error to next", async () => {
    const { err } = await run(mw, withToken(await hs256({ iss: 'nobody' })));
    assert.ok(!(err instanceof UnauthorizedError));
    assert.equal(err.message, 'Could not find secret for issuer.');
  });
  it('should refuse a token with another alg, or unreadable, before calling the callback', async () => {
    const before = calls.length;
    const none = `${b64({ alg: 'none' })}.${b64({ iss: 'a' })}.`;
    assert.equal((await run(mw, withToken(none))).err.message, 'jwt signature is required');
    assert.equal((await run(mw, withToken('not.a.jwt'))).err.message, 'invalid token');
    assert.equal(calls.length, before);
  });
  it('should refuse with invalid_token when no key is returned, and send a short secret to next as a ConfigError', async () => {
    const token = await hs256({ iss: 'a' });
    const none = await run(expressjwt({ algorithms: ['HS256'], secret: () => undefined }), withToken(token));
    assert.equal(none.err.code, 'invalid_token');
    assert.equal(none.err.message, 'secret or public key must be provided');
    const shortSecret = expressjwt({ algorithms: ['HS256'], secret: () => 'shhhhhh' });
    for (let i = 0; i < 2; i++) {
      const short = await run(shortSecret, withToken(token));
      assert.ok(short.err instanceof ConfigError, `request ${i + 1}`);
      assert.match(short.err.message, /at least 32 bytes/);
    }
  });
});

describe('when the secret is a Buffer or a KeyObject', () => {
  it('should verify with its bytes', async () => {
    const bytes = Buffer.alloc(48, 7);
    for (const secret of [bytes, createSecretKey(bytes)]) {
      const { err, req } = await run(expressjwt({ secret, algorithms: ['HS256'] }), withToken(await hs256({ foo: 'bar' }, bytes)));
      assert.equal(err, undefined);
      assert.equal(req.auth.foo, 'bar');
    }
  });
});

describe('when isRevoked is given', () => {
  it('should refuse a revoked token with revoked_token, pass the others, and hand its error to next', async () => {
    const mw = expressjwt({ ...options, isRevoked: async (_req, token) => (token!.payload as Record<string, unknown>).jti === 'gone' });
    const revoked = await run(mw, withToken(await hs256({ jti: 'gone' })));
    assert.equal(revoked.err.code, 'revoked_token');
    assert.equal(revoked.err.message, 'The token has been revoked.');
    assert.equal(revoked.req.auth, undefined);
    assert.equal((await run(mw, withToken(await hs256({ jti: 'kept' })))).req.auth.jti, 'kept');
    const failing = expressjwt({ ...options, isRevoked: () => { throw new Error('store down'); } });
    assert.equal((await run(failing, withToken(await hs256({})))).err.message, 'store down');
  });
});

describe('when onExpired is given', () => {
  it('should let an expired token through when it returns, and refuse it when it throws', async () => {
    const expired = await hs256({ foo: 'bar', exp: now() - 60 });
    const seen: any[] = [];
    const lenient = await run(expressjwt({ ...options, onExpired: (_req, err) => void seen.push(err) }), withToken(expired));
    assert.equal(lenient.err, undefined);
    assert.equal(lenient.req.auth.foo, 'bar');
    assert.equal(seen[0].inner.name, 'TokenExpiredError');
    assert.equal(seen[0].message, 'jwt expired');
    const strict = await run(expressjwt({ ...options, onExpired: (_req, err) => { throw err; } }), withToken(expired));
    assert.equal(strict.err.message, 'jwt expired');
  });
  it('should still refuse an expired token meant for another audience (express-jwt would not check aud; intended difference)', async () => {
    const expired = await hs256({ aud: 'other-api', exp: now() - 60 });
    const { err } = await run(expressjwt({ ...options, audience: 'my-api', onExpired: () => undefined }), withToken(expired));
    assert.equal(err.code, 'invalid_token');
    assert.equal(err.message, 'jwt audience invalid. expected: my-api');
  });
});

describe('when the claims are checked', () => {
  it("should word each failure as jsonwebtoken does", async () => {
    const cases: [Record<string, unknown>, Partial<JwtPackageOptions>, string, string][] = [
      [{ exp: now() - 60 }, {}, 'jwt expired', 'TokenExpiredError'],
      [{ nbf: now() + 600 }, {}, 'jwt not active', 'NotBeforeError'],
      [{ aud: 'x' }, { audience: ['a', /^b-/] }, 'jwt audience invalid. expected: a or /^b-/', 'JsonWebTokenError'],
      [{ iss: 'x' }, { issuer: ['i1', 'i2'] }, 'jwt issuer invalid. expected: i1,i2', 'JsonWebTokenError'],
      [{ exp: 'soon' }, {}, 'invalid exp value', 'JsonWebTokenError'],
    ];
    for (const [claims, extra, message, inner] of cases) {
      const { err } = await run(expressjwt({ ...options, ...extra }), withToken(await hs256(claims)));
      assert.equal(err.message, message);
      assert.equal(err.inner.name, inner);
    }
    const global = expressjwt({ ...options, audience: /^b-/g });
    assert.equal((await run(expressjwt({ ...options, audience: /^b-/ }), withToken(await hs256({ aud: ['z', 'b-1'] })))).err, undefined);
    for (let i = 0; i < 2; i++) assert.equal((await run(global, withToken(await hs256({ aud: 'b-1' })))).err, undefined, `request ${i + 1}`);
  });
});

describe('when requestProperty is a dotted path', () => {
  it('should nest the claims, keeping what is already there', async () => {
    const { req } = await run(expressjwt({ ...options, requestProperty: 'auth.payload' }), withToken(await hs256({ foo: 'bar' }), { auth: { kept: 1 } }));
    assert.deepEqual(req.auth, { kept: 1, payload: { foo: 'bar' } });
  });
});

describe('when the payload is not JSON (a JWS over text)', () => {
  it('should put the text on req.auth, as express-jwt does, but refuse it when an audience is required', async () => {
    const token = await new CompactSign(new TextEncoder().encode('foo')).setProtectedHeader({ alg: 'HS256' }).sign(key());
    assert.equal((await run(expressjwt(options), withToken(token))).req.auth, 'foo');
    assert.equal((await run(expressjwt({ ...options, audience: 'api' }), withToken(token))).err.message, 'jwt audience invalid. expected: api');
    const forged = `${token.slice(0, token.lastIndexOf('.'))}.${b64('x'.repeat(32))}`;
    assert.equal((await run(expressjwt(options), withToken(forged))).err.message, 'invalid signature');
  });
});

describe('when the token is hostile', () => {
  it('should refuse a huge token, malformed base64, alg none and a non-object header without throwing', async () => {
    const valid = await hs256({ sub: 'u' });
    const [h, p] = valid.split('.');
    const huge = `${h}.${b64({ pad: 'x'.repeat(1 << 20) })}.${valid.split('.')[2]}`;
    const cases: [string, string][] = [
      [huge, 'invalid signature'],
      [`${h}.${p}!.sig`, 'invalid token'],
      [`${h}.${p}=.sig`, 'invalid token'],
      [`${b64({ alg: 'none' })}.${p}.`, 'jwt signature is required'],
      [`${b64({ alg: 'none' })}.${p}.${valid.split('.')[2]}`, 'invalid algorithm'],
      [`${b64([1])}.${p}.sig`, 'invalid token'],
      ['a.b', 'jwt malformed'],
    ];
    for (const [token, message] of cases) {
      const { err } = await run(expressjwt({ ...options, getToken: () => token }), {});
      assert.equal(err.code, 'invalid_token', token.slice(0, 40));
      assert.equal(err.message, message, token.slice(0, 40));
    }
  });
  it('should refuse an HS256 token signed with the RS256 public key as HMAC secret (key confusion)', async () => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = publicKey.export({ type: 'spki', format: 'pem' }) as string;
    const forged = await hs256({ sub: 'admin' }, pem);
    const { err } = await run(expressjwt({ secret: pem, algorithms: ['RS256'] }), withToken(forged));
    assert.equal(err.message, 'invalid algorithm');
  });
  it("should refuse a crit extension it does not understand and a non-numeric iat, which jsonwebtoken accepts (intended difference)", async () => {
    const signed = (header: Record<string, unknown>, claims: Record<string, unknown>) => {
      const input = `${b64(header)}.${b64(claims)}`;
      return `${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`;
    };
    const control = await run(expressjwt(options), withToken(signed({ alg: 'HS256' }, { sub: 'u' })));
    assert.equal(control.req.auth.sub, 'u');
    const crit = await run(expressjwt(options), withToken(signed({ alg: 'HS256', crit: ['x-ext'], 'x-ext': 1 }, { sub: 'u' })));
    assert.equal(crit.err.message, 'invalid token');
    const iat = await run(expressjwt(options), withToken(signed({ alg: 'HS256' }, { sub: 'u', iat: 'yesterday' })));
    assert.equal(iat.err.message, 'invalid iat value');
  });
  it('should not pollute Object.prototype from a __proto__ claim', async () => {
    const token = await hs256(JSON.parse('{"__proto__": {"polluted": true}}'));
    await run(expressjwt(options), withToken(token));
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

for (const { name, express } of EXPRESS_VERSIONS) {
  describe(`when .unless() is used under ${name}`, () => {
    it('should skip the paths, methods and requests it names, as express-unless does, and protect the rest', async () => {
      const app = express();
      const auth = expressjwt(options).unless({ path: ['/login', { url: /^\/public/, methods: ['GET'] }], ext: '.css' });
      app.use(auth.unless({ custom: (req) => req.headers['x-health'] === '1' }));
      app.use((req, res) => void res.json({ auth: (req as unknown as Req).auth ?? null }));
      app.use((err: any, _req: unknown, res: any, _next: unknown) => void res.status(err.status).json({ code: err.code }));
      for (const [method, path, headers, status] of [
        ['get', '/login', {}, 200], ['get', '/public/x', {}, 200], ['post', '/public/x', {}, 401], ['get', '/a.css', {}, 200],
        ['get', '/private', {}, 401], ['get', '/private', { 'x-health': '1' }, 200], ['get', '/login/../private', {}, 401],
      ] as const) {
        const res = await request(app)[method](path).set(headers);
        assert.equal(res.status, status, `${method} ${path}`);
      }
      const token = await hs256({ sub: 'u' });
      assert.equal((await request(app).get('/private').set('authorization', `Bearer ${token}`)).body.auth.sub, 'u');
    });
    it("should exist on keel's record-style middleware too", async () => {
      const app = express();
      app.use(jwtAuth({ secret: SECRET }).unless({ path: '/open' }));
      app.use((_req, res) => void res.send('ok'));
      assert.equal((await request(app).get('/open')).status, 200);
      assert.equal((await request(app).get('/closed')).status, 401);
    });
  });
}
