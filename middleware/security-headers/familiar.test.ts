/**
 * securityHeaders with helmet's options, against helmet itself on the same requests, under Express 4
 * and 5: `securityHeaders({ helmet: opts })` and `securityHeaders(opts)` send exactly the headers of
 * `helmet(opts)`. There is no intended difference in the headers; keel replays helmet's headers
 * recorded once at start-up instead of running helmet per response (unless a CSP directive is a function).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import helmet, { type HelmetOptions } from 'helmet';
import request from 'supertest';
import { ConfigError } from '../../lib/http/errors.js';
import { EXPRESS_VERSIONS, type ExpressFactory } from '../../test/helpers/express-versions.js';
import { securityHeaders, type SecurityHeadersHelmetOptions, type SecurityHeadersOptions } from './index.js';

type Mw = (req: any, res: any, next: any) => void;
/** Headers that depend on the moment or the connection, not on the middleware. */
const VOLATILE = new Set(['date', 'etag', 'connection', 'keep-alive', 'content-length']);

function appWith(express: ExpressFactory, mw: Mw) {
  const app = express();
  app.use((_req, res, next) => {
    res.locals.nonce = 'abc123';
    next();
  });
  app.use(mw);
  app.get('/', (_req, res) => void res.json({ ok: true }));
  return app;
}

async function headersOf(app: unknown): Promise<Record<string, string>> {
  const res = await request(app as never).get('/');
  return Object.fromEntries(Object.entries(res.headers as Record<string, string>).filter(([k]) => !VOLATILE.has(k)));
}

const nonce = (_req: unknown, res: unknown) => `'nonce-${(res as { locals: { nonce: string } }).locals.nonce}'`;
const cases: [string, HelmetOptions][] = [
  ["helmet's defaults ({})", {}],
  ['a CSP with directives', { contentSecurityPolicy: { directives: { defaultSrc: ["'self'"], imgSrc: ["'self'", 'data:'] } } }],
  ['a CSP without helmet defaults, report-only', { contentSecurityPolicy: { useDefaults: false, reportOnly: true, directives: { defaultSrc: ["'none'"] } } }],
  ['a CSP directive that is a function (a nonce)', { contentSecurityPolicy: { directives: { scriptSrc: ["'self'", nonce] } } }],
  ['HSTS tuned', { strictTransportSecurity: { maxAge: 123, includeSubDomains: false } }],
  ['HSTS off through the legacy alias', { hsts: false }],
  ['X-Frame-Options DENY through the legacy alias', { frameguard: { action: 'deny' } }],
  ['X-Frame-Options off', { xFrameOptions: false }],
  ['COEP on, CORP cross-origin, referrer policy list', { crossOriginEmbedderPolicy: true, crossOriginResourcePolicy: { policy: 'cross-origin' }, referrerPolicy: { policy: ['origin', 'unsafe-url'] } }],
  ['X-Powered-By left alone', { xPoweredBy: false }],
];

for (const { name, express } of EXPRESS_VERSIONS) {
  describe(`securityHeaders with helmet's options under ${name}`, () => {
    for (const [what, opts] of cases) {
      it(`should send exactly helmet's headers for ${what}, given as { helmet: opts }`, async () => {
        const expected = await headersOf(appWith(express, helmet(opts)));
        assert.deepEqual(await headersOf(appWith(express, securityHeaders({ helmet: opts }))), expected);
      });
      // At the top level, {} is keel's own default (the API headers), not helmet's.
      if (Object.keys(opts).length === 0) continue;
      it(`should send exactly helmet's headers for ${what}, given at the top level`, async () => {
        const expected = await headersOf(appWith(express, helmet(opts)));
        assert.deepEqual(await headersOf(appWith(express, securityHeaders(opts as SecurityHeadersHelmetOptions))), expected);
      });
    }
    it("should send HSTS and SAMEORIGIN with { helmet: {} } (helmet's defaults), not keel's API choices", async () => {
      const h = await headersOf(appWith(express, securityHeaders({ helmet: {} })));
      assert.match(h['strict-transport-security']!, /^max-age=31536000/);
      assert.equal(h['x-frame-options'], 'SAMEORIGIN');
    });
    it('should send nothing when enabled is false next to helmet options', async () => {
      const h = await headersOf(appWith(express, securityHeaders({ enabled: false, helmet: {} })));
      assert.equal(h['x-content-type-options'], undefined);
    });
    it("should keep keel's API headers when keel's keys are used (no HSTS unless asked)", async () => {
      const h = await headersOf(appWith(express, securityHeaders({ frame_options: 'SAMEORIGIN' })));
      assert.equal(h['strict-transport-security'], undefined);
      assert.equal(h['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
    });
  });
}

describe('securityHeaders with helmet options: refused configuration', () => {
  const refused: [string, unknown, RegExp][] = [
    ["keel's key next to { helmet }", { helmet: {}, hsts_max_age: 600 }, /hsts_max_age.*not both/],
    ["keel's key next to helmet's top-level keys", { contentSecurityPolicy: { directives: { defaultSrc: ["'self'"] } }, frame_options: 'DENY' }, /frame_options.*not both/],
    ['helmet keys both nested and at the top level', { helmet: {}, xFrameOptions: false }, /xFrameOptions.*not both/],
    ['helmet options helmet rejects, at the top level', { referrerPolicy: { policy: 'nope' } }, /SecurityHeadersOptions: Referrer-Policy received an unexpected policy token/],
  ];
  for (const [what, input, message] of refused) {
    it(`should throw a ConfigError for ${what}`, () => {
      assert.throws(() => securityHeaders(input as SecurityHeadersOptions), (err: unknown) => err instanceof ConfigError && message.test(err.message));
    });
  }
});
