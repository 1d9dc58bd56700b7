/**
 * Validation answers where the conformance corpus says nothing and keel answers as the reference
 * implementation does (docs/conformance.md, "Validation: the reference's rules"): how parameter text
 * is read, which issues are reported together and in what order, and how each failed JSON Schema
 * keyword is worded. Over real HTTP, through the App.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { App } from '../lib/app.js';
import type { ValidationIssue } from '../lib/validation.js';

type Issue = ValidationIssue;

const app = new App({ port: 0 });
app.get('/read', (d) => ({ v: d.validatedParams?.query }), {
  parameters: {
    query: {
      flag: { type: 'boolean', optional: true },
      n: { type: 'integer', optional: true },
      x: { type: 'number', optional: true },
      name: { type: 'string', optional: true },
      ids: { type: 'array', items: { type: 'integer' }, optional: true },
    },
  },
});
app.get('/bounded', (d) => ({ v: d.validatedParams }), {
  parameters: {
    query: { limit: { type: 'integer', minimum: 1, required: true }, q: { type: 'string', minLength: 3, optional: true } },
    headers: { x_request_id: { type: 'string', optional: true }, 'X-Level': { type: 'integer', maximum: 5, optional: true }, 'X-Token': { type: 'string', minLength: 4, optional: true } },
    cookies: { count: { type: 'integer', maximum: 10, optional: true } },
  },
});
app.get('/needs-header', () => ({ ok: true }), { parameters: { headers: { x_request_id: { type: 'string' } } } });
app.get('/events/{day}', (d) => ({ day: d.pathParams.day }), {
  parameters: { path: { day: { type: 'string', format: 'date' } }, query: { limit: { type: 'integer', minimum: 1, optional: true } } },
});
app.post('/orders', (d) => ({ got: d.body }), {
  parameters: { query: { limit: { type: 'integer', required: true } } },
  body: { type: 'object', required: ['qty'], properties: { qty: { type: 'integer' } } },
});
app.post('/shapes', (d) => ({ got: d.body }), {
  body: {
    type: 'object',
    properties: {
      age: { type: 'integer' },
      ratio: { type: 'number' },
      flag: { type: 'boolean' },
      name: { type: 'string', minLength: 1, maxLength: 1 },
      tags: { type: 'array', items: { type: 'string', minLength: 2, pattern: '^[a-z]+$' }, minItems: 2, maxItems: 1, uniqueItems: true },
      meta: { type: 'object' },
      list: { type: 'array' },
      price: { type: 'number', minimum: 0.5 },
      size: { type: 'integer', enum: [1, 2, 3] },
      step: { type: 'integer', multipleOf: 5 },
      ip: { type: 'string', format: 'ipv4' },
      at: { type: 'string', format: 'date-time' },
      nick: { type: ['string', 'null'] },
    },
  },
});
app.post('/strict', (d) => ({ got: d.body }), {
  body: { type: 'object', properties: { name: { type: 'string' } }, additionalProperties: false },
});
app.post('/form', (d) => ({ got: d.body }), {
  body: { type: 'object', properties: { age: { type: 'integer' }, ratio: { type: 'number' }, subscribe: { type: 'boolean' } } },
});
const router = app.intoRouter();

async function issues(res: request.Response): Promise<Issue[]> {
  assert.equal(res.status, 422, res.text);
  const body = JSON.parse(res.text);
  const n = body.errors.length;
  assert.equal(body.detail, n === 1 ? '1 validation error in request' : `${n} validation errors in request`);
  return body.errors;
}

describe('when parameter text is read', () => {
  for (const [text, value] of [['true', true], ['TRUE', true], ['False', false], ['1', true], ['0', false], ['', false]] as const) {
    it(`should read the boolean ${JSON.stringify(text)} as ${value}`, async () => {
      const res = await request(router).get(`/read?flag=${text}`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.v.flag, value);
    });
  }

  for (const text of ['yes', 'on', 'off', 'no', '%20true', 't']) {
    it(`should refuse ${JSON.stringify(decodeURIComponent(text))} as a boolean, quoting it`, async () => {
      const errs = await issues(await request(router).get(`/read?flag=${text}`));
      assert.deepEqual(errs, [{ type: 'bool_parsing', loc: ['query', 'flag'], msg: 'Input should be a valid boolean, unable to interpret input', input: decodeURIComponent(text) }]);
    });
  }

  it('should read a signed integer and refuse one with blanks, a point or beyond 64 bits', async () => {
    assert.equal((await request(router).get('/read?n=%2B7')).body.v.n, 7);
    assert.equal((await request(router).get('/read?n=-9223372036854775808')).status, 200);
    for (const text of ['%207', '7%20', '9223372036854775808', '0x10']) {
      const errs = await issues(await request(router).get(`/read?n=${text}`));
      assert.deepEqual(errs.map((e) => [e.type, e.input]), [['int_parsing', decodeURIComponent(text)]]);
    }
  });

  it('should read decimal number text only (no blanks, no hexadecimal, no Infinity)', async () => {
    assert.equal((await request(router).get('/read?x=1e-3')).body.v.x, 0.001);
    assert.equal((await request(router).get('/read?x=.5')).body.v.x, 0.5);
    for (const text of ['%201', '0x10', 'Infinity', '1_000', '']) {
      const errs = await issues(await request(router).get(`/read?x=${text}`));
      assert.deepEqual(errs, [{ type: 'float_parsing', loc: ['query', 'x'], msg: 'Input should be a valid number, unable to parse string as a number', input: decodeURIComponent(text) }]);
    }
  });

  it('should take the first value of a repeated key for a single-valued parameter', async () => {
    const res = await request(router).get('/read?n=5&n=7&name=a&name=b');
    assert.deepEqual([res.body.v.n, res.body.v.name], [5, 'a']);
  });

  it('should read a header parameter named with underscores from the hyphenated header', async () => {
    const res = await request(router).get('/bounded?limit=1').set('X-Request-Id', 'abc');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.v.headers.x_request_id, 'abc');
    const errs = await issues(await request(router).get('/needs-header'));
    assert.deepEqual(errs, [{ type: 'missing', loc: ['headers', 'x-request-id'], msg: 'Field required', input: null }]);
  });

  it('should take a blank header as a value, not as missing', async () => {
    const errs = await issues(await request(router).get('/bounded?limit=1').set('X-Token', ''));
    assert.deepEqual(errs, [{ type: 'string_too_short', loc: ['headers', 'x-token'], msg: 'String should have at least 4 characters', input: '', ctx: { min_length: 4 } }]);
  });

  it('should quote header and cookie values as sent in constraint errors', async () => {
    const errs = await issues(await request(router).get('/bounded?limit=1').set('X-Level', '6').set('Cookie', 'count=11'));
    assert.deepEqual(errs, [
      { type: 'less_than_equal', loc: ['headers', 'x-level'], msg: 'Input should be less than or equal to 5', input: '6', ctx: { le: 5 } },
      { type: 'less_than_equal', loc: ['cookie', 'count'], msg: 'Input should be less than or equal to 10', input: '11', ctx: { le: 10 } },
    ]);
  });
});

describe('when several parts of a request are invalid', () => {
  it('should report the body alone while it is invalid, then the parameters', async () => {
    const bodyFirst = await issues(await request(router).post('/orders').send({ qty: 'many' }));
    assert.deepEqual(bodyFirst.map((e) => e.loc), [['body', 'qty']]);
    const thenParams = await issues(await request(router).post('/orders').send({ qty: 1 }));
    assert.deepEqual(thenParams.map((e) => e.loc), [['query', 'limit']]);
  });

  it('should report parameters that cannot be read before any constraint, by name', async () => {
    const errs = await issues(await request(router).get('/bounded?q=ab').set('Cookie', 'count=lots'));
    assert.deepEqual(errs.map((e) => [e.type, e.loc]), [['int_parsing', ['cookie', 'count']], ['missing', ['query', 'limit']]]);
    const constraints = await issues(await request(router).get('/bounded?q=ab&limit=0'));
    assert.deepEqual(constraints.map((e) => [e.type, e.loc]), [['greater_than_equal', ['query', 'limit']], ['string_too_short', ['query', 'q']]]);
  });

  it('should check a path value\'s date format while reading it, before the query constraints', async () => {
    const errs = await issues(await request(router).get('/events/2024-13-45?limit=0'));
    assert.deepEqual(errs, [{ type: 'date_parsing', loc: ['path', 'day'], msg: 'Input should be a valid date', input: '2024-13-45' }]);
  });
});
