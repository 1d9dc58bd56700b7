/**
 * Format failures name the format the schema asked for, never the regular expression a validator
 * checks it with (a client wrote `format: "email"`, not a pattern), for every format keel validates.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { App } from '../lib/app/app.js';

/** Each format with a value that breaks it and the words the message must carry. */
const CASES: [format: string, bad: unknown, words: RegExp][] = [
  ['email', 'not-an-email', /valid email address/],
  ['uuid', 'not-a-uuid', /valid UUID/],
  ['date-time', 'yesterday', /valid datetime/],
  ['date', '2024-13-45', /valid date/],
  ['time', '25:61', /valid time/],
  ['uri', 'not a uri', /valid URL/],
  ['uri-reference', 'a b\\c', /valid URL/],
  ['duration', 'five minutes', /valid duration/],
  ['ipv4', '300.1.1.1', /IPv4 address/],
  ['ipv6', 'not:an:ip:v6::x', /IPv6 address/],
  ['hostname', '-bad-.example', /valid hostname/],
  ['regex', '(unclosed', /regular expression/],
  ['byte', '***', /base64/],
  ['json-pointer', 'no-leading-slash', /JSON pointer/],
  ['int32', 2 ** 40, /32-bit integer/],
];

const app = new App({ port: 0 });
for (const [format] of CASES) {
  const type = format === 'int32' ? 'integer' : 'string';
  app.post(`/${format}`, (d) => d.body, { body: { type: 'object', required: ['v'], properties: { v: { type, format } } } });
}
const router = app.intoRouter();

describe('when a value breaks its format', () => {
  for (const [format, bad, words] of CASES) {
    it(`should name the ${format} format and quote no pattern`, async () => {
      const res = await request(router).post(`/${format}`).send({ v: bad });
      assert.equal(res.status, 422, res.text);
      const [issue] = JSON.parse(res.text).errors as { type: string; loc: unknown[]; msg: string; input: unknown }[];
      assert.deepEqual(issue!.loc, ['body', 'v']);
      assert.equal(issue!.input, bad);
      assert.match(issue!.msg, words);
      assert.doesNotMatch(issue!.msg, /pattern|\^|\$|\\/, `"${issue!.msg}" quotes an internal pattern`);
    });
  }

  /** The reference's item types: its own for email, uuid, date and date-time, `format_error` for the rest. */
  const TYPES: Record<string, string> = { email: 'string_pattern_mismatch', uuid: 'uuid_parsing', 'date-time': 'datetime_parsing', date: 'date_parsing' };
  for (const [format, bad] of CASES) {
    it(`should give the reference's type for a failed ${format}`, async () => {
      const res = await request(router).post(`/${format}`).send({ v: bad });
      const [issue] = JSON.parse(res.text).errors as { type: string }[];
      assert.equal(issue!.type, TYPES[format] ?? 'format_error');
    });
  }

  it('should keep the reference type and ctx for email so clients that branch on them are unaffected', async () => {
    const res = await request(router).post('/email').send({ v: 'x@' });
    const [issue] = JSON.parse(res.text).errors;
    assert.equal(issue.type, 'string_pattern_mismatch');
    assert.equal(typeof issue.ctx.pattern, 'string');
  });
});
