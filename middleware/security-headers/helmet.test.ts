/**
 * helmet's standalone middlewares from keel/middleware/security-headers (issue 23): helmet's names,
 * options, header values and error texts, under Express 4 and 5; bad options are ConfigErrors.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import * as realHelmet from 'helmet';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import { ConfigError } from '../../lib/http/errors.js';
import helmet, {
  contentSecurityPolicy, crossOriginEmbedderPolicy, crossOriginOpenerPolicy, crossOriginResourcePolicy, originAgentCluster,
  referrerPolicy, strictTransportSecurity, xContentTypeOptions, xDnsPrefetchControl, xDownloadOptions, xFrameOptions,
  xPermittedCrossDomainPolicies, xPoweredBy, xXssProtection, hsts, noSniff, frameguard, dnsPrefetchControl, ieNoOpen,
  permittedCrossDomainPolicies, hidePoweredBy, xssFilter, securityHeaders, type HelmetMiddleware,
} from './index.js';

const STANDALONE: Record<string, (o?: never) => HelmetMiddleware> = {
  contentSecurityPolicy, crossOriginEmbedderPolicy, crossOriginOpenerPolicy, crossOriginResourcePolicy, originAgentCluster,
  referrerPolicy, strictTransportSecurity, xContentTypeOptions, xDnsPrefetchControl, xDownloadOptions, xFrameOptions,
  xPermittedCrossDomainPolicies, xPoweredBy, xXssProtection,
};
const ALIASES: Record<string, [alias: unknown, of: unknown]> = {
  hsts: [hsts, strictTransportSecurity], noSniff: [noSniff, xContentTypeOptions], frameguard: [frameguard, xFrameOptions],
  dnsPrefetchControl: [dnsPrefetchControl, xDnsPrefetchControl], ieNoOpen: [ieNoOpen, xDownloadOptions],
  permittedCrossDomainPolicies: [permittedCrossDomainPolicies, xPermittedCrossDomainPolicies], hidePoweredBy: [hidePoweredBy, xPoweredBy],
  xssFilter: [xssFilter, xXssProtection],
};

describe('when the standalone middlewares are imported', () => {
  it('should carry helmet\'s names, on the module and on the default export', () => {
    for (const [name, fn] of Object.entries(STANDALONE)) {
      assert.equal(fn.name, name);
      assert.equal((helmet as unknown as Record<string, unknown>)[name], fn);
    }
    for (const [name, [alias, of]] of Object.entries(ALIASES)) {
      assert.equal(alias, of, name);
      assert.equal((helmet as unknown as Record<string, unknown>)[name], of, name);
    }
  });

  it('should expose helmet\'s CSP helpers (the same symbol helmet reads)', () => {
    assert.deepEqual(contentSecurityPolicy.getDefaultDirectives(), realHelmet.contentSecurityPolicy.getDefaultDirectives());
    assert.equal(contentSecurityPolicy.dangerouslyDisableDefaultSrc, realHelmet.contentSecurityPolicy.dangerouslyDisableDefaultSrc);
  });
});

describe('when bad options are given', () => {
  it('should throw a ConfigError carrying helmet\'s own message', () => {
    assert.throws(() => xFrameOptions({ action: 'allow-from' as never }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.message, 'X-Frame-Options received an invalid action "allow-from"');
      assert.equal(err.record, 'xFrameOptions');
      return true;
    });
    assert.throws(() => contentSecurityPolicy({ useDefaults: false, directives: { scriptSrc: ["'self'"] } }), {
      name: 'ConfigError',
      message: 'Content-Security-Policy needs a default-src but none was provided. If you really want to disable it, set it to `contentSecurityPolicy.dangerouslyDisableDefaultSrc`.',
    });
    assert.throws(() => hsts({ maxAge: -1 }), { name: 'ConfigError', message: /Strict-Transport-Security: -1 is not a valid value for maxAge/ });
  });

  it('should refuse app.use(helmet) (a request given as options) and conflicting legacy names', () => {
    assert.throws(() => helmet({ constructor: { name: 'IncomingMessage' } } as never), ConfigError);
    assert.throws(() => helmet({ strictTransportSecurity: true, hsts: true } as never), ConfigError);
  });
});

for (const { name: expressVersion, express } of EXPRESS_VERSIONS) describe(`under ${expressVersion}`, () => {
  function appWith(...layers: HelmetMiddleware[]) {
    const app = express();
    app.set('x-powered-by', true);
    for (const layer of layers) app.use(layer as never);
    app.get('/', (_req, res) => res.send('ok'));
    return app;
  }

  describe('when each standalone middleware is used', () => {
    it('should send the header helmet sends, byte for byte', async () => {
      const res = await request(appWith(
        frameguard({ action: 'deny' }), hsts({ maxAge: 123, preload: true }), noSniff(), referrerPolicy({ policy: ['origin', 'unsafe-url'] }),
        dnsPrefetchControl({ allow: true }), ieNoOpen(), permittedCrossDomainPolicies({ permittedPolicies: 'by-content-type' }), xssFilter(),
        crossOriginEmbedderPolicy({ policy: 'credentialless' }), crossOriginOpenerPolicy(), crossOriginResourcePolicy({ policy: 'cross-origin' }),
        originAgentCluster(), hidePoweredBy(),
      )).get('/');
      assert.equal(res.status, 200);
      assert.equal(res.headers['x-frame-options'], 'DENY');
      assert.equal(res.headers['strict-transport-security'], 'max-age=123; includeSubDomains; preload');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.equal(res.headers['referrer-policy'], 'origin,unsafe-url');
      assert.equal(res.headers['x-dns-prefetch-control'], 'on');
      assert.equal(res.headers['x-download-options'], 'noopen');
      assert.equal(res.headers['x-permitted-cross-domain-policies'], 'by-content-type');
      assert.equal(res.headers['x-xss-protection'], '0');
      assert.equal(res.headers['cross-origin-embedder-policy'], 'credentialless');
      assert.equal(res.headers['cross-origin-opener-policy'], 'same-origin');
      assert.equal(res.headers['cross-origin-resource-policy'], 'cross-origin');
      assert.equal(res.headers['origin-agent-cluster'], '?1');
      assert.equal(res.headers['x-powered-by'], undefined);
    });

    it('should build a CSP from helmet\'s defaults, with a per-response nonce function', async () => {
      const app = appWith(contentSecurityPolicy({ directives: { scriptSrc: ["'self'", (_req, res) => `'nonce-${(res as unknown as { locals?: { n?: string } }).locals?.n ?? 'x'}'`] } }));
      const res = await request(app).get('/');
      assert.match(res.headers['content-security-policy'], /^default-src 'self';.*script-src 'self' 'nonce-x';/);
    });
  });

  describe('when the default export is used as helmet()', () => {
    it('should send helmet\'s default set, and a route can take it back', async () => {
      const app = express();
      app.use(helmet() as never);
      app.get('/', (_req, res) => res.send('ok'));
      app.get('/bare', securityHeaders({ enabled: false }) as never, (_req, res) => res.send('ok'));
      const res = await request(app).get('/');
      assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN');
      assert.equal(res.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains');
      assert.match(res.headers['content-security-policy'], /^default-src 'self';/);
      const bare = await request(app).get('/bare');
      assert.equal(bare.headers['x-frame-options'], undefined);
    });
  });
});
