import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type express from 'express';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import request from 'supertest';
import { cors, type CorsOptions } from './index.js';
import { ConfigError } from '../../lib/http/errors.js';
import { CorsConfig } from '../../lib/records/route.js';
import { describeOnReject, describeOnRejectConfig } from '../../test/helpers/on-reject.js';
import { rawHttpExchange } from '../../test/helpers/raw-http.js';
import type { AddressInfo } from 'node:net';

// Every test in this block runs under Express 4 and under Express 5 (test/helpers/express-versions.ts).
for (const { name: expressVersion, express } of EXPRESS_VERSIONS) describe(`under ${expressVersion}`, () => {
function appWith(options?: CorsOptions) {
  const app = express();
  app.use(cors(options));
  app.all('/api/data', (_req, res) => {
    res.setHeader('X-Total-Count', '42');
    res.json({ ok: true });
  });
  return app;
}

const EXAMPLE = 'https://example.com';
const preflight = (app: express.Express, headers: Record<string, string>) => request(app).options('/api/data').set(headers);

describe("cors: when called without options (the cors package's cors())", () => {
  const app = appWith();

  it("should answer a preflight from any origin with 204, * and the package's default methods", async () => {
    const res = await preflight(app, { Origin: 'https://a.test', 'Access-Control-Request-Method': 'DELETE' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['access-control-allow-methods'], 'GET,HEAD,PUT,PATCH,POST,DELETE');
    assert.equal(res.headers['access-control-allow-credentials'], undefined);
    assert.equal(res.headers['access-control-max-age'], undefined);
    assert.equal(res.text, '');
  });

  it('should echo the requested headers, as the package does', async () => {
    const res = await preflight(app, { Origin: 'https://a.test', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type, x-custom' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-headers'], 'content-type, x-custom');
  });

  it('should add Access-Control-Allow-Origin: * to an actual request and run the handler', async () => {
    const res = await request(app).get('/api/data').set('Origin', 'https://a.test');
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['access-control-expose-headers'], undefined);
    assert.equal(res.headers.vary, undefined);
    assert.deepEqual(res.body, { ok: true });
  });

  it('should send Access-Control-Allow-Origin: * without Origin too, as the package does (the same answer for every request)', async () => {
    const res = await request(app).get('/api/data');
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers.vary, undefined);
  });

  it('should answer a plain OPTIONS request (no Access-Control-Request-Method) as a preflight, as the package does', async () => {
    const res = await request(app).options('/api/data').set('Origin', 'https://a.test');
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.text, '');
  });
});

describe('cors: when only the keys both styles share are given (maxAge, allowedHeaders)', () => {
  it("should read them as the cors package's options and keep reflecting the requested headers", async () => {
    const res = await preflight(appWith({ maxAge: 600 }), { Origin: 'https://a.test', 'Access-Control-Request-Method': 'PUT', 'Access-Control-Request-Headers': 'content-type' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['access-control-allow-headers'], 'content-type');
    assert.equal(res.headers['access-control-max-age'], '600');
  });
});

describe('cors: when a CorsConfig allows any origin (the record defaults)', () => {
  const app = appWith({ allowed_origins: ['*'] });

  it('should echo the origin with Vary: Origin on a preflight, as the reference does', async () => {
    const res = await preflight(app, { Origin: 'https://a.test', 'Access-Control-Request-Method': 'DELETE' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], 'https://a.test');
    assert.equal(res.headers['access-control-allow-methods'], '*');
    assert.equal(res.headers['access-control-allow-headers'], '');
    assert.equal(res.headers['access-control-allow-credentials'], undefined);
    assert.equal(res.headers['access-control-max-age'], undefined);
    assert.equal(res.headers.vary, 'Origin');
    assert.equal(res.text, '');
  });

  it('should refuse a preflight asking for any header, since allowed_headers is empty', async () => {
    const res = await preflight(app, { Origin: 'https://a.test', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'Content-Type' });
    assert.equal(res.status, 403);
    assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
    assert.equal(res.body.detail, "CORS preflight for header(s) 'Content-Type' not allowed");
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });

  it('should echo the origin on an actual request and send no Expose-Headers', async () => {
    const res = await request(app).get('/api/data').set('Origin', 'https://a.test');
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], 'https://a.test');
    assert.equal(res.headers['access-control-expose-headers'], undefined);
    assert.equal(res.headers.vary, 'Origin');
    assert.deepEqual(res.body, { ok: true });
  });

  it('should answer an OPTIONS request with Origin but without Access-Control-Request-Method as a preflight', async () => {
    const res = await request(app).options('/api/data').set('Origin', 'https://a.test');
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], 'https://a.test');
    assert.equal(res.headers['access-control-allow-methods'], '*');
    assert.equal(res.headers['x-total-count'], undefined);
  });

  it('should not check an empty Access-Control-Request-Method', async () => {
    const strict = appWith({ allowed_origins: [EXAMPLE], allowed_methods: ['GET'] });
    const res = await preflight(strict, { Origin: EXAMPLE, 'Access-Control-Request-Method': '' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-methods'], 'GET');
  });

  it('should pass an OPTIONS request without Origin to the route (not a CORS request)', async () => {
    const res = await request(app).options('/api/data');
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });

  it('should treat an empty Origin as no Origin', async () => {
    const res = await request(app).get('/api/data').set('Origin', '');
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });
});

describe('cors: when origins are listed', () => {
  const app = appWith({ allowed_origins: [EXAMPLE], allowed_methods: ['GET', 'POST'], allowed_headers: ['Content-Type'], max_age: 3600, expose_headers: ['X-Total-Count', 'X-Request-Id'] });

  it('should echo an allowed origin with Vary: Origin on a preflight', async () => {
    const res = await preflight(app, { Origin: EXAMPLE, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'Content-Type' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], EXAMPLE);
    assert.equal(res.headers['access-control-allow-methods'], 'GET, POST');
    assert.equal(res.headers['access-control-allow-headers'], 'Content-Type');
    assert.equal(res.headers['access-control-max-age'], '3600');
    assert.match(res.headers.vary ?? '', /Origin/);
  });

  it('should compare requested header names case-insensitively', async () => {
    const res = await preflight(app, { Origin: EXAMPLE, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' });
    assert.equal(res.status, 204);
  });

  it('should expose the configured headers on an actual response', async () => {
    const res = await request(app).get('/api/data').set('Origin', EXAMPLE);
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], EXAMPLE);
    assert.equal(res.headers['access-control-expose-headers'], 'X-Total-Count, X-Request-Id');
    assert.equal(res.headers.vary, 'Origin');
  });

  it('should send Vary: Origin even without an Origin header (the response depends on it)', async () => {
    const res = await request(app).get('/api/data');
    assert.equal(res.headers.vary, 'Origin');
  });

  for (const [name, headers, detail] of [
    ['a disallowed origin (the reference\'s detail)', { Origin: 'https://evil.test', 'Access-Control-Request-Method': 'POST' }, /^CORS request from origin 'https:\/\/evil\.test' not allowed$/],
    ['an origin differing only in case (RFC 6454 origins are compared exactly)', { Origin: 'https://EXAMPLE.COM', 'Access-Control-Request-Method': 'POST' }, /^CORS request from origin 'https:\/\/EXAMPLE\.COM' not allowed$/],
    ['a disallowed method', { Origin: EXAMPLE, 'Access-Control-Request-Method': 'DELETE' }, /method 'DELETE'/],
    ['a lower-case method (methods are case-sensitive)', { Origin: EXAMPLE, 'Access-Control-Request-Method': 'post' }, /method 'post'/],
    ['a disallowed header', { Origin: EXAMPLE, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'X-Custom-Header' }, /'X-Custom-Header'/],
    ['one disallowed header among allowed ones', { Origin: EXAMPLE, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'Content-Type, Authorization' }, /'Authorization'/],
  ] as const) {
    it(`should reject a preflight with ${name} with a 403 problem`, async () => {
      const res = await preflight(app, headers);
      assert.equal(res.status, 403);
      assert.match(res.headers['content-type'] ?? '', /^application\/problem\+json/);
      assert.equal(res.body.status, 403);
      assert.equal(res.body.title, 'Forbidden');
      assert.match(res.body.detail, detail);
      assert.equal(res.headers['access-control-allow-origin'], undefined);
    });
  }

  it('should run an actual request from a disallowed origin without CORS headers (the browser blocks it)', async () => {
    const res = await request(app).get('/api/data').set('Origin', 'https://EXAMPLE.COM');
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.equal(res.headers['access-control-expose-headers'], undefined);
    assert.equal(res.headers.vary, 'Origin');
  });
});

describe('cors: when credentials are allowed for a listed origin', () => {
  const app = appWith({ allowedOrigins: [EXAMPLE], allowCredentials: true });

  it('should echo the origin instead of * (Fetch: * is literal with credentials)', async () => {
    const res = await request(app).get('/api/data').set('Origin', EXAMPLE);
    assert.equal(res.headers['access-control-allow-origin'], EXAMPLE);
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
    assert.equal(res.headers.vary, 'Origin');
  });

  it('should echo the requested method instead of *', async () => {
    const res = await preflight(app, { Origin: EXAMPLE, 'Access-Control-Request-Method': 'PATCH' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-methods'], 'PATCH');
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
  });
});

// Attack replayed (issue 13, item 7): with `allowed_origins: ["*"]` and credentials, reflecting the
// Origin let any site read responses made with the user's cookies.
describe('cors: when credentials are allowed with allowed_origins ["*"]', () => {
  const app = appWith({ allowCredentials: true });
  const EVIL = 'https://evil.test';

  it('should answer * without Allow-Credentials to an actual request from any origin', async () => {
    const res = await request(app).get('/api/data').set('Origin', EVIL).set('Cookie', 'session=1');
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['access-control-allow-credentials'], undefined);
    assert.equal(res.headers.vary, undefined);
  });

  it('should answer a preflight with * and no Allow-Credentials', async () => {
    const res = await preflight(app, { Origin: EVIL, 'Access-Control-Request-Method': 'PUT' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['access-control-allow-credentials'], undefined);
  });

  it('should still grant credentials to an origin listed by name next to *', async () => {
    const mixed = appWith({ allowedOrigins: ['*', EXAMPLE], allowCredentials: true });
    const named = await request(mixed).get('/api/data').set('Origin', EXAMPLE);
    assert.equal(named.headers['access-control-allow-origin'], EXAMPLE);
    assert.equal(named.headers['access-control-allow-credentials'], 'true');
    assert.equal(named.headers.vary, 'Origin');
    const other = await request(mixed).get('/api/data').set('Origin', EVIL);
    assert.equal(other.headers['access-control-allow-origin'], '*');
    assert.equal(other.headers['access-control-allow-credentials'], undefined);
    assert.equal(other.headers.vary, 'Origin');
  });
});

describe('cors: when allowed_headers holds *', () => {
  it('should allow any requested header and answer Access-Control-Allow-Headers: *', async () => {
    const res = await preflight(appWith({ allowed_headers: ['*'] }), { Origin: EXAMPLE, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization, x-anything' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-headers'], '*');
  });

  it('should echo the requested headers with credentials (Fetch: * is literal then)', async () => {
    const res = await preflight(appWith({ allowed_origins: [EXAMPLE], allowed_headers: ['*'], allow_credentials: true }), { Origin: EXAMPLE, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization, x-anything' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-headers'], 'authorization, x-anything');
    assert.equal(res.headers['access-control-allow-credentials'], 'true');
  });
});

describe('cors: when expose_headers is an empty list', () => {
  it('should send an empty Access-Control-Expose-Headers, as the reference does', async () => {
    const res = await request(appWith({ allowed_origins: [EXAMPLE], expose_headers: [] })).get('/api/data').set('Origin', EXAMPLE);
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-expose-headers'], '');
  });
});

describe('cors: when rejectDisallowedOrigins is set', () => {
  const app = appWith({ allowed_origins: [EXAMPLE], rejectDisallowedOrigins: true });

  it('should answer an actual request from a disallowed origin with a 403 problem and not run the handler', async () => {
    const res = await request(app).get('/api/data').set('Origin', 'https://malicious-site.com');
    assert.equal(res.status, 403);
    assert.equal(res.body.detail, "CORS request from origin 'https://malicious-site.com' not allowed");
    assert.equal(res.headers['x-total-count'], undefined);
  });

  it('should still serve allowed origins and requests without Origin', async () => {
    assert.equal((await request(app).get('/api/data').set('Origin', EXAMPLE)).status, 200);
    assert.equal((await request(app).get('/api/data')).status, 200);
  });
});

describe('cors: Private Network Access preflights', () => {
  const headers = { Origin: EXAMPLE, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Private-Network': 'true' };

  it('should not grant private network access by default', async () => {
    const res = await preflight(appWith(), headers);
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-private-network'], undefined);
  });

  it('should grant it when allowPrivateNetwork is true', async () => {
    const res = await preflight(appWith({ allowPrivateNetwork: true }), headers);
    assert.equal(res.headers['access-control-allow-private-network'], 'true');
  });
});

describe('cors: when the configuration is given as camelCase or as a parsed CorsConfig', () => {
  it('should accept both and behave the same', async () => {
    for (const options of [{ allowedOrigins: [EXAMPLE], maxAge: 5 }, CorsConfig.parse({ allowed_origins: [EXAMPLE], max_age: 5 })]) {
      const res = await preflight(appWith(options), { Origin: EXAMPLE, 'Access-Control-Request-Method': 'GET' });
      assert.equal(res.headers['access-control-allow-origin'], EXAMPLE);
      assert.equal(res.headers['access-control-max-age'], '5');
    }
  });

  it('should upper-case configured method names', async () => {
    const res = await preflight(appWith({ allowed_methods: ['get', 'put'] }), { Origin: EXAMPLE, 'Access-Control-Request-Method': 'PUT' });
    assert.equal(res.status, 204);
    assert.equal(res.headers['access-control-allow-methods'], 'GET, PUT');
  });
});

describe('cors: when the configuration is invalid', () => {
  const bad: [string, unknown, RegExp][] = [
    ['an unknown key', { allow_origins: [EXAMPLE] }, /Unknown key "allow_origins".*allowed_origins/],
    ['origins that are not a list', { allowed_origins: EXAMPLE }, /allowed_origins/],
    ['an empty origin', { allowed_origins: [''] }, /allowed_origins\[0\]/],
    ['an origin with a trailing slash', { allowed_origins: ['https://example.com/'] }, /allowed_origins\[0\].*"https:\/\/example.com"/],
    ['an origin with upper-case host', { allowed_origins: ['https://Example.com'] }, /allowed_origins\[0\]/],
    ['an origin without scheme', { allowed_origins: ['example.com'] }, /allowed_origins\[0\]/],
    ['an origin with a path', { allowed_origins: ['https://example.com/app'] }, /allowed_origins\[0\]/],
    ['a method with a space', { allowed_methods: ['GE T'] }, /allowed_methods\[0\]/],
    ['a header name with a colon', { allowed_headers: ['X-A:'] }, /allowed_headers\[0\]/],
    ['an expose header name with a space', { expose_headers: ['X Total'] }, /expose_headers\[0\]/],
    ['a negative max_age', { max_age: -1 }, /max_age/],
    ['a fractional max_age', { max_age: 1.5 }, /max_age/],
    ['a string allow_credentials', { allow_credentials: 'yes' }, /allow_credentials/],
    ['a string rejectDisallowedOrigins', { rejectDisallowedOrigins: 'yes' }, /rejectDisallowedOrigins/],
    ['a number allowPrivateNetwork', { allowPrivateNetwork: 1 }, /allowPrivateNetwork/],
  ];
  for (const [name, options, message] of bad) {
    it(`should throw a ConfigError for ${name}`, () => {
      assert.throws(() => cors(options as CorsOptions), (err: unknown) => err instanceof ConfigError && message.test(err.message));
    });
  }
});

describe('cors: when the request headers are hostile', () => {
  const listed = { allowed_origins: [EXAMPLE], allowed_methods: ['GET', 'POST'], allowed_headers: ['Content-Type'], rejectDisallowedOrigins: true };
  /** One raw exchange (repeated headers as sent, no client normalising them) with an app on a real socket. */
  async function raw(options: CorsOptions, lines: string[], method = 'OPTIONS') {
    const server = appWith(options).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      return await rawHttpExchange((server.address() as AddressInfo).port, [`${method} /api/data HTTP/1.1`, 'Host: localhost', ...lines, 'Connection: close', '', ''].join('\r\n'));
    } finally {
      server.close();
    }
  }

  it('should refuse a huge Origin with a 403 problem, and echo it only where any origin is allowed', async () => {
    const huge = `https://${'a'.repeat(8000)}.example`;
    const refused = await preflight(appWith(listed), { Origin: huge, 'Access-Control-Request-Method': 'GET' });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.detail, `CORS request from origin '${huge}' not allowed`);
    const echoed = await request(appWith({ allowed_origins: ['*'] })).get('/api/data').set('Origin', huge);
    assert.equal(echoed.status, 200);
    assert.equal(echoed.headers['access-control-allow-origin'], huge);
  });

  it('should not take a repeated Origin (node joins repeats with ", ") for an allowed one', async () => {
    const preflightAnswer = await raw(listed, [`Origin: ${EXAMPLE}`, 'Origin: https://evil.test', 'Access-Control-Request-Method: GET']);
    assert.equal(preflightAnswer.status, 403);
    assert.equal(preflightAnswer.headers['access-control-allow-origin'], undefined);
    const actual = await raw(listed, [`Origin: ${EXAMPLE}`, 'Origin: https://evil.test'], 'GET');
    assert.equal(actual.status, 403);
    assert.equal(actual.headers['access-control-allow-origin'], undefined);
  });

  it('should check every value of a repeated Access-Control-Request-Headers', async () => {
    const res = await raw(listed, [`Origin: ${EXAMPLE}`, 'Access-Control-Request-Method: POST', 'Access-Control-Request-Headers: Content-Type', 'Access-Control-Request-Headers: X-Smuggled']);
    assert.equal(res.status, 403);
    assert.match(res.body, /'X-Smuggled'/);
  });

  it('should refuse a repeated Access-Control-Request-Method (no method is called "GET, DELETE")', async () => {
    const res = await raw(listed, [`Origin: ${EXAMPLE}`, 'Access-Control-Request-Method: GET', 'Access-Control-Request-Method: DELETE']);
    assert.equal(res.status, 403);
    assert.match(res.body, /method 'GET, DELETE'/);
  });

  it('should skip empty elements of Access-Control-Request-Headers (RFC 9110 §5.6.1) and refuse names outside the list', async () => {
    const sparse = await preflight(appWith(listed), { Origin: EXAMPLE, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': ' , content-type,, ,' });
    assert.equal(sparse.status, 204);
    assert.equal(sparse.headers['access-control-allow-headers'], 'Content-Type');
    const notAToken = await preflight(appWith(listed), { Origin: EXAMPLE, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'Content-Type, X Y' });
    assert.equal(notAToken.status, 403);
    assert.equal(notAToken.body.detail, "CORS preflight for header(s) 'X Y' not allowed");
    const many = Array.from({ length: 500 }, (_, i) => `X-H${i}`).join(', ');
    const flood = await preflight(appWith(listed), { Origin: EXAMPLE, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': many });
    assert.equal(flood.status, 403);
  });

  it('should echo an Origin with bytes outside ASCII where any origin is allowed, without failing', async () => {
    // The socket carries the UTF-8 bytes of "é"; node reads header bytes as latin1 and writes them back unchanged.
    const res = await raw({ allowed_origins: ['*'] }, ['Origin: https://\u00e9xample.test'], 'GET');
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], Buffer.from('https://\u00e9xample.test', 'utf8').toString('latin1'));
  });
});

describe('cors: when other middleware already set Vary', () => {
  it('should append Origin once', async () => {
    const app = express();
    app.use((_req, res, next) => {
      res.setHeader('Vary', 'Accept-Encoding');
      next();
    });
    app.use(cors({ allowed_origins: [EXAMPLE] }));
    app.use(cors({ allowed_origins: [EXAMPLE] }));
    app.get('/', (_req, res) => res.end('x'));
    const res = await request(app).get('/').set('Origin', EXAMPLE);
    assert.equal(res.headers.vary, 'Accept-Encoding, Origin');
  });
});
});

const preflightOf = (agent: ReturnType<typeof request>, origin: string, method = 'PUT') =>
  agent.options('/').set('Origin', origin).set('Access-Control-Request-Method', method);

describeOnReject('cors, a preflight from a disallowed origin', {
  make: (onReject) => cors({ allowed_origins: ['https://app.example.com'], onReject }),
  send: (agent) => preflightOf(agent, 'https://evil.example'),
  status: 403,
});
describeOnReject('cors, a preflight for a disallowed method', {
  make: (onReject) => cors({ allowed_origins: ['https://app.example.com'], allowed_methods: ['GET'], onReject }),
  send: (agent) => preflightOf(agent, 'https://app.example.com', 'DELETE'),
  status: 403,
});
describeOnReject('cors, a simple request from a disallowed origin with rejectDisallowedOrigins', {
  make: (onReject) => cors({ allowed_origins: ['https://app.example.com'], rejectDisallowedOrigins: true, onReject }),
  send: (agent) => agent.post('/').set('Origin', 'https://evil.example'),
  status: 403,
});
describeOnRejectConfig('cors', (o) => cors(o as CorsOptions), /CorsConfig/);
