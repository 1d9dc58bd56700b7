/**
 * The HS* path (fast-jwt, synchronous): the cases a second verifier could get wrong where jose got
 * them right. index.test.ts covers the shared behaviour (header formats, claims, messages).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';
import request from 'supertest';
import { SignJWT, type JWTPayload } from 'jose';
import type { KeelRequest } from '../../lib/http/request.js';
import { jwtAuth, type JwtAuthOptions } from './index.js';

const SECRET = 'a-test-secret-that-is-32-bytes!!';
const NOW = () => Math.floor(Date.now() / 1000);
const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');

function appWith(options: JwtAuthOptions): express.Express {
  const app = express();
  app.use(jwtAuth(options));
  app.get('/', (req, res) => {
    const auth = (req as KeelRequest).auth as Record<string, unknown>;
    const seen = auth.seen ?? null;
    // A handler that writes to req.auth must not change what the next request with the same token sees.
    auth.seen = true;
    res.json({ auth, seen });
  });
  return app;
}

async function hs(claims: JWTPayload, alg = 'HS256', secret = SECRET): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg }).sign(new TextEncoder().encode(secret));
}

/** Sign by hand: jose's signer refuses the headers a forger would write. */
function signRaw(header: object, claims: object, secret = SECRET): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

async function expect401(app: express.Express, token: string, detail: string) {
  const res = await request(app).get('/').set('Authorization', `Bearer ${token}`);
  assert.equal(res.status, 401);
  assert.match(res.headers['content-type']!, /^application\/problem\+json/);
  assert.equal(res.body.detail, detail);
  assert.match(res.headers['www-authenticate']!, /^Bearer error="invalid_token"/);
}

describe('jwtAuth with an HMAC secret', () => {
  const app = appWith({ secret: SECRET });

  describe('when the signature does not match the header', () => {
    it('should reject a token signed with HS384 under an HS256 header', async () => {
      const [, payload, signature] = (await hs({ sub: 'u' }, 'HS384', 'x'.repeat(48))).split('.');
      await expect401(app, `${b64({ alg: 'HS256' })}.${payload}.${signature}`, 'Token signature is invalid');
    });
    it('should reject a token whose header was changed after signing', async () => {
      const [, payload, signature] = (await hs({ sub: 'u' })).split('.');
      await expect401(app, `${b64({ alg: 'HS256', kid: 'other' })}.${payload}.${signature}`, 'Token signature is invalid');
    });
    it('should reject a truncated signature', async () => {
      const token = await hs({ sub: 'u' });
      await expect401(app, token.slice(0, -4), 'Token signature is invalid');
    });
    it('should reject alg "none" with an empty signature as the wrong algorithm', async () => {
      await expect401(app, `${b64({ alg: 'none' })}.${b64({ sub: 'admin' })}.`, "Token algorithm is not allowed, expected 'HS256'");
    });
    it('should reject an empty signature', async () => {
      const [h, p] = (await hs({ sub: 'u' })).split('.');
      await expect401(app, `${h}.${p}.`, 'Token signature is invalid');
    });
    it('should reject a signature in standard base64 with padding (not canonical base64url)', async () => {
      await expect401(app, `${await hs({ sub: 'u' })}=`, 'Token signature is invalid');
    });
  });

  describe('when the header or claims carry something keel does not understand', () => {
    it('should reject a critical header extension', async () => {
      await expect401(app, signRaw({ alg: 'HS256', crit: ['x-ext'], 'x-ext': 1 }, { sub: 'u' }), 'Token could not be verified');
    });
    it('should reject an iat that is not a number', async () => {
      await expect401(app, await hs({ sub: 'u', iat: 'yesterday' as never }), "Token claim 'iat' is invalid");
    });
    it('should reject an audience list holding a non-string', async () => {
      const audApp = appWith({ secret: SECRET, audience: ['api'] });
      await expect401(audApp, await hs({ aud: ['api', 7] as never }), 'Token audience is invalid');
    });
  });

  describe('when time claims meet the leeway', () => {
    it('should count the leeway in seconds', async () => {
      await expect401(appWith({ secret: SECRET, leeway: 10 }), await hs({ exp: NOW() - 30 }), 'Token has expired');
      const res = await request(appWith({ secret: SECRET, leeway: 60 })).get('/').set('Authorization', `Bearer ${await hs({ exp: NOW() - 30 })}`);
      assert.equal(res.status, 200);
    });
    it('should refuse a token it accepted once it has expired', async () => {
      // At least two whole seconds of validity, so a loaded machine still sends the first request in time.
      const exp = NOW() + 3;
      const token = await hs({ sub: 'u', exp });
      assert.equal((await request(app).get('/').set('Authorization', `Bearer ${token}`)).status, 200);
      await sleep(exp * 1000 - Date.now() + 50);
      await expect401(app, token, 'Token has expired');
    });
  });

  describe('when the same token is presented twice', () => {
    it('should give each request its own claims object', async () => {
      const token = await hs({ sub: 'u' });
      const first = await request(app).get('/').set('Authorization', `Bearer ${token}`);
      const second = await request(app).get('/').set('Authorization', `Bearer ${token}`);
      assert.equal(first.body.seen, null);
      assert.equal(second.body.seen, null);
    });
  });

  describe('when HS384 or HS512 is configured', () => {
    for (const [alg, secret] of [['HS384', 'y'.repeat(48)], ['HS512', 'z'.repeat(64)]] as const) {
      it(`should accept an ${alg} token and refuse an HS256 one`, async () => {
        const algApp = appWith({ secret, algorithm: alg });
        const res = await request(algApp).get('/').set('Authorization', `Bearer ${await hs({ sub: alg }, alg, secret)}`);
        assert.equal(res.status, 200);
        assert.equal(res.body.auth.sub, alg);
        await expect401(algApp, await hs({ sub: alg }, 'HS256', secret), `Token algorithm is not allowed, expected '${alg}'`);
      });
    }
  });
});
