/**
 * cors with the `cors` package's options, against the `cors` package itself on the same requests,
 * under Express 4 and 5: the same status and headers (the package's own suite runs against keel's
 * factory too: `npm run peer-suites cors`). Refusing disallowed origins with a 403 is keel's opt-in
 * (`rejectDisallowedOrigins`), never for a same-origin request.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import packageCors from 'cors';
import request from 'supertest';
import { ConfigError } from '../../lib/http/errors.js';
import { EXPRESS_VERSIONS, type ExpressFactory } from '../../test/helpers/express-versions.js';
import { cors, type CorsOptions } from './index.js';

type Mw = (req: any, res: any, next: any) => void;
interface Answer { status: number; headers: Record<string, string | undefined>; body: string }

function appWith(express: ExpressFactory, mw: Mw) {
  const app = express();
  app.use(mw);
  app.options('/custom', (_req, res) => void res.status(200).send('custom preflight'));
  app.get('/', (_req, res) => void res.json({ ok: true }));
  return app;
}

async function send(app: unknown, method: 'GET' | 'OPTIONS', headers: Record<string, string>, path = '/'): Promise<Answer> {
  const res = await (method === 'GET' ? request(app as never).get(path) : request(app as never).options(path)).set(headers);
  return { status: res.status, headers: res.headers as Record<string, string>, body: res.text };
}

/** The same request to an app with the cors package and to one with keel's cors, same options. */
async function compare(express: ExpressFactory, options: Record<string, unknown>, method: 'GET' | 'OPTIONS', headers: Record<string, string>, path = '/') {
  const pkg = await send(appWith(express, packageCors(options as never)), method, headers, path);
  const keel = await send(appWith(express, cors(options as CorsOptions)), method, headers, path);
  return { pkg, keel };
}

const set = (v: string | undefined) => (v ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean).sort();
const preflight = (origin: string, method = 'PUT', requestHeaders?: string) => ({
  origin, 'access-control-request-method': method, ...(requestHeaders ? { 'access-control-request-headers': requestHeaders } : {}),
});
const ACAO = 'access-control-allow-origin';
const ACAC = 'access-control-allow-credentials';

for (const { name, express } of EXPRESS_VERSIONS) {
  describe(`cors with the cors package's options under ${name}`, () => {
    describe('when origin is a list of origins and RegExps, with credentials', () => {
      const options = { origin: ['https://app.example.com', /\.partner\.example$/], credentials: true };
      for (const origin of ['https://app.example.com', 'https://eu.partner.example']) {
        it(`should allow ${origin} with the same headers as the package`, async () => {
          const { pkg, keel } = await compare(express, options, 'GET', { origin });
          assert.equal(keel.status, pkg.status);
          assert.equal(keel.headers[ACAO], pkg.headers[ACAO]);
          assert.equal(keel.headers[ACAO], origin);
          assert.equal(keel.headers[ACAC], pkg.headers[ACAC]);
          assert.deepEqual(set(keel.headers.vary), set(pkg.headers.vary));
        });
        it(`should answer a preflight from ${origin} as the package does`, async () => {
          const { pkg, keel } = await compare(express, options, 'OPTIONS', preflight(origin, 'PUT', 'Content-Type, X-Trace'));
          assert.equal(keel.status, pkg.status);
          assert.equal(keel.status, 204);
          assert.equal(keel.headers[ACAO], pkg.headers[ACAO]);
          assert.equal(keel.headers[ACAC], pkg.headers[ACAC]);
          assert.deepEqual(set(keel.headers['access-control-allow-methods']), set(pkg.headers['access-control-allow-methods']));
          assert.deepEqual(set(keel.headers['access-control-allow-headers']), set(pkg.headers['access-control-allow-headers']));
        });
      }
      it('should send no Access-Control-Allow-Origin to another origin, as the package does', async () => {
        const { pkg, keel } = await compare(express, options, 'GET', { origin: 'https://evil.example' });
        assert.equal(keel.status, pkg.status);
        assert.equal(keel.headers[ACAO], undefined);
        assert.equal(pkg.headers[ACAO], undefined);
        assert.equal(keel.headers[ACAC], pkg.headers[ACAC]);
        assert.deepEqual(set(keel.headers.vary), set(pkg.headers.vary));
      });
      it('should answer a preflight from another origin without Allow-Origin (the browser refuses it), as the package does', async () => {
        const { pkg, keel } = await compare(express, options, 'OPTIONS', preflight('https://evil.example'));
        assert.equal(pkg.status, 204);
        assert.equal(keel.status, 204);
        assert.equal(pkg.headers[ACAO], undefined);
        assert.equal(keel.headers[ACAO], undefined);
      });
      it('should refuse an actual request from another origin with a 403 problem when rejectDisallowedOrigins is set', async () => {
        const keel = await send(appWith(express, cors({ ...options, rejectDisallowedOrigins: true } as CorsOptions)), 'GET', { origin: 'https://evil.example' });
        assert.equal(keel.status, 403);
        assert.match(keel.headers['content-type']!, /^application\/problem\+json/);
      });
      it('should not let a RegExp match a look-alike origin, like the package', async () => {
        const { pkg, keel } = await compare(express, options, 'GET', { origin: 'https://partner.example.evil.com' });
        assert.equal(keel.headers[ACAO], pkg.headers[ACAO]);
        assert.equal(keel.headers[ACAO], undefined);
      });
    });

    describe('when origin is one origin with methods, allowedHeaders, exposedHeaders and maxAge', () => {
      const options = { origin: 'https://app.example.com', methods: 'GET,POST', allowedHeaders: 'Content-Type,Authorization', exposedHeaders: ['X-Total-Count'], maxAge: 600 };
      it('should answer an allowed preflight with the same lists and max age', async () => {
        const { pkg, keel } = await compare(express, options, 'OPTIONS', preflight('https://app.example.com', 'POST', 'content-type'));
        assert.equal(keel.status, pkg.status);
        assert.equal(keel.headers[ACAO], pkg.headers[ACAO]);
        assert.deepEqual(set(keel.headers['access-control-allow-methods']), set(pkg.headers['access-control-allow-methods']));
        assert.deepEqual(set(keel.headers['access-control-allow-headers']), set(pkg.headers['access-control-allow-headers']));
        assert.equal(keel.headers['access-control-max-age'], pkg.headers['access-control-max-age']);
        assert.equal(keel.headers['access-control-max-age'], '600');
      });
      it('should expose the same headers on an actual request', async () => {
        const { pkg, keel } = await compare(express, options, 'GET', { origin: 'https://app.example.com' });
        assert.equal(keel.headers[ACAO], pkg.headers[ACAO]);
        assert.equal(keel.headers['access-control-expose-headers'], pkg.headers['access-control-expose-headers']);
      });
      for (const [what, headers] of [['a method outside the list', preflight('https://app.example.com', 'DELETE')], ['a header outside the list', preflight('https://app.example.com', 'POST', 'x-secret')]] as const) {
        it(`should answer a preflight for ${what} with the lists (the browser refuses it), as the package does`, async () => {
          const { pkg, keel } = await compare(express, options, 'OPTIONS', headers);
          assert.equal(pkg.status, 204);
          assert.equal(keel.status, 204);
          assert.equal(keel.headers['access-control-allow-methods'], pkg.headers['access-control-allow-methods']);
          assert.equal(keel.headers['access-control-allow-headers'], pkg.headers['access-control-allow-headers']);
        });
      }
      it('should send the configured origin to another origin too (the browser compares it), as the package does', async () => {
        const { pkg, keel } = await compare(express, options, 'GET', { origin: 'https://other.example' });
        assert.equal(pkg.headers[ACAO], 'https://app.example.com');
        assert.equal(keel.headers[ACAO], 'https://app.example.com');
      });
    });

    describe('when origin is true (reflect)', () => {
      it('should echo the request origin with credentials, as the package does', async () => {
        const options = { origin: true, credentials: true };
        const { pkg, keel } = await compare(express, options, 'GET', { origin: 'https://any.example' });
        assert.equal(keel.headers[ACAO], pkg.headers[ACAO]);
        assert.equal(keel.headers[ACAO], 'https://any.example');
        assert.equal(keel.headers[ACAC], pkg.headers[ACAC]);
        assert.deepEqual(set(keel.headers.vary), set(pkg.headers.vary));
      });
    });

    describe('when origin is a function', () => {
      const sync = (origin: string | undefined, cb: (e: Error | null, ok?: boolean) => void) => cb(null, origin?.endsWith('.example.com') ?? false);
      const async = (origin: string | undefined, cb: (e: Error | null, ok?: boolean) => void) => void setTimeout(() => sync(origin, cb), 1);
      for (const [kind, fn] of [['calling back at once', sync], ['calling back later', async]] as const) {
        it(`should allow what it allows (${kind}), as the package does`, async () => {
          for (const origin of ['https://a.example.com', 'https://evil.example']) {
            const { pkg, keel } = await compare(express, { origin: fn }, 'GET', { origin });
            assert.equal(keel.status, pkg.status);
            assert.equal(keel.headers[ACAO], pkg.headers[ACAO], origin);
          }
          const { pkg, keel } = await compare(express, { origin: fn }, 'OPTIONS', preflight('https://a.example.com'));
          assert.equal(keel.status, pkg.status);
          assert.equal(keel.headers[ACAO], pkg.headers[ACAO]);
        });
      }
      it('should pass an error from the function to next(err), as the package does', async () => {
        const failing = (_o: string | undefined, cb: (e: Error | null) => void) => cb(new Error('lookup failed'));
        const { pkg, keel } = await compare(express, { origin: failing }, 'GET', { origin: 'https://a.example.com' });
        assert.equal(keel.status, pkg.status);
        assert.equal(keel.status, 500);
      });
    });

    describe('when origin is false', () => {
      it('should add no CORS headers and pass preflights on, as the package does', async () => {
        const { pkg, keel } = await compare(express, { origin: false }, 'OPTIONS', preflight('https://a.example.com'));
        assert.equal(keel.status, pkg.status);
        assert.equal(keel.headers[ACAO], undefined);
        assert.equal(pkg.headers[ACAO], undefined);
      });
    });

    describe('when preflightContinue is true', () => {
      it("should set the preflight headers and let the app's OPTIONS route answer, as the package does", async () => {
        const { pkg, keel } = await compare(express, { origin: 'https://app.example.com', preflightContinue: true }, 'OPTIONS', preflight('https://app.example.com'), '/custom');
        assert.equal(keel.status, pkg.status);
        assert.equal(keel.body, 'custom preflight');
        assert.equal(keel.headers[ACAO], pkg.headers[ACAO]);
        assert.deepEqual(set(keel.headers['access-control-allow-methods']), set(pkg.headers['access-control-allow-methods']));
      });
    });

    describe('when optionsSuccessStatus is 200', () => {
      it('should answer preflights with 200, as the package does', async () => {
        const { pkg, keel } = await compare(express, { origin: 'https://app.example.com', optionsSuccessStatus: 200 }, 'OPTIONS', preflight('https://app.example.com'));
        assert.equal(keel.status, pkg.status);
        assert.equal(keel.status, 200);
      });
    });

    describe('when the options come from a delegate (req, cb) allowing one origin', () => {
      // The cors package's README pattern: per-request options. keel once ignored the delegate and sent
      // `*` to every origin, so any site could read these responses.
      const allowlist = ['https://app.example.com'];
      const delegate = (req: any, cb: (err: unknown, options?: Record<string, unknown>) => void) =>
        cb(null, { origin: allowlist.includes(req.headers.origin), credentials: true, maxAge: 600 });
      async function both(method: 'GET' | 'OPTIONS', headers: Record<string, string>) {
        const pkg = await send(appWith(express, packageCors(delegate as never)), method, headers);
        const keel = await send(appWith(express, cors(delegate as never) as Mw), method, headers);
        return { pkg, keel };
      }
      it('should allow that origin, with credentials, as the package does', async () => {
        const { pkg, keel } = await both('GET', { origin: 'https://app.example.com' });
        assert.equal(keel.status, 200);
        assert.equal(keel.headers[ACAO], 'https://app.example.com');
        assert.equal(keel.headers[ACAC], 'true');
        assert.equal(keel.headers[ACAO], pkg.headers[ACAO]);
        assert.deepEqual(set(keel.headers.vary), set(pkg.headers.vary));
      });
      it('should answer its preflight with the delegate\'s max age, as the package does', async () => {
        const { pkg, keel } = await both('OPTIONS', preflight('https://app.example.com', 'PUT'));
        assert.equal(keel.status, 204);
        assert.equal(keel.headers[ACAO], 'https://app.example.com');
        assert.equal(keel.headers['access-control-max-age'], '600');
        assert.equal(keel.headers['access-control-max-age'], pkg.headers['access-control-max-age']);
      });
      for (const origin of ['https://evil.example', 'https://app.example.com.evil.example', 'null']) {
        it(`should give ${origin} no CORS headers at all (never *), as the package does`, async () => {
          for (const [method, headers] of [['GET', { origin }], ['OPTIONS', preflight(origin, 'PUT')]] as const) {
            const { pkg, keel } = await both(method, headers);
            assert.equal(keel.headers[ACAO], undefined, `${method}: Access-Control-Allow-Origin`);
            assert.equal(keel.headers[ACAC], undefined, `${method}: Access-Control-Allow-Credentials`);
            assert.equal(keel.status, pkg.status);
            assert.equal(keel.headers[ACAO], pkg.headers[ACAO]);
          }
        });
      }
      it("should pass the delegate's error to next(err), as the package does", async () => {
        const failing = (_req: unknown, cb: (err: unknown) => void) => cb(new Error('no options'));
        const app = appWith(express, cors(failing as never) as Mw);
        app.use((err: Error, _req: unknown, res: any, _next: unknown) => void res.status(500).send(`handled: ${err.message}`));
        const res = await send(app, 'GET', { origin: 'https://app.example.com' });
        assert.equal(res.status, 500);
        assert.equal(res.body, 'handled: no options');
      });
    });

    describe('when only the default methods are implied', () => {
      it("should allow the package's default methods (GET, HEAD, PUT, PATCH, POST, DELETE)", async () => {
        const { pkg, keel } = await compare(express, { origin: 'https://app.example.com' }, 'OPTIONS', preflight('https://app.example.com', 'PATCH'));
        assert.equal(keel.status, pkg.status);
        assert.deepEqual(set(keel.headers['access-control-allow-methods']), set(pkg.headers['access-control-allow-methods']));
      });
    });
  });
}

describe('cors with the cors package options: refused configuration', () => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ["keel's and the package's keys in one call", { origin: 'https://a.example', allowed_methods: ['GET'] }, /not both.*origin is the cors package's, allowed_methods is keel's/],
    ['an unknown key next to package keys', { origin: true, allowOrigin: 'x' }, /allowOrigin.*one of the cors package options/],
    ['an origin of the wrong type', { origin: 42 }, /origin/],
    ['a list mixing origins and numbers', { origin: ['https://a.example', 3] }, /origin/],
    ['a non-2xx optionsSuccessStatus', { origin: true, optionsSuccessStatus: 500 }, /optionsSuccessStatus/],
    ['methods that are not a list or string', { origin: true, methods: 5 }, /methods/],
    ['an origin that is not a serialised origin', { origin: 'https://a.example/' }, /Write it as "https:\/\/a.example"/],
  ];
  for (const [what, options, message] of cases) {
    it(`should throw a ConfigError for ${what}`, () => {
      assert.throws(() => cors(options as CorsOptions), (err: unknown) => err instanceof ConfigError && message.test(err.message));
    });
  }
});
