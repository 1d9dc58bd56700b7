/**
 * jwt_auth `claims` (issue 29 item 2): verified claims are validated against a JSON Schema; a mismatch
 * is the same 401 as an unreadable token, and only the log says why. Covers the HMAC (synchronous) and
 * jose (asymmetric) paths, the server and route records, the Express factory and start-up refusals.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import express from 'express';
import request from 'supertest';
import { pino } from 'pino';
import { SignJWT, exportSPKI, generateKeyPair } from 'jose';
import { ConfigError, createApp } from '../../lib/index.js';
import { CLAIMS_MISMATCH_MESSAGE, jwtAuth } from './index.js';

const SECRET = 'a-test-secret-that-is-32-bytes!!';
const sign = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(SECRET));
const claims = { type: 'object', required: ['sub', 'tenant'], properties: { sub: { type: 'string' }, tenant: { type: 'string', minLength: 1 } } } as const;

/** A pino logger whose records are kept. */
function capture(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({ write(chunk: Buffer, _e, done) { for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>); done(); } });
  return { logger: pino({ level: 'warn' }, sink), lines };
}

describe('when jwt_auth has a claims schema', () => {
  it('should hand matching claims to the handler and refuse others with the 401 of a bad token, the reason only in the log', async () => {
    const { logger, lines } = capture();
    const app = createApp({ jwt_auth: { secret: SECRET, claims } }, (a) => {
      a.get('/me', (d) => ({ sub: d.auth.sub, tenant: d.auth.tenant }));
    }, { logger });
    const ok = await app.inject({ url: '/me', headers: { authorization: `Bearer ${await sign({ sub: 'u1', tenant: 't1' })}` } });
    assert.equal(ok.statusCode, 200);
    assert.deepEqual(ok.json(), { sub: 'u1', tenant: 't1' });
    assert.equal(lines.length, 0);

    const mismatch = await app.inject({ url: '/me', headers: { authorization: `Bearer ${await sign({ sub: 42 })}` } });
    const unreadable = await app.inject({ url: '/me', headers: { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.c2ln' } });
    assert.equal(mismatch.statusCode, 401);
    assert.equal(mismatch.headers['www-authenticate'], unreadable.headers['www-authenticate'], 'the same challenge as an unreadable token');
    assert.deepEqual(mismatch.json(), unreadable.json(), 'the same problem as an unreadable token');
    assert.doesNotMatch(mismatch.body, /tenant|sub|schema|claim/i, 'the answer says nothing of the schema');
    const logged = lines.find((l) => l.msg === CLAIMS_MISMATCH_MESSAGE);
    assert.ok(logged, JSON.stringify(lines));
    assert.match(JSON.stringify(logged.errors), /tenant/);
    assert.doesNotMatch(JSON.stringify(logged), /"sub":42/, 'claim values are not logged');
  });

  it('should check claims on the asymmetric (jose) path of a route record, leaving other routes alone', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const pem = await exportSPKI(publicKey);
    const { logger, lines } = capture();
    const app = createApp({}, (a) => {
      a.get('/tenant', (d) => ({ tenant: d.auth.tenant }), { jwt_auth: { algorithm: 'ES256', public_key: pem, claims } });
      a.get('/open', (d) => ({ auth: d.auth ?? null }));
    }, { logger });
    const es = (c: Record<string, unknown>) => new SignJWT(c).setProtectedHeader({ alg: 'ES256' }).sign(privateKey);
    assert.equal((await app.inject({ url: '/tenant', headers: { authorization: `Bearer ${await es({ sub: 'u', tenant: 't' })}` } })).statusCode, 200);
    const refused = await app.inject({ url: '/tenant', headers: { authorization: `Bearer ${await es({ sub: 'u' })}` } });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.json<{ detail: string }>().detail, 'Token is invalid');
    assert.equal(lines.filter((l) => l.msg === CLAIMS_MISMATCH_MESSAGE).length, 1);
    assert.equal((await app.inject('/open')).statusCode, 200);
  });

  it('should work in an Express app through the factory, with its own logger', async () => {
    const { logger, lines } = capture();
    const app = express();
    app.get('/me', jwtAuth({ secret: SECRET, claims, logger }), (req, res) => void res.json({ tenant: req.auth?.tenant }));
    assert.equal((await request(app).get('/me').set('Authorization', `Bearer ${await sign({ sub: 'u', tenant: 't' })}`)).body.tenant, 't');
    const res = await request(app).get('/me').set('Authorization', `Bearer ${await sign({ sub: 'u', tenant: '' })}`);
    assert.equal(res.status, 401);
    assert.equal(lines.length, 1);
  });

  it('should refuse a claims value that is not a JSON Schema when the factory runs, naming claims', () => {
    assert.throws(() => jwtAuth({ secret: SECRET, claims: 'sub' }), (e: unknown) => e instanceof ConfigError && e.key === 'claims' && /claims: expected a JSON Schema object, got "sub"/.test(e.message));
    assert.throws(() => jwtAuth({ secret: SECRET, claims: { type: 'strng' } }), (e: unknown) => e instanceof ConfigError && e.key === 'claims' && /does not compile/.test(e.message));
    assert.throws(() => createApp({ jwt_auth: { secret: SECRET, claims: { type: 'strng' } } }).intoRouter(), ConfigError);
    // express-jwt has no claims option: beside its options, keel's key is a mixed-style ConfigError.
    assert.throws(() => jwtAuth({ secret: SECRET, algorithms: ['HS256'], claims } as never), (e: unknown) => e instanceof ConfigError && /claims/.test(e.message));
  });
});
