/**
 * A route's schemas are checked when the route is registered (issue 25, item 3): an invalid schema,
 * a default that fails its own schema, is an AppError('Route') naming the method, the path, the part
 * and the problem in words, thrown by `app.get(...)` itself, before any listen().
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { createApp, type App } from '../lib/index.js';
import { AppError } from '../lib/http/errors.js';

/** The AppError a registration throws (fails the test when it throws none). */
function registrationError(register: (app: App) => void): AppError {
  const app = createApp();
  try {
    register(app as never);
  } catch (err) {
    assert.ok(err instanceof AppError, `expected an AppError, got ${String(err)}`);
    assert.equal(err.code, 'KEEL_APP_ROUTE');
    return err;
  }
  assert.fail('registering the route threw nothing');
}

describe('when a route schema is not valid JSON Schema', () => {
  it('should name the route, the part and the bad keyword value, with the type meant', () => {
    const err = registrationError((app) => app.post('/notes', () => ({}), { body: { type: 'object', properties: { title: { type: 'strng' } } } } as never));
    assert.equal(err.message, 'Route POST /notes: the body schema is invalid: at properties.title.type, "strng" is not one of array, boolean, integer, null, number, object, string (did you mean "string"?). Fix it to be valid JSON Schema (draft-07).');
  });

  it('should name a query parameter as query.<name>', () => {
    const err = registrationError((app) => app.get('/items', () => ({}), { parameters: { query: { limit: { type: 'integr' } } } } as never));
    assert.match(err.message, /^Route GET \/items: the query\.limit schema is invalid: at type, "integr" is not one of .*\(did you mean "integer"\?\)/);
  });

  it('should name cookies and headers by the option names a route uses', () => {
    const cookie = registrationError((app) => app.get('/c', () => ({}), { parameters: { cookies: { session: { type: 'string', minLength: -1 } } } } as never));
    assert.match(cookie.message, /^Route GET \/c: the cookies\.session schema is invalid: at minLength, -1 must be >= 0/);
    const header = registrationError((app) => app.get('/h', () => ({}), { parameters: { headers: { x_token: { type: 'string', pattern: 5 } } } } as never));
    assert.match(header.message, /^Route GET \/h: the headers\.x_token schema is invalid: at pattern, 5 must be string/);
  });

  it('should check the response schema', () => {
    const err = registrationError((app) => app.get('/r', () => ({}), { response: { type: 'object', required: 'id' } } as never));
    assert.match(err.message, /^Route GET \/r: the response schema is invalid: at required, "id" must be array/);
  });

  it('should refuse a $ref that resolves to nothing', () => {
    const err = registrationError((app) => app.put('/r', () => ({}), { body: { $ref: '#/definitions/Missing' } } as never));
    assert.equal(err.message, "Route PUT /r: the body schema does not compile: can't resolve reference #/definitions/Missing from id #.");
  });

  it('should check a 2020-12 schema against its own draft', () => {
    const err = registrationError((app) => app.post('/n', () => ({}), { body: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', prefixItems: 'x' } } as never));
    assert.match(err.message, /^Route POST \/n: the body schema is invalid: at prefixItems, "x" must be array/);
  });

  it('should fail at registration, before listen()', () => {
    const app = createApp();
    assert.throws(() => app.get('/x', () => ({}), { parameters: { query: { n: { type: 'numbr' } } } } as never), AppError);
    // The bad route was not kept: the app still builds.
    assert.doesNotThrow(() => app.intoRouter());
  });
});

describe('when a default does not match its own schema', () => {
  it('should refuse an integer query parameter whose default is text', () => {
    const err = registrationError((app) => app.get('/items', () => ({}), { parameters: { query: { limit: { type: 'integer', default: 'ten' } } } }));
    assert.equal(err.message, 'Route GET /items: the default of query.limit ("ten") does not match its own schema: must be integer. Give a default of the declared type, or remove it.');
  });

  it('should refuse a default outside the bounds', () => {
    const err = registrationError((app) => app.get('/items', () => ({}), { parameters: { query: { limit: { type: 'integer', minimum: 1, default: 0 } } } }));
    assert.match(err.message, /the default of query\.limit \(0\) does not match its own schema: must be >= 1/);
  });

  it('should refuse a bad default of a body property, named by its place', () => {
    const err = registrationError((app) => app.post('/b', () => ({}), { body: { type: 'object', properties: { tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'], default: 'c' } } } } }));
    assert.match(err.message, /^Route POST \/b: the default of body\.tags\[\] \("c"\) does not match its own schema: must be equal to one of the allowed values/);
  });

  it('should accept a null default (FastAPI\'s `= None`: optional, absent is null)', () => {
    const app = createApp();
    assert.doesNotThrow(() => app.get('/h', () => ({}), { parameters: { headers: { x_trace: { type: 'string', default: null } } } }));
  });

  it('should serve a default that matches, as the handler was promised', async () => {
    const app = createApp({}, (a) => a.get('/items', (data) => ({ limit: data.query.limit, type: typeof data.query.limit }), { parameters: { query: { limit: { type: 'integer', default: 10 } } } }));
    const res = await request(app.intoRouter()).get('/items');
    assert.deepEqual(res.body, { limit: 10, type: 'number' });
  });
});

describe('when a route gives both spellings of one key', () => {
  it('should refuse max_body_size next to maxBodySize, naming both', () => {
    const err = registrationError((app) => app.route({ method: 'POST', path: '/u', handler: () => ({}), max_body_size: 10, maxBodySize: 20 } as never));
    assert.match(err.message, /Key "max_body_size" of Route at Route\(POST \/u\) is given twice \(as "max_body_size" and "maxBodySize"\)\. Keep one\./);
  });
});

describe('when a ServerConfig gives both spellings of one key', () => {
  it('should be a start-up ConfigError naming both', () => {
    assert.throws(() => createApp({ max_body_size: 10, maxBodySize: 20 } as never), {
      name: 'ConfigError',
      message: 'Key "max_body_size" of ServerConfig at ServerConfig is given twice (as "max_body_size" and "maxBodySize"). Keep one.',
    });
  });
});

describe('when a route or the server is given a JWT secret too short for its algorithm', () => {
  it('should throw from the route registration, naming the route, the length needed and one openssl command', () => {
    const err = registrationError((app) => app.get('/me', () => ({}), { jwt_auth: { secret: 'too-short-secret' } }));
    assert.match(err.message, /^Invalid JwtAuthConfig at Route\(GET \/me\)\.jwt_auth\.secret: expected a secret of at least 32 bytes for HS256 \(RFC 7518 §3\.2\), got 16 bytes\. Generate one with `openssl rand -base64 64`/);
    assert.doesNotMatch(err.message, /too-short-secret/, 'the secret itself never reaches a message');
  });

  it('should check the algorithm the route names (HS512 needs 64 bytes)', () => {
    const err = registrationError((app) => app.get('/me', () => ({}), { jwt_auth: { secret: 'x'.repeat(48), algorithm: 'HS512' } }));
    assert.match(err.message, /Route\(GET \/me\)\.jwt_auth\.secret: expected a secret of at least 64 bytes for HS512/);
  });

  it('should accept a disabled jwt_auth without a secret', () => {
    const app = createApp();
    app.get('/open', () => ({}), { jwt_auth: { enabled: false } as never });
  });

  it('should throw from createApp for the server-level jwt_auth, naming ServerConfig.jwt_auth', () => {
    assert.throws(() => createApp({ jwt_auth: { secret: 'short' } }), /Invalid JwtConfig at ServerConfig\.jwt_auth\.secret: expected a secret of at least 32 bytes for HS256.*openssl rand -base64 64/);
  });
});
