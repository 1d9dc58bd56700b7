import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type express from 'express';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import request from 'supertest';
import { securityHeaders, docsPageCsp, DEFAULT_API_CSP, type SecurityHeadersOptions } from './index.js';
import { ConfigError } from '../../lib/http/errors.js';

// Every test in this block runs under Express 4 and under Express 5 (test/helpers/express-versions.ts).
for (const { name: expressVersion, express } of EXPRESS_VERSIONS) describe(`under ${expressVersion}`, () => {
function appWith(...layers: express.RequestHandler[]) {
  const app = express();
  for (const layer of layers) app.use(layer);
  app.get('/data', (_req, res) => res.json({ ok: true }));
  app.get('/docs', (_req, res) => {
    res.setHeader('Content-Security-Policy', docsPageCsp());
    res.type('html').send('<!doctype html><title>docs</title>');
  });
  return app;
}

describe('securityHeaders: when called without options', () => {
  const app = appWith(securityHeaders());

  it('should send the API header set', async () => {
    const res = await request(app).get('/data');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.equal(res.headers['cross-origin-resource-policy'], 'same-origin');
  });

  it('should send no Strict-Transport-Security and no X-Powered-By', async () => {
    const res = await request(app).get('/data');
    assert.equal(res.headers['strict-transport-security'], undefined);
    assert.equal(res.headers['x-powered-by'], undefined);
  });

  it('should send the headers on a 404 too', async () => {
    const res = await request(app).get('/missing');
    assert.equal(res.status, 404);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
  });

  it('should let a documentation page replace the CSP for its own response', async () => {
    const res = await request(app).get('/docs');
    assert.equal(res.headers['content-security-policy'], docsPageCsp());
    assert.match(res.headers['content-security-policy'] ?? '', /script-src 'self' 'unsafe-inline' https:\/\/cdn\.jsdelivr\.net/);
    const api = await request(app).get('/data');
    assert.equal(api.headers['content-security-policy'], DEFAULT_API_CSP);
  });
});

describe('securityHeaders: when options are given', () => {
  it('should send HSTS with includeSubDomains when hsts_max_age is set', async () => {
    const res = await request(appWith(securityHeaders({ hsts_max_age: 31536000 }))).get('/data');
    assert.equal(res.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains');
  });

  it('should send HSTS with preload when asked', async () => {
    const res = await request(appWith(securityHeaders({ hstsMaxAge: 63072000, hstsPreload: true }))).get('/data');
    assert.equal(res.headers['strict-transport-security'], 'max-age=63072000; includeSubDomains; preload');
  });

  it('should send HSTS without includeSubDomains when turned off', async () => {
    const res = await request(appWith(securityHeaders({ hsts_max_age: 600, hsts_include_sub_domains: false }))).get('/data');
    assert.equal(res.headers['strict-transport-security'], 'max-age=600');
  });

  it('should send a custom CSP', async () => {
    const res = await request(appWith(securityHeaders({ content_security_policy: "default-src 'self'" }))).get('/data');
    assert.equal(res.headers['content-security-policy'], "default-src 'self'");
  });

  it('should send no CSP with content_security_policy: null', async () => {
    const res = await request(appWith(securityHeaders({ contentSecurityPolicy: null }))).get('/data');
    assert.equal(res.headers['content-security-policy'], undefined);
  });

  it('should send X-Frame-Options: SAMEORIGIN', async () => {
    const res = await request(appWith(securityHeaders({ frame_options: 'SAMEORIGIN' }))).get('/data');
    assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN');
  });

  it('should send the chosen Referrer-Policy and Cross-Origin-Resource-Policy', async () => {
    const res = await request(appWith(securityHeaders({ referrer_policy: 'strict-origin', crossOriginResourcePolicy: 'cross-origin' }))).get('/data');
    assert.equal(res.headers['referrer-policy'], 'strict-origin');
    assert.equal(res.headers['cross-origin-resource-policy'], 'cross-origin');
  });

  it('should apply helmet options over keel choices', async () => {
    const res = await request(appWith(securityHeaders({ helmet: { xFrameOptions: false, contentSecurityPolicy: { directives: { defaultSrc: ["'self'"] } } } }))).get('/data');
    assert.equal(res.headers['x-frame-options'], undefined);
    assert.match(res.headers['content-security-policy'] ?? '', /^default-src 'self'/);
  });
});

describe('securityHeaders: when a helmet CSP directive is a function', () => {
  it('should compute the header for each response (a nonce per response)', async () => {
    let n = 0;
    const nonce = (_req: unknown, res: unknown) => `'nonce-${(res as { locals: { nonce: string } }).locals.nonce}'`;
    const app = express();
    app.use((_req, res, next) => {
      res.locals.nonce = `n${++n}`;
      next();
    });
    app.use(securityHeaders({ helmet: { contentSecurityPolicy: { directives: { defaultSrc: ["'self'"], scriptSrc: [nonce] } } } }));
    app.get('/data', (_req, res) => res.json({ ok: true }));
    const first = await request(app).get('/data');
    const second = await request(app).get('/data');
    assert.match(first.headers['content-security-policy'] ?? '', /script-src 'nonce-n1'/);
    assert.match(second.headers['content-security-policy'] ?? '', /script-src 'nonce-n2'/);
    assert.equal(second.headers['x-content-type-options'], 'nosniff');
  });
});

describe('securityHeaders: when disabled', () => {
  it('should send none of the headers', async () => {
    const res = await request(appWith(securityHeaders({ enabled: false }))).get('/data');
    assert.equal(res.headers['x-content-type-options'], undefined);
    assert.equal(res.headers['content-security-policy'], undefined);
  });

  it('should take back the headers of an earlier instance (route opt-out)', async () => {
    const res = await request(appWith(securityHeaders({ hsts_max_age: 600 }), securityHeaders({ enabled: false }))).get('/data');
    for (const h of ['x-content-type-options', 'content-security-policy', 'x-frame-options', 'strict-transport-security', 'referrer-policy', 'cross-origin-resource-policy']) {
      assert.equal(res.headers[h], undefined, h);
    }
  });
});

describe('securityHeaders: when the options are invalid', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['an unknown key, with a suggestion', { hsts_max_ag: 5 }, /Unknown key "hsts_max_ag".*Did you mean "hsts_max_age"/],
    ['enabled as a string', { enabled: 'no' }, /enabled: expected true or false, got "no"/],
    ['a negative hsts_max_age', { hsts_max_age: -1 }, /hsts_max_age: expected an integer >= 0, got -1/],
    ['hsts_max_age as a string', { hsts_max_age: '1y' }, /got "1y"/],
    ['a CSP with a line break', { content_security_policy: "default-src 'none'\r\nX-Evil: 1" }, /content_security_policy: expected a Content-Security-Policy value on one line/],
    ['an empty CSP', { content_security_policy: '' }, /must not be empty/],
    ['frame_options ALLOW-FROM', { frame_options: 'ALLOW-FROM' }, /frame_options: expected one of "DENY", "SAMEORIGIN"/],
    ['a misspelt referrer_policy', { referrer_policy: 'no-referer' }, /Did you mean "no-referrer"/],
    ['an unknown cross_origin_resource_policy', { cross_origin_resource_policy: 'none' }, /expected one of "same-origin"/],
    ['hsts_preload without hsts_max_age', { hsts_preload: true }, /hsts_preload: expected hsts_max_age >= 31536000/],
    ['hsts_preload with a short max-age', { hsts_preload: true, hsts_max_age: 600 }, /preload list rejects/],
    ['a CSP with a control character node refuses in a header', { content_security_policy: "default-src 'none'\u0001" }, /SecurityHeadersOptions\.content_security_policy: the Content-Security-Policy header .* is not a valid header value/],
    ['helmet as an array', { helmet: [] }, /helmet: expected an object of helmet options/],
    ['helmet options helmet itself rejects', { helmet: { referrerPolicy: { policy: 'nope' } } }, /SecurityHeadersOptions\.helmet: Referrer-Policy received an unexpected policy token/],
  ];
  for (const [what, input, message] of cases) {
    it(`should throw a ConfigError for ${what}`, () => {
      assert.throws(() => securityHeaders(input as SecurityHeadersOptions), (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, message);
        return true;
      });
    });
  }

  it('should throw a ConfigError for a docsPageCsp source that would break the policy', () => {
    assert.throws(() => docsPageCsp(['https://cdn.test; script-src *']), ConfigError);
  });
});
});
