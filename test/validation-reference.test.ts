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
});
