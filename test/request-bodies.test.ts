/**
 * Request bodies and parameters as the corpus shapes them: form fields converted to the body
 * schema's types (qs bracket notation), uploads validated as `{type: 'string', format: 'binary'}`,
 * `parameters.files` checks, `parameters.body` form descriptions, draft 2020-12 schemas, the JSON
 * nesting limit, parameters required by default, and JSON Schema keywords without a Pydantic name.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { App } from '../lib/app/app.js';
import { MAX_JSON_DEPTH } from '../lib/http/content.js';
import { EMAIL_PATTERN } from '../lib/http/validation.js';
import type { ValidationIssue } from '../lib/http/validation.js';

type Issue = ValidationIssue;

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const JPEG = Buffer.from('ffd8ffe000104a464946', 'hex');

const app = new App({ port: 0, max_body_size: 65536 });
const echo = (d: { body: unknown }) => ({ got: d.body ?? null });
app.post('/form', echo, {
  body: {
    type: 'object',
    required: ['age'],
    properties: {
      age: { type: 'integer', minimum: 1 },
      ratio: { type: 'number' },
      subscribe: { type: 'boolean' },
      tags: { type: 'array', items: { type: 'string' } },
      user: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } } },
      nick: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
    },
  },
});
app.post('/json', echo, { body: { type: 'object', properties: { age: { type: 'integer' } } } });
app.post('/upload', (d) => ({ fields: d.body, files: Object.keys(d.files) }), {
  body: { type: 'object', required: ['doc'], properties: { doc: { type: 'string', format: 'binary', maxLength: 8 }, note: { type: 'string' } } },
});
app.post('/images', () => ({ ok: true }), {
  parameters: { files: { image: { content_type: ['image/png', 'image/jpeg'], validate_magic_numbers: true } } },
});
app.post('/described', (d) => ({ files: Object.keys(d.files), body: d.body }), {
  parameters: { body: { type: 'multipart/form-data', properties: { file: { type: 'file' }, attachments: { type: 'file[]' }, note: { type: 'string' } }, required: ['file'] } },
});
app.put('/draft2020', echo, {
  body: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { tags: { type: 'array', prefixItems: [{ type: 'string' }], items: false } } },
});
app.get('/params', (d) => ({ q: d.query }), {
  parameters: { query: { needed: { type: 'string' }, opt: { type: 'string', optional: true }, off: { type: 'string', required: false }, dflt: { type: 'string', default: 'x' }, flag: { type: 'boolean', optional: true } } },
});
app.post('/keywords', echo, {
  body: {
    type: 'object',
    minProperties: 1,
    maxProperties: 3,
    properties: { version: { const: '1.0' }, role: { not: { enum: ['root'] } }, email: { type: 'string', format: 'email' } },
    dependencies: { card: ['billing'] },
  },
});
app.post('/one-of', echo, { body: { oneOf: [{ type: 'object', required: ['a'] }, { type: 'object', required: ['b'] }] } });
const router = app.intoRouter();

async function issues(res: request.Response, status = 422): Promise<Issue[]> {
  assert.equal(res.status, status, res.text);
  assert.equal(res.headers['content-type'], 'application/problem+json');
  return JSON.parse(res.text).errors as Issue[];
}

describe('when a urlencoded form is posted', () => {
  it('should convert fields to the body schema types (blank nullable ones to null), with brackets for lists and objects', async () => {
    const res = await request(router).post('/form').type('form').send('age=30&ratio=0.5&subscribe=true&tags[]=a&tags[]=b&user[name]=Jo%20Do&user[age]=7&nick=');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.got, { age: 30, ratio: 0.5, subscribe: true, tags: ['a', 'b'], user: { name: 'Jo Do', age: 7 }, nick: null });
  });

  it('should read an HTML checkbox (on / off) as a boolean, and refuse other words', async () => {
    const on = await request(router).post('/form').type('form').send('age=1&subscribe=on');
    assert.deepEqual(on.body.got, { age: 1, subscribe: true });
    const off = await request(router).post('/form').type('form').send('age=1&subscribe=OFF');
    assert.deepEqual(off.body.got, { age: 1, subscribe: false });
    const errs = await issues(await request(router).post('/form').type('form').send('age=1&subscribe=yes'));
    assert.deepEqual(errs.map((e) => [e.type, e.loc, e.input]), [['bool_parsing', ['body', 'subscribe'], 'yes']]);
  });

  it('should make a single value a one-item list where the schema wants a list', async () => {
    const res = await request(router).post('/form').type('form').send('age=1&tags=only');
    assert.deepEqual(res.body.got, { age: 1, tags: ['only'] });
  });

  it('should validate the converted values and quote them as converted', async () => {
    const errs = await issues(await request(router).post('/form').type('form').send('age=0'));
    assert.deepEqual(errs, [{ type: 'greater_than_equal', loc: ['body', 'age'], msg: 'Input should be greater than or equal to 1', input: 0, ctx: { ge: 1 } }]);
  });

  it('should report a field that does not convert with the text as input', async () => {
    const errs = await issues(await request(router).post('/form').type('form').send('age=ten'));
    assert.deepEqual(errs.map((e) => [e.type, e.loc, e.input]), [['int_parsing', ['body', 'age'], 'ten']]);
  });

  it('should refuse an indexed list with a gap with a 400 problem instead of compacting it', async () => {
    const res = await request(router).post('/form').type('form').send('age=1&tags[0]=a&tags[2]=c');
    assert.equal(res.status, 400);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(JSON.parse(res.text).detail, 'Failed to parse URL-encoded form data: missing index, expected: 1 got 2');
  });

  it('should refuse more than 1000 fields with a 400 problem', async () => {
    const body = Array.from({ length: 1001 }, (_, i) => `f${i}=1`).join('&');
    const res = await request(router).post('/form').type('form').send(body);
    assert.equal(res.status, 400);
    assert.equal(res.headers['content-type'], 'application/problem+json');
  });
});

describe('when a JSON route receives another media type', () => {
  it('should answer 415 "Unsupported media type" with the accepted type in Accept (RFC 9110 §12.5.1)', async () => {
    const res = await request(router).post('/json').set('Content-Type', 'application/xml').send('<a/>');
    assert.equal(res.status, 415);
    assert.equal(res.headers.accept, 'application/json');
    assert.equal(JSON.parse(res.text).detail, 'Unsupported media type');
  });
});

describe('when a JSON body carries strings where numbers are expected', () => {
  it('should not convert them (only forms are text)', async () => {
    const errs = await issues(await request(router).post('/json').send({ age: '30' }));
    assert.deepEqual(errs.map((e) => [e.type, e.loc]), [['int_parsing', ['body', 'age']]]);
  });
});

describe('when a JSON body is nested too deeply', () => {
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

  it(`should refuse more than ${MAX_JSON_DEPTH} levels with a 400 problem naming the limit`, async () => {
    const res = await request(router).post('/json').type('json').send(`{"a":${nested(MAX_JSON_DEPTH)}}`);
    assert.equal(res.status, 400);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal(JSON.parse(res.text).limit, MAX_JSON_DEPTH);
  });

  it('should accept a body exactly at the limit', async () => {
    const res = await request(router).post('/json').type('json').send(`{"a":${nested(MAX_JSON_DEPTH - 1)}}`);
    assert.equal(res.status, 200, res.text);
  });

  it('should not count brackets inside strings', async () => {
    const res = await request(router).post('/json').type('json').send(JSON.stringify({ s: '{'.repeat(200) + '\\"[' }));
    assert.equal(res.status, 200, res.text);
  });
});

describe('when files are uploaded to a route with a body schema', () => {
  it('should validate a file as {type: string, format: binary} and keep it out of the body', async () => {
    const res = await request(router).post('/upload').field('note', 'hi').attach('doc', Buffer.from('abc'), 'a.txt');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { fields: { note: 'hi' }, files: ['doc'] });
  });

  it('should report a missing file as a missing body field', async () => {
    const errs = await issues(await request(router).post('/upload').field('note', 'hi'));
    assert.deepEqual(errs.map((e) => [e.type, e.loc]), [['missing', ['body', 'doc']]]);
  });

  it('should bound a file size in bytes with maxLength', async () => {
    const errs = await issues(await request(router).post('/upload').attach('doc', Buffer.alloc(9), 'big.bin'));
    assert.deepEqual(errs.map((e) => [e.type, e.loc, e.ctx]), [['string_too_long', ['body', 'doc'], { max_length: 8 }]]);
  });
});

describe('when a route checks files with parameters.files', () => {
  it('should accept a file whose bytes match its declared type', async () => {
    const res = await request(router).post('/images').attach('image', PNG, { filename: 'a.png', contentType: 'image/png' });
    assert.equal(res.status, 200, res.text);
  });

  it('should report a missing file (required unless optional)', async () => {
    const errs = await issues(await request(router).post('/images').field('x', '1'));
    assert.deepEqual(errs, [{ type: 'missing', loc: ['files', 'image'], msg: 'Field required', input: null }]);
  });

  it('should refuse a content type outside the allow-list', async () => {
    const errs = await issues(await request(router).post('/images').attach('image', Buffer.from('#!/bin/sh'), { filename: 'x.sh', contentType: 'application/x-sh' }));
    assert.deepEqual(errs, [{ type: 'validation_error', loc: ['files', 'image'], msg: "Invalid content type 'application/x-sh'. Allowed types: image/png, image/jpeg" }]);
  });

  it('should refuse bytes that contradict the declared type', async () => {
    const errs = await issues(await request(router).post('/images').attach('image', JPEG, { filename: 'a.png', contentType: 'image/png' }));
    assert.deepEqual(errs, [{
      type: 'validation_error',
      loc: ['files', 'image'],
      msg: 'File type mismatch: MIME type is image/png but magic numbers indicate image/jpeg',
      ctx: { declared_mime: 'image/png', detected_type: 'image/jpeg', magic_bytes: 'ffd8ffe0' },
    }]);
  });

  it('should refuse an empty file', async () => {
    const errs = await issues(await request(router).post('/images').attach('image', Buffer.alloc(0), { filename: 'e.png', contentType: 'image/png' }));
    assert.deepEqual(errs, [{ type: 'validation_error', loc: ['files', 'image'], msg: 'File buffer is empty', ctx: { buffer_size: 0 } }]);
  });
});

describe('when a route describes its form with parameters.body', () => {
  it('should accept files and fields it describes', async () => {
    const res = await request(router).post('/described').field('note', 'n').attach('file', Buffer.from('x'), 'x.txt').attach('attachments', Buffer.from('1'), '1.txt').attach('attachments', Buffer.from('2'), '2.txt');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { files: ['file', 'attachments'], body: { note: 'n' } });
  });

  it('should report a required file that is missing', async () => {
    const errs = await issues(await request(router).post('/described').field('note', 'n'));
    assert.deepEqual(errs.map((e) => [e.type, e.loc]), [['missing', ['body', 'file']]]);
  });

  it('should refuse an unknown form media type at registration', () => {
    const a = new App({ port: 0 });
    assert.throws(() => a.post('/x', () => ({}), { parameters: { body: { type: 'text/csv', properties: {} } } }), /multipart\/form-data/);
  });

  it('should refuse an unknown key in parameters.files at registration', () => {
    const a = new App({ port: 0 });
    assert.throws(() => a.post('/x', () => ({}), { parameters: { files: { f: { max_size: 3 } } } }), /unknown key "max_size"/);
  });
});

describe('when a body schema declares draft 2020-12', () => {
  it('should compile it with the 2020-12 vocabulary (prefixItems)', async () => {
    assert.equal((await request(router).put('/draft2020').send({ tags: ['a'] })).status, 200);
    const errs = await issues(await request(router).put('/draft2020').send({ tags: ['a', 'b'] }));
    assert.deepEqual(errs.map((e) => e.loc), [['body', 'tags']]);
  });
});

describe('when parameters do not say whether they are required', () => {
  it('should require them (FastAPI semantics) and leave optional, required: false and defaulted ones out', async () => {
    const errs = await issues(await request(router).get('/params'));
    assert.deepEqual(errs, [{ type: 'missing', loc: ['query', 'needed'], msg: 'Field required', input: null }]);
    const res = await request(router).get('/params?needed=1');
    assert.deepEqual(res.body.q, { needed: '1', dflt: 'x' });
  });
});

describe('when a boolean query parameter is blank', () => {
  it('should read it as false', async () => {
    const res = await request(router).get('/params?needed=1&flag=');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.q.flag, false);
  });
});

describe('when JSON Schema keywords without a Pydantic counterpart fail', () => {
  const cases: Array<[string, unknown, Issue]> = [
    ['const', { version: '2.0' }, { type: 'validation_error', loc: ['body', 'version'], msg: '"1.0" was expected', input: '2.0' }],
    ['not', { role: 'root' }, { type: 'validation_error', loc: ['body', 'role'], msg: '{"enum":["root"]} is not allowed for "root"', input: 'root' }],
    ['minProperties', {}, { type: 'validation_error', loc: ['body'], msg: '{} has less than 1 property', input: {} }],
    ['maxProperties', { a: 1, b: 2, c: 3, d: 4 }, { type: 'validation_error', loc: ['body'], msg: '{"a":1,"b":2,"c":3,"d":4} has more than 3 properties', input: { a: 1, b: 2, c: 3, d: 4 } }],
    ['dependencies', { card: '1' }, { type: 'validation_error', loc: ['body'], msg: '"billing" is a required property', input: { card: '1' } }],
    ['format email', { email: 'nope' }, { type: 'string_pattern_mismatch', loc: ['body', 'email'], msg: 'value is not a valid email address', input: 'nope', ctx: { pattern: EMAIL_PATTERN } }],
  ];
  for (const [keyword, body, expected] of cases) {
    it(`should word a failed ${keyword} as one item`, async () => {
      assert.deepEqual(await issues(await request(router).post('/keywords').send(body as object)), [expected]);
    });
  }

  it('should report a oneOf that matches no branch as one item, not each branch complaint', async () => {
    const errs = await issues(await request(router).post('/one-of').send({ c: 1 }));
    assert.deepEqual(errs, [{ type: 'validation_error', loc: ['body'], msg: "{\"c\":1} is not valid under any of the schemas listed in the 'oneOf' keyword", input: { c: 1 } }]);
  });

  it('should report a nullable anyOf value that fits no branch as one anyOf item, as the reference does', async () => {
    const errs = await issues(await request(router).post('/form').type('form').send('age=1&nick=abc'));
    assert.deepEqual(errs, [{ type: 'validation_error', loc: ['body', 'nick'], msg: `"abc" is not valid under any of the schemas listed in the 'anyOf' keyword`, input: 'abc' }]);
  });
});
