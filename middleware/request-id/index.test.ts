import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type express from 'express';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';
import request from 'supertest';
import { requestId, isValidRequestId, DEFAULT_REQUEST_ID_HEADER, MAX_REQUEST_ID_LENGTH, type RequestIdOptions } from './index.js';
import { ConfigError } from '../../lib/http/errors.js';
import { RequestIdConfig } from '../../lib/records/route.js';
import type { KeelRequest } from '../../lib/http/request.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

// Every test in this block runs under Express 4 and under Express 5 (test/helpers/express-versions.ts).
for (const { name: expressVersion, express } of EXPRESS_VERSIONS) describe(`under ${expressVersion}`, () => {
function appWith(...layers: express.RequestHandler[]) {
  const app = express();
  for (const layer of layers) app.use(layer);
  app.get('/id', (req, res) => {
    res.json({ requestId: (req as KeelRequest).requestId ?? null, has: 'requestId' in req });
  });
  return app;
}

describe('requestId: when called without options', () => {
  const app = appWith(requestId());

  it('should generate a v4 UUID, set req.requestId and the X-Request-ID response header', async () => {
    const res = await request(app).get('/id');
    assert.equal(res.status, 200);
    assert.match(res.headers['x-request-id'] ?? '', UUID);
    assert.equal(res.body.requestId, res.headers['x-request-id']);
  });

  it('should generate a different id per request', async () => {
    const a = await request(app).get('/id');
    const b = await request(app).get('/id');
    assert.notEqual(a.headers['x-request-id'], b.headers['x-request-id']);
  });

  it('should echo a valid incoming id', async () => {
    const res = await request(app).get('/id').set('X-Request-ID', 'trace-123');
    assert.equal(res.headers['x-request-id'], 'trace-123');
    assert.equal(res.body.requestId, 'trace-123');
  });

  it('should echo an id of exactly the maximum length', async () => {
    const id = 'a'.repeat(MAX_REQUEST_ID_LENGTH);
    const res = await request(app).get('/id').set('X-Request-ID', id);
    assert.equal(res.headers['x-request-id'], id);
  });

  const invalid: Array<[string, string]> = [
    ['one character too long', 'a'.repeat(MAX_REQUEST_ID_LENGTH + 1)],
    ['a space (log field splitting)', 'abc def'],
    ['a quote', 'abc"def'],
    ['a comma (two header lines joined)', 'abc,def'],
    ['a slash', 'abc/def'],
    ['non-ASCII', 'abcé'],
    ['a tab', 'abc\tdef'],
  ];
  for (const [what, id] of invalid) {
    it(`should replace an incoming id with ${what} by a fresh UUID`, async () => {
      const res = await request(app).get('/id').set('X-Request-ID', id);
      assert.match(res.headers['x-request-id'] ?? '', UUID);
      assert.equal(res.body.requestId, res.headers['x-request-id']);
    });
  }

  it('should replace an empty incoming id by a fresh UUID', async () => {
    const res = await request(app).get('/id').set('X-Request-ID', '');
    assert.match(res.headers['x-request-id'] ?? '', UUID);
  });

  it('should replace two X-Request-ID header lines by a fresh UUID', async () => {
    // Node joins repeated custom headers with ", ", which is not a valid id.
    const res = await request(app).get('/id').set('X-Request-ID', ['one', 'two'] as unknown as string);
    assert.match(res.headers['x-request-id'] ?? '', UUID);
  });

  it('should set the id on an error response too', async () => {
    const res = await request(app).get('/missing').set('X-Request-ID', 'trace-404');
    assert.equal(res.status, 404);
    assert.equal(res.headers['x-request-id'], 'trace-404');
  });
});

describe('requestId: when given the RequestIdConfig record', () => {
  it('should accept a parsed RequestIdConfig as it is', async () => {
    const res = await request(appWith(requestId(RequestIdConfig.parse({ enabled: true })))).get('/id');
    assert.match(res.headers['x-request-id'] ?? '', UUID);
  });

  it('should neither generate nor propagate with {enabled: false}', async () => {
    const res = await request(appWith(requestId({ enabled: false }))).get('/id').set('X-Request-ID', 'external-id');
    assert.equal(res.headers['x-request-id'], undefined);
    assert.deepEqual(res.body, { requestId: null, has: false });
  });
});

describe('requestId: when a route-level instance follows a server-level one', () => {
  it('should remove the id again when the later one is disabled', async () => {
    const res = await request(appWith(requestId(), requestId({ enabled: false }))).get('/id').set('X-Request-ID', 'external-id');
    assert.equal(res.headers['x-request-id'], undefined);
    assert.deepEqual(res.body, { requestId: null, has: false });
  });

  it('should remove a custom header the earlier one set', async () => {
    const res = await request(appWith(requestId({ header_name: 'X-Correlation-ID' }), requestId({ enabled: false }))).get('/id');
    assert.equal(res.headers['x-correlation-id'], undefined);
    assert.equal(res.body.requestId, null);
  });

  it('should keep the id the first one chose when both are enabled', async () => {
    const res = await request(appWith(requestId(), requestId({ enabled: true }))).get('/id');
    assert.match(res.headers['x-request-id'] ?? '', UUID);
    assert.equal(res.body.requestId, res.headers['x-request-id']);
  });

  it('should move the id to the later header name when they differ', async () => {
    const res = await request(appWith(requestId(), requestId({ headerName: 'X-Trace-Id' }))).get('/id').set('X-Request-ID', 'abc');
    assert.equal(res.headers['x-request-id'], undefined);
    assert.equal(res.headers['x-trace-id'], 'abc');
  });
});

describe('requestId: when header_name is set', () => {
  for (const options of [{ header_name: 'X-Correlation-ID' }, { headerName: 'X-Correlation-ID' }] as RequestIdOptions[]) {
    it(`should read and write that header (${Object.keys(options)[0]})`, async () => {
      const app = appWith(requestId(options));
      const res = await request(app).get('/id').set('X-Correlation-ID', 'corr-1').set('X-Request-ID', 'other');
      assert.equal(res.headers['x-correlation-id'], 'corr-1');
      assert.equal(res.headers['x-request-id'], undefined);
      assert.equal(res.body.requestId, 'corr-1');
    });
  }
});

describe('requestId: when the options are invalid', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['an unknown key, with a suggestion', { enabeld: true }, /Unknown key "enabeld".*Did you mean "enabled"/],
    ['an unknown key close to header_name', { header_nam: 'X-A' }, /Did you mean "header_name"/],
    ['enabled as a string', { enabled: 'yes' }, /RequestIdOptions\.enabled: expected true or false, got "yes"/],
    ['enabled as a number', { enabled: 1 }, /expected true or false, got 1/],
    ['a bare boolean', true, /expected an object/],
    ['header_name empty', { header_name: '' }, /header_name: expected an HTTP header name/],
    ['header_name with a space', { header_name: 'X Request' }, /expected an HTTP header name/],
    ['header_name with a colon', { header_name: 'X-Id:' }, /expected an HTTP header name/],
    ['header_name as a number', { header_name: 42 }, /expected an HTTP header name/],
    ['header_name Content-Type', { header_name: 'Content-Type' }, /a header name of its own/],
    ['header_name Set-Cookie', { header_name: 'set-cookie' }, /a header name of its own/],
    ['both spellings of one key', { header_name: 'X-A', headerName: 'X-B' }, /given twice/],
  ];
  for (const [what, input, message] of cases) {
    it(`should throw a ConfigError for ${what}`, () => {
      assert.throws(() => requestId(input as RequestIdOptions), (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, message);
        return true;
      });
    });
  }
});

describe('isValidRequestId', () => {
  it('should accept UUIDs, ULIDs, W3C trace ids and dotted ids', () => {
    for (const id of ['0b4f1a8e-2a43-4c1e-9d4f-1f2a3b4c5d6e', '01ARZ3NDEKTSV4RRFFQ69G5FAV', '4bf92f3577b34da6a3ce929d0e0e4736', 'svc.a:1_b-2']) {
      assert.equal(isValidRequestId(id), true, id);
    }
  });

  it('should reject non-strings, empty, overlong and unsafe ids', () => {
    for (const id of [undefined, null, 42, ['a'], '', 'a'.repeat(129), 'a b', 'a\nb', 'a\r\nSet-Cookie: x', '<script>']) {
      assert.equal(isValidRequestId(id), false, String(id));
    }
  });

  it('should name the default header X-Request-ID', () => {
    assert.equal(DEFAULT_REQUEST_ID_HEADER, 'X-Request-ID');
  });
});
});
