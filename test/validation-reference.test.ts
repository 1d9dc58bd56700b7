/**
 * Validation answers where the conformance corpus says nothing and keel answers as the reference
 * implementation does (docs/conformance.md, "Validation: the reference's rules"): how parameter text
 * is read, which issues are reported together and in what order, and how each failed JSON Schema
 * keyword is worded. Over real HTTP, through the App.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { App } from '../lib/app/app.js';
import type { ValidationIssue } from '../lib/http/validation.js';

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
app.get('/lists', (d) => ({ v: d.validatedParams?.query }), {
  parameters: { query: { ids: { type: 'array', items: { type: 'integer' }, optional: true }, nested: { type: 'array', items: { type: 'array' }, optional: true }, f: { type: 'object', optional: true } } },
  // Its tests send 12,000-character query values (JSON nested 6,000 deep), past the default max_uri_length.
  max_uri_length: 16_384,
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

  it('should read a bracketed query value as a JSON list, single quotes included', async () => {
    assert.deepEqual((await request(router).get('/lists?ids=[1,2]')).body.v.ids, [1, 2]);
    assert.deepEqual((await request(router).get("/lists?ids=['3','4']")).body.v.ids, [3, 4]);
    const errs = await issues(await request(router).get('/lists?ids=[1,"x"]'));
    assert.deepEqual(errs.map((e) => [e.type, e.loc, e.input]), [['int_parsing', ['query', 'ids'], 'x']]);
  });

  it('should read JSON nested deeper than a JSON body may be as text, not as a value', async () => {
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    assert.equal((await request(router).get(`/lists?nested=${deep(64)}`)).status, 200);
    const list = await issues(await request(router).get(`/lists?nested=${deep(6000)}`));
    assert.deepEqual(list.map((e) => [e.type, e.loc]), [['type_error', ['query', 'nested', '0']]]);
    const object = await issues(await request(router).get(`/lists?f=${'{"a":'.repeat(1000)}1${'}'.repeat(1000)}`));
    assert.deepEqual(object.map((e) => [e.type, e.loc]), [['json_invalid', ['query', 'f']]]);
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

describe('when a JSON body value has the wrong type', () => {
  const cases: [string, unknown, Issue][] = [
    ['integer', { age: true }, { type: 'int_parsing', loc: ['body', 'age'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: true }],
    ['integer (a fraction)', { age: 1.5 }, { type: 'int_parsing', loc: ['body', 'age'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 1.5 }],
    ['number', { ratio: '0.5' }, { type: 'float_parsing', loc: ['body', 'ratio'], msg: 'Input should be a valid number, unable to parse string as a number', input: '0.5' }],
    ['boolean', { flag: 'yes' }, { type: 'bool_parsing', loc: ['body', 'flag'], msg: 'Input should be a valid boolean', input: 'yes' }],
    ['string', { name: 5 }, { type: 'string_type', loc: ['body', 'name'], msg: 'Input should be a valid string', input: 5 }],
    ['object', { meta: [] }, { type: 'type_error', loc: ['body', 'meta'], msg: 'Input should be a valid object', input: [] }],
    ['array', { list: 'a' }, { type: 'type_error', loc: ['body', 'list'], msg: 'Input should be a valid array', input: 'a' }],
    ['list of types', { nick: 3 }, { type: 'type_error', loc: ['body', 'nick'], msg: 'Input should be a valid string', input: 3 }],
  ];
  for (const [what, body, expected] of cases) {
    it(`should report a value that is not ${what} by the declared type`, async () => {
      assert.deepEqual(await issues(await request(router).post('/shapes').send(body as object)), [expected]);
    });
  }

  it('should locate an array item by its index as a string and name the item type', async () => {
    const errs = await issues(await request(router).post('/shapes').send({ tags: ['ab', 'cd', 7] }));
    assert.deepEqual(errs.filter((e) => e.loc.length === 3), [{ type: 'type_error', loc: ['body', 'tags', '2'], msg: 'Input should be a valid string', input: 7 }]);
  });

  it('should report the whole body of the wrong type at ["body"]', async () => {
    const errs = await issues(await request(router).post('/shapes').send([1]));
    assert.deepEqual(errs, [{ type: 'type_error', loc: ['body'], msg: 'Input should be a valid object', input: [1] }]);
  });
});

describe('when a JSON body value breaks a constraint', () => {
  it('should word lengths and list sizes as the reference does', async () => {
    const short = await issues(await request(router).post('/shapes').send({ name: '' }));
    assert.deepEqual(short, [{ type: 'string_too_short', loc: ['body', 'name'], msg: 'String should have at least 1 characters', input: '', ctx: { min_length: 1 } }]);
    const long = await issues(await request(router).post('/shapes').send({ name: 'ab' }));
    assert.deepEqual(long, [{ type: 'string_too_long', loc: ['body', 'name'], msg: 'String should have at most 1 characters', input: 'ab', ctx: { max_length: 1 } }]);
    const few = await issues(await request(router).post('/shapes').send({ tags: [] }));
    assert.deepEqual(few, [{ type: 'too_short', loc: ['body', 'tags'], msg: 'List should have at least 2 item after validation', input: [], ctx: { min_length: 2 } }]);
    const many = await issues(await request(router).post('/shapes').send({ tags: ['ab', 'cd'] }));
    assert.deepEqual(many, [{ type: 'too_long', loc: ['body', 'tags'], msg: 'List should have at most 1 items after validation', input: ['ab', 'cd'], ctx: { max_length: 1 } }]);
  });

  it('should name no limit where the reference finds none: array items, fractional bounds', async () => {
    const items = await issues(await request(router).post('/shapes').send({ tags: ['a', 'B1'] }));
    assert.deepEqual(items.filter((e) => e.loc.length === 3), [
      { type: 'string_too_short', loc: ['body', 'tags', '0'], msg: 'String is too short', input: 'a' },
      { type: 'string_pattern_mismatch', loc: ['body', 'tags', '1'], msg: 'String does not match expected pattern', input: 'B1' },
    ]);
    const price = await issues(await request(router).post('/shapes').send({ price: 0.25 }));
    assert.deepEqual(price, [{ type: 'greater_than_equal', loc: ['body', 'price'], msg: 'Input should be greater than or equal to the minimum', input: 0.25 }]);
  });

  it('should name an enum of numbers by no value', async () => {
    const errs = await issues(await request(router).post('/shapes').send({ size: 4 }));
    assert.deepEqual(errs, [{ type: 'enum', loc: ['body', 'size'], msg: 'Input should be one of the allowed values', input: 4, ctx: { expected: 'allowed values' } }]);
  });

  it('should word multipleOf and uniqueItems as the JSON Schema validator does', async () => {
    const step = await issues(await request(router).post('/shapes').send({ step: 7 }));
    assert.deepEqual(step, [{ type: 'validation_error', loc: ['body', 'step'], msg: '7 is not a multiple of 5', input: 7 }]);
    const dup = await issues(await request(router).post('/shapes').send({ tags: ['ab', 'ab'] }));
    assert.deepEqual(dup.find((e) => e.type === 'validation_error'), { type: 'validation_error', loc: ['body', 'tags'], msg: '["ab","ab"] has non-unique elements', input: ['ab', 'ab'] });
  });

  it('should type a failed format as the reference does, naming the format in the message', async () => {
    const ip = await issues(await request(router).post('/shapes').send({ ip: '999.1.1.1' }));
    assert.deepEqual(ip, [{ type: 'format_error', loc: ['body', 'ip'], msg: 'Input is not a valid IPv4 address', input: '999.1.1.1' }]);
    const at = await issues(await request(router).post('/shapes').send({ at: 'yesterday' }));
    assert.deepEqual(at, [{ type: 'datetime_parsing', loc: ['body', 'at'], msg: 'Input should be a valid datetime', input: 'yesterday' }]);
  });

  it('should report properties an object may not have as one item naming the first by name', async () => {
    const errs = await issues(await request(router).post('/strict').send({ name: 'a', zeta: 1, beta: 2 }));
    assert.deepEqual(errs, [{
      type: 'validation_error',
      loc: ['body', 'beta'],
      msg: 'Additional properties are not allowed',
      input: { name: 'a', zeta: 1, beta: 2 },
      ctx: { additional_properties: false, unexpected_field: 'beta' },
    }]);
  });
});

describe('when form fields are read', () => {
  it('should report number text for an integer field as that number', async () => {
    const errs = await issues(await request(router).post('/form').type('form').send('age=42.5'));
    assert.deepEqual(errs, [{ type: 'int_parsing', loc: ['body', 'age'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 42.5 }]);
    const res = await request(router).post('/form').type('form').send('age=1e3');
    assert.deepEqual(res.body.got, { age: 1000 });
  });

  it('should refuse integer text past 64 bits, however long, without reading it as a big number', async () => {
    const digits = '9'.repeat(400_000);
    const started = process.hrtime.bigint();
    const errs = await issues(await request(router).post('/form').type('form').send(`age=${digits}`));
    assert.deepEqual(errs.map((e) => [e.type, e.loc, e.input === digits]), [['int_parsing', ['body', 'age'], true]]);
    assert.ok(process.hrtime.bigint() - started < 5_000_000_000n, 'a long integer text took seconds');
  });

  it('should not read a blank field as a boolean', async () => {
    const errs = await issues(await request(router).post('/form').type('form').send('subscribe='));
    assert.deepEqual(errs, [{ type: 'bool_parsing', loc: ['body', 'subscribe'], msg: 'Input should be a valid boolean', input: '' }]);
  });

  it('should not read number text with blanks', async () => {
    const errs = await issues(await request(router).post('/form').type('form').send('ratio=%203'));
    assert.deepEqual(errs.map((e) => [e.type, e.input]), [['float_parsing', ' 3']]);
  });
});
