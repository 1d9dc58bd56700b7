/**
 * Hostile replay: forged credentials (JWT `alg: none`, HS/RS algorithm confusion, tampered tokens) and
 * the CORS credentials hole of issue 13 item 7, over real sockets against createApp servers with
 * server-level JWT auth. Every forged token must get a 401 problem; the handler never runs.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { pino } from 'pino';
import { createApp, type ServerHandle } from '../../lib/index.js';

const silent = { logger: pino({ level: 'silent' }) };
const SECRET = 'a-hostile-suite-secret-of-32-byte';
const now = () => Math.floor(Date.now() / 1000);
const b64 = (o: object | string) => Buffer.from(typeof o === 'string' ? o : JSON.stringify(o)).toString('base64url');
const claims = (extra: object = {}) => ({ sub: 'user-1', role: 'reader', iat: now(), exp: now() + 300, ...extra });

function hmac(header: object, payload: object, secret: string | Buffer = SECRET, hash = 'sha256'): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac(hash, secret).update(input).digest('base64url')}`;
}

const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();

function rs256(payload: object, header: object = { alg: 'RS256', typ: 'JWT' }): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
}

/** The same token with its payload swapped (signature kept). */
function tamper(token: string, payload: object): string {
  const [h, , s] = token.split('.');
  return `${h}.${b64(payload)}.${s}`;
}

let calls = 0;
async function serve(config: Record<string, unknown>): Promise<ServerHandle> {
  return createApp({ port: 0, ...config }, (a) => {
    a.get('/me', (d) => {
      calls++;
      return { auth: (d as unknown as { auth?: unknown }).auth ?? null };
    });
  }, silent).listen({ handleSignals: false });
}

async function get(server: ServerHandle, token: string | undefined, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/me`, { headers: { ...(token !== undefined ? { Authorization: `Bearer ${token}` } : {}), ...headers } });
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text(), headers: res.headers };
}

async function assertRefused(server: ServerHandle, token: string): Promise<void> {
  const before = calls;
  const res = await get(server, token);
  assert.equal(res.status, 401, res.body);
  assert.equal(res.type, 'application/problem+json');
  assert.equal(calls, before, 'the handler ran');
}

describe('hostile: forged JWTs against HS256 server auth', () => {
  let server: ServerHandle;
  before(async () => {
    server = await serve({ jwt_auth: { secret: SECRET, algorithm: 'HS256' } });
  });
  after(() => server.close());

  it('should accept a correctly signed token (control)', async () => {
    const res = await get(server, hmac({ alg: 'HS256', typ: 'JWT' }, claims()));
    assert.equal(res.status, 200);
  });

  for (const alg of ['none', 'None', 'NONE', 'nOnE']) {
    it(`should refuse alg: "${alg}" with an empty signature`, async () => {
      await assertRefused(server, `${b64({ alg, typ: 'JWT' })}.${b64(claims({ role: 'admin' }))}.`);
    });
  }

  it('should refuse alg: "none" carrying a signature', async () => {
    const valid = hmac({ alg: 'HS256', typ: 'JWT' }, claims());
    await assertRefused(server, `${b64({ alg: 'none' })}.${b64(claims({ role: 'admin' }))}.${valid.split('.')[2]}`);
  });

  it('should refuse an unsigned token (no third part)', async () => {
    await assertRefused(server, `${b64({ alg: 'HS256' })}.${b64(claims())}`);
  });

  it('should refuse a tampered payload (role escalated, signature kept)', async () => {
    await assertRefused(server, tamper(hmac({ alg: 'HS256', typ: 'JWT' }, claims()), claims({ role: 'admin' })));
  });

  it('should refuse a tampered header (alg switched to HS512)', async () => {
    const [, p, s] = hmac({ alg: 'HS256' }, claims()).split('.');
    await assertRefused(server, `${b64({ alg: 'HS512' })}.${p}.${s}`);
  });

  it('should refuse a token signed with another secret, and one signed with an empty secret', async () => {
    await assertRefused(server, hmac({ alg: 'HS256' }, claims(), 'not-the-secret-not-the-secret-xx'));
    await assertRefused(server, hmac({ alg: 'HS256' }, claims(), ''));
  });

  it('should refuse an expired token and one not valid yet', async () => {
    await assertRefused(server, hmac({ alg: 'HS256' }, claims({ exp: now() - 60 })));
    await assertRefused(server, hmac({ alg: 'HS256' }, claims({ nbf: now() + 600 })));
  });

  it('should refuse an RS256 token when the server verifies HS256', async () => {
    await assertRefused(server, rs256(claims()));
  });

  it('should refuse garbage tokens without a 500', async () => {
    for (const token of ['a.b.c', '...', 'x'.repeat(10_000), `${b64('{')}.${b64(claims())}.x`, `${b64({ alg: 'HS256', crit: ['exp'] })}.${b64(claims())}.x`]) {
      await assertRefused(server, token);
    }
  });
});

describe('hostile: HS/RS algorithm confusion against RS256 server auth', () => {
  let server: ServerHandle;
  before(async () => {
    server = await serve({ jwt_auth: { public_key: PUBLIC_PEM, algorithm: 'RS256' } });
  });
  after(() => server.close());

  it('should accept a token signed with the private key (control)', async () => {
    const res = await get(server, rs256(claims()));
    assert.equal(res.status, 200, res.body);
  });

  it('should refuse an HS256 token whose HMAC secret is the public key PEM', async () => {
    await assertRefused(server, hmac({ alg: 'HS256', typ: 'JWT' }, claims({ role: 'admin' }), PUBLIC_PEM));
    await assertRefused(server, hmac({ alg: 'HS256', typ: 'JWT' }, claims({ role: 'admin' }), PUBLIC_PEM.trim()));
  });

  it('should refuse the public key as an HS256 secret given as DER bytes', async () => {
    await assertRefused(server, hmac({ alg: 'HS256' }, claims(), publicKey.export({ type: 'spki', format: 'der' })));
  });

  it('should refuse alg: "none" and a tampered RS256 payload', async () => {
    await assertRefused(server, `${b64({ alg: 'none' })}.${b64(claims())}.`);
    await assertRefused(server, tamper(rs256(claims()), claims({ role: 'admin' })));
  });

  it('should refuse a token that embeds its own key (jwk header)', async () => {
    const { privateKey: other, publicKey: otherPublic } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const header = { alg: 'RS256', jwk: otherPublic.export({ format: 'jwk' }) };
    const input = `${b64(header)}.${b64(claims({ role: 'admin' }))}`;
    await assertRefused(server, `${input}.${sign('sha256', Buffer.from(input), other).toString('base64url')}`);
  });
});

describe('hostile: CORS with allowed_origins ["*"] and credentials (fixed in issue 13 item 7)', () => {
  let server: ServerHandle;
  before(async () => {
    server = await createApp({ port: 0 }, (a) => {
      a.get('/account', () => ({ balance: 100 }), { cors: { allowed_origins: ['*'], allow_credentials: true } });
    }, silent).listen({ handleSignals: false });
  });
  after(() => server.close());

  it('should not hand an arbitrary origin Access-Control-Allow-Credentials with its own origin echoed', async () => {
    const res = await fetch(`${server.url}/account`, { headers: { Origin: 'https://evil.example', Cookie: 'session=victim' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal(res.headers.get('access-control-allow-credentials'), null);
  });

  it('should not grant a credentialed preflight to an arbitrary origin', async () => {
    const res = await fetch(`${server.url}/account`, { method: 'OPTIONS', headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'GET' } });
    assert.notEqual(res.headers.get('access-control-allow-origin'), 'https://evil.example');
    assert.equal(res.headers.get('access-control-allow-credentials'), null);
  });
});
