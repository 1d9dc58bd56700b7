/**
 * Request validation as clients see it: one 422 problem listing every issue as
 * `{type, loc, msg, input, ctx?}`, and the 400 / 413 / 415 body failures.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import request from 'supertest';
import { App } from '../lib/app/app.js';
import type { ValidationIssue } from '../lib/http/validation.js';

type Issue = ValidationIssue;

const app = new App({ port: 0, max_body_size: 256 });
app.get('/items', (d) => ({ query: d.query, validated: d.validatedParams }), {
  parameters: {
    query: {
      limit: { type: 'integer', minimum: 1, maximum: 100, required: true },
      active: { type: 'boolean', optional: true },
      ratio: { type: 'number', optional: true },
      sort: { type: 'string', enum: ['asc', 'desc'], default: 'asc' },
      ids: { type: 'array', items: { type: 'integer' }, optional: true },
    },
  },
});
app.get('/users/{id:int}', (d) => ({ id: d.pathParams.id }));
app.get('/orders/{orderId:uuid}', (d) => ({ id: d.pathParams.orderId }));
app.get('/headers', (d) => ({ v: d.validatedParams?.headers }), {
  parameters: { headers: { 'X-Version': { type: 'integer', required: true }, 'X-Token': { type: 'string', minLength: 8, required: true } } },
});
app.get('/cookies', (d) => ({ v: d.validatedParams?.cookies }), {
  parameters: { cookies: { session: { type: 'string', minLength: 4, required: true }, count: { type: 'integer', optional: true } } },
});
const userBody = {
  type: 'object',
  required: ['user'],
  properties: {
    user: {
      type: 'object',
      required: ['email', 'name'],
      properties: { email: { type: 'string', format: 'email' }, name: { type: 'string', minLength: 2 }, age: { type: 'integer', minimum: 0 } },
    },
  },
};
app.post('/users', (d) => ({ got: d.body }), { body: userBody });
app.post('/optional-body', (d) => ({ got: d.body ?? null }), { body: { type: 'object' }, body_required: false });
app.post('/any', (d) => ({ got: d.body ?? null }));
app.post('/big', (d) => ({ size: d.rawBody?.length ?? 0 }), { max_body_size: 1024 });
app.post('/unlimited', (d) => ({ size: d.rawBody?.length ?? 0 }), { maxBodySize: null } as unknown as { max_body_size: null }); // camelCase key, as users may write it
const router = app.intoRouter();

async function issues(res: request.Response, status = 422): Promise<Issue[]> {
  assert.equal(res.status, status, res.text);
  assert.equal(res.headers['content-type'], 'application/problem+json');
  const body = JSON.parse(res.text);
  assert.equal(body.status, 422);
  assert.equal(body.title, 'Request Validation Failed');
  assert.ok(Array.isArray(body.errors));
  const n = body.errors.length;
  assert.equal(body.detail, n === 1 ? '1 validation error in request' : `${n} validation errors in request`);
  for (const e of body.errors as Issue[]) {
    assert.equal(typeof e.type, 'string');
    assert.ok(Array.isArray(e.loc) && e.loc.length >= 1);
    assert.equal(typeof e.msg, 'string');
    for (const key of Object.keys(e)) assert.ok(['type', 'loc', 'msg', 'input', 'ctx'].includes(key), `unexpected member ${key}`);
  }
  return body.errors;
}

describe('when query parameters are invalid', () => {
  it('should report a missing required parameter', async () => {
    const errs = await issues(await request(router).get('/items'));
    assert.deepEqual(errs, [{ type: 'missing', loc: ['query', 'limit'], msg: 'Field required', input: null }]);
  });

  it('should report a value that cannot be coerced to an integer', async () => {
    const errs = await issues(await request(router).get('/items?limit=ten'));
    assert.deepEqual(errs, [{ type: 'int_parsing', loc: ['query', 'limit'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'ten' }]);
  });

  it('should report an out-of-range value with ctx, quoting the value as sent', async () => {
    const errs = await issues(await request(router).get('/items?limit=0'));
    assert.deepEqual(errs, [{ type: 'greater_than_equal', loc: ['query', 'limit'], msg: 'Input should be greater than or equal to 1', input: '0', ctx: { ge: 1 } }]);
  });

  it('should report a decimal where an integer is expected with the number as input', async () => {
    const errs = await issues(await request(router).get('/items?limit=42.5'));
    assert.deepEqual(errs, [{ type: 'int_parsing', loc: ['query', 'limit'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 42.5 }]);
  });

  it('should report a value outside an enum', async () => {
    const errs = await issues(await request(router).get('/items?limit=1&sort=up'));
    assert.equal(errs[0]?.type, 'enum');
    assert.deepEqual(errs[0]?.loc, ['query', 'sort']);
    assert.equal(errs[0]?.input, 'up');
    assert.deepEqual(errs[0]?.ctx, { expected: "'asc' or 'desc'" });
  });

  it('should report bool and float coercion failures', async () => {
    const errs = await issues(await request(router).get('/items?limit=1&active=maybe&ratio=abc'));
    assert.deepEqual(errs.map((e) => [e.type, e.loc]), [['bool_parsing', ['query', 'active']], ['float_parsing', ['query', 'ratio']]]);
  });

  it('should report each array item that does not convert at the parameter itself, quoting the item', async () => {
    const errs = await issues(await request(router).get('/items?limit=1&ids=1&ids=x&ids=3&ids=y'));
    assert.deepEqual(errs.map((e) => [e.type, e.loc, e.input]), [['int_parsing', ['query', 'ids'], 'x'], ['int_parsing', ['query', 'ids'], 'y']]);
  });

  it('should report every parameter that cannot be read, by name, with a plural detail', async () => {
    // limit is missing and active does not convert; the enum failure of sort waits until every
    // parameter reads (it is reported once the others are fixed).
    const res = await request(router).get('/items?active=maybe&sort=up');
    const errs = await issues(res);
    assert.deepEqual(errs.map((e) => [e.type, e.loc]), [['bool_parsing', ['query', 'active']], ['missing', ['query', 'limit']]]);
    assert.equal(JSON.parse(res.text).detail, '2 validation errors in request');
  });

  it('should coerce valid values and apply defaults', async () => {
    const res = await request(router).get('/items?limit=10&active=true&ratio=0.5&ids=1&ids=2');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.query, { limit: 10, active: true, ratio: 0.5, ids: [1, 2], sort: 'asc' });
    assert.deepEqual(res.body.validated.query, { limit: 10, active: true, ratio: 0.5, ids: [1, 2], sort: 'asc' });
  });
});

describe('when typed path placeholders do not match', () => {
  it('should answer {id:int} with a non-integer by a 422 naming the path parameter', async () => {
    const errs = await issues(await request(router).get('/users/abc'));
    assert.deepEqual(errs, [{ type: 'int_parsing', loc: ['path', 'id'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'abc' }]);
  });

  it('should coerce {id:int} for the handler', async () => {
    const res = await request(router).get('/users/42');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { id: 42 });
  });

  it('should answer {orderId:uuid} with a non-UUID by a uuid_parsing issue', async () => {
    const errs = await issues(await request(router).get('/orders/not-a-uuid'));
    assert.deepEqual(errs.map((e) => [e.type, e.loc, e.input]), [['uuid_parsing', ['path', 'orderId'], 'not-a-uuid']]);
  });
});

describe('when headers and cookies are invalid', () => {
  it('should report missing and invalid headers under loc "headers", names in lower case', async () => {
    const errs = await issues(await request(router).get('/headers').set('X-Version', 'two'));
    assert.deepEqual(errs.map((e) => [e.type, e.loc]), [['missing', ['headers', 'x-token']], ['int_parsing', ['headers', 'x-version']]]);
  });

  it('should accept valid headers case-insensitively and coerce them', async () => {
    const res = await request(router).get('/headers').set('x-version', '2').set('X-TOKEN', 'abcdefgh');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.v, { 'X-Version': 2, 'X-Token': 'abcdefgh' });
  });

  it('should report a too-short header with ctx', async () => {
    const errs = await issues(await request(router).get('/headers').set('X-Version', '1').set('X-Token', 'abc'));
    assert.deepEqual(errs, [{ type: 'string_too_short', loc: ['headers', 'x-token'], msg: 'String should have at least 8 characters', input: 'abc', ctx: { min_length: 8 } }]);
  });

  it('should report cookie issues under loc "cookie"', async () => {
    const unreadable = await issues(await request(router).get('/cookies').set('Cookie', 'session=ab; count=many'));
    assert.deepEqual(unreadable.map((e) => [e.type, e.loc]), [['int_parsing', ['cookie', 'count']]]);
    const short = await issues(await request(router).get('/cookies').set('Cookie', 'session=ab; count=2'));
    assert.deepEqual(short, [{ type: 'string_too_short', loc: ['cookie', 'session'], msg: 'String should have at least 4 characters', input: 'ab', ctx: { min_length: 4 } }]);
  });

  it('should report a missing cookie', async () => {
    const errs = await issues(await request(router).get('/cookies'));
    assert.deepEqual(errs, [{ type: 'missing', loc: ['cookie', 'session'], msg: 'Field required', input: null }]);
  });

  it('should accept valid cookies', async () => {
    const res = await request(router).get('/cookies').set('Cookie', 'session=abcd; count=3');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.v, { session: 'abcd', count: 3 });
  });
});

describe('when a JSON body is invalid', () => {
  it('should give nested locations such as ["body","user","email"]', async () => {
    const errs = await issues(await request(router).post('/users').send({ user: { email: 'not-an-email', name: 'Al' } }));
    const pattern = '^[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\\.[a-zA-Z0-9-.]+$';
    assert.deepEqual(errs, [{ type: 'string_pattern_mismatch', loc: ['body', 'user', 'email'], msg: 'value is not a valid email address', input: 'not-an-email', ctx: { pattern } }]);
  });

  it('should report missing nested fields with the parent as input', async () => {
    const errs = await issues(await request(router).post('/users').send({ user: { name: 'Al' } }));
    assert.deepEqual(errs, [{ type: 'missing', loc: ['body', 'user', 'email'], msg: 'Field required', input: { name: 'Al' } }]);
  });

  it('should report every body issue, ordered by location', async () => {
    const errs = await issues(await request(router).post('/users').send({ user: { email: 'a@b.example', name: 'A', age: 'old' } }));
    assert.deepEqual(errs.map((e) => [e.type, e.loc]), [['int_parsing', ['body', 'user', 'age']], ['string_too_short', ['body', 'user', 'name']]]);
  });

  it('should report a wrong JSON type', async () => {
    const errs = await issues(await request(router).post('/users').send({ user: 'alice' }));
    assert.deepEqual(errs, [{ type: 'type_error', loc: ['body', 'user'], msg: 'Input should be a valid object', input: 'alice' }]);
  });

  it('should report a missing required body', async () => {
    const errs = await issues(await request(router).post('/users'));
    assert.deepEqual(errs, [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]);
  });

  it('should accept a missing body when body_required is false', async () => {
    const res = await request(router).post('/optional-body');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { got: null });
  });

  it('should pass a valid body to the handler', async () => {
    const user = { email: 'a@b.example', name: 'Al', age: 3 };
    const res = await request(router).post('/users').send({ user });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { got: { user } });
  });
});

describe('when the body schema has defaults', () => {
  const notes = new App();
  notes.post('/notes', (d) => d.body, { body: { type: 'object', required: ['title'], properties: { title: { type: 'string', minLength: 1 }, text: { type: 'string', default: '' }, tags: { type: 'array', items: { type: 'string' }, default: [] } } } });
  const notesRouter = notes.intoRouter();

  it("should show in an error's input only what the client sent, not the defaults", async () => {
    const errs = await issues(await request(notesRouter).post('/notes').send({ tags: ['a'] }));
    assert.deepEqual(errs, [{ type: 'missing', loc: ['body', 'title'], msg: 'Field required', input: { tags: ['a'] } }]);
  });

  it('should still give the handler the defaults on a valid body', async () => {
    const res = await request(notesRouter).post('/notes').send({ title: 'x' });
    assert.deepEqual(res.body, { title: 'x', text: '', tags: [] });
  });
});

describe('when the body cannot be read as JSON', () => {
  const malformed = ['{"user":', '{user: 1}', "{'a': 1}", '[1, 2,]', 'nul'];
  for (const text of malformed) {
    it(`should answer malformed JSON ${JSON.stringify(text)} with a 400 problem`, async () => {
      const res = await request(router).post('/users').set('Content-Type', 'application/json').send(text);
      assert.equal(res.status, 400);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      const body = JSON.parse(res.text);
      assert.equal(body.status, 400);
      assert.equal(body.type, 'https://keel.dev/errors/malformed-json');
    });
  }

  it('should answer malformed JSON on a route without a body schema with a 400 too', async () => {
    const res = await request(router).post('/any').set('Content-Type', 'application/json').send('{"a":');
    assert.equal(res.status, 400);
  });

  const unsupported = ['text/plain', 'application/xml', 'application/octet-stream'];
  for (const type of unsupported) {
    it(`should answer a ${type} body on a JSON route with a 415 problem`, async () => {
      const res = await request(router).post('/users').set('Content-Type', type).send('user=alice');
      assert.equal(res.status, 415);
      assert.equal(res.headers['content-type'], 'application/problem+json');
      assert.equal(JSON.parse(res.text).type, 'https://keel.dev/errors/unsupported-media-type');
    });
  }

  it('should validate a urlencoded form against the body schema', async () => {
    const errs = await issues(await request(router).post('/users').type('form').send('user=alice'));
    assert.deepEqual(errs.map((e) => [e.type, e.loc, e.input]), [['type_error', ['body', 'user'], 'alice']]);
  });

  it('should answer JSON in a charset other than UTF-8 with a 415 problem', async () => {
    const res = await request(router).post('/users').set('Content-Type', 'application/json; charset=latin1').send('{}');
    assert.equal(res.status, 415);
  });

  it('should accept a +json media type (RFC 6839)', async () => {
    const res = await request(router).post('/users').set('Content-Type', 'application/vnd.api+json').send(JSON.stringify({ user: { email: 'a@b.example', name: 'Al' } }));
    assert.equal(res.status, 200);
  });
});

describe('when the body is larger than max_body_size', () => {
  it('should answer a declared oversized body with a 413 problem', async () => {
    const res = await request(router).post('/users').send({ user: { email: 'a@b.example', name: 'x'.repeat(400) } });
    assert.equal(res.status, 413);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    const body = JSON.parse(res.text);
    assert.equal(body.type, 'https://keel.dev/errors/payload-too-large');
    assert.equal(body.limit, 256);
  });

  it('should answer a chunked oversized body with a 413 problem', async () => {
    const server = http.createServer((req, res) => router(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as { port: number };
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/any', headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.write('['.padEnd(200, ' '));
        req.write(' '.repeat(200));
        req.end(']');
      });
      assert.equal(status, 413);
    } finally {
      server.close();
    }
  });

  it('should accept a body at the limit', async () => {
    const text = JSON.stringify({ pad: 'x'.repeat(256 - 10) });
    assert.equal(Buffer.byteLength(text), 256);
    const res = await request(router).post('/any').set('Content-Type', 'application/json').send(text);
    assert.equal(res.status, 200);
  });
});

describe('when a route sets its own max_body_size', () => {
  it('should let a larger route cap override the server cap', async () => {
    const res = await request(router).post('/big').set('Content-Type', 'application/octet-stream').send(Buffer.alloc(1000));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { size: 1000 });
  });

  it('should still refuse bodies above the route cap', async () => {
    const res = await request(router).post('/big').set('Content-Type', 'application/octet-stream').send(Buffer.alloc(1025));
    assert.equal(res.status, 413);
    assert.equal(JSON.parse(res.text).limit, 1024);
  });

  it('should lift the cap for a route with max_body_size: null', async () => {
    const res = await request(router).post('/unlimited').set('Content-Type', 'application/octet-stream').send(Buffer.alloc(5000));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { size: 5000 });
  });

  it('should keep the server cap for routes that do not set one', async () => {
    const res = await request(router).post('/any').set('Content-Type', 'application/octet-stream').send(Buffer.alloc(257));
    assert.equal(res.status, 413);
  });
});
