/**
 * The per-request parsers read inputs exactly as the reference parsers do: query strings as
 * URLSearchParams, flat urlencoded forms as qs (which still reads every bracketed form), JSON depth
 * on the raw bytes. The references are the oracles here; then the same rules end to end.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import qs from 'qs';
import request from 'supertest';
import { App } from '../lib/app/app.js';
import {
  FORM_ARRAY_LIMIT, FORM_DEPTH_LIMIT, FORM_PARAMETER_LIMIT, JSON_SCAN_FIRST_BYTES, MAX_JSON_DEPTH, jsonDepthExceeds, parseBody, parseUrlEncoded, valueDepthExceeds,
} from '../lib/http/content.js';
import { HttpError } from '../lib/http/errors.js';
import { parseQuery } from '../lib/http/query.js';

function viaUrlSearchParams(search: string): Record<string, unknown> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(search)) {
    if (k === '__proto__') continue;
    const prev = Object.hasOwn(out, k) ? out[k] : undefined;
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

const QUERIES = [
  'q=anchor&limit=25',
  'a=1&a=2&a=3&b=',
  'a+b=c+d&e=%2B%20f',
  'flag&&x=&=empty-name&y=1=2',
  '?a=1',
  '??a=1',
  'bad=%zz&ok=1',
  'half=%E2%82',
  'latin=%E9',
  'surrogate=%ED%A0%80',
  'overlong=%C0%AF',
  'caf\u00e9=cr%C3%A8me',
  'lone=\ud800',
  'bom=%EF%BB%BFx',
  'emoji=%F0%9F%98%80&cut=%F0%9F%98&hex=%4g&low=%e2%82%ac',
  'sp%61ce=%7e',
  '&&&',
  '==',
];

describe('when a query string is parsed', () => {
  for (const search of QUERIES) {
    it(`should read ${JSON.stringify(search)} as URLSearchParams does`, () => {
      assert.deepEqual(parseQuery(search), viaUrlSearchParams(search));
    });
  }

  it('should give an empty object for an empty query', () => {
    assert.deepEqual(parseQuery(''), {});
  });

  it('should keep Object.prototype names as plain fields and ignore __proto__', () => {
    const q = parseQuery('constructor=a&toString=b&toString=c&__proto__=x&hasOwnProperty=1');
    assert.deepEqual(q, { constructor: 'a', toString: ['b', 'c'], hasOwnProperty: '1' });
    assert.equal(Object.getPrototypeOf(q), Object.prototype);
  });
});

const QS_OPTIONS = { depth: FORM_DEPTH_LIMIT, arrayLimit: FORM_ARRAY_LIMIT, parameterLimit: FORM_PARAMETER_LIMIT, throwOnLimitExceeded: true };

/** qs's answer, or the message of the error it throws. */
function viaQs(text: string): unknown {
  try {
    return qs.parse(text, QS_OPTIONS);
  } catch (err) {
    return `Invalid form body: ${(err as Error).message}`;
  }
}

function ours(text: string): unknown {
  try {
    return parseUrlEncoded(text);
  } catch (err) {
    assert.ok(err instanceof HttpError);
    assert.equal(err.status, 400);
    return err.message;
  }
}

const FORMS = [
  'name=Ada+Lovelace&email=ada%40example.com&age=36&newsletter=on&comment=hello%20world',
  'a=1&a=2&a=3',
  'flag&b=&=nameless&c=1=2&&',
  'bad=%zz+x&ok=%E2%82',
  'constructor=1&toString=2&__proto__=3&hasOwnProperty=4&valueOf=5',
  '2=two&b=bee&1=one',
  'caf%C3%A9=cr%C3%A8me',
  'overlong=%C0%AF&surrogate=%ED%A0%80&emoji=%F0%9F%98%80&cut=%F0%9F%98&hex=%4g',
  'tags[]=a&tags[]=b&user[name]=Jo&user[age]=7',
  'items[0]=first&items[1]=second',
  'a%5Bb%5D=1&c=%5D',
  'a=x]=y',
  Array.from({ length: FORM_ARRAY_LIMIT }, (_, i) => `r=${i}`).join('&'),
  Array.from({ length: FORM_ARRAY_LIMIT + 1 }, (_, i) => `r=${i}`).join('&'),
  Array.from({ length: FORM_ARRAY_LIMIT + 1 }, () => 'toString=1').join('&'),
  '&'.repeat(FORM_ARRAY_LIMIT + 1),
  Array.from({ length: FORM_PARAMETER_LIMIT }, (_, i) => `f${i}=1`).join('&'),
  Array.from({ length: FORM_PARAMETER_LIMIT + 1 }, (_, i) => `f${i}=1`).join('&'),
  Array.from({ length: FORM_PARAMETER_LIMIT + 1 }, () => 'r=1').join('&'),
];

describe('when a urlencoded body is parsed', () => {
  for (const text of FORMS) {
    it(`should read ${JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text)} as qs does, errors included`, () => {
      assert.deepEqual(ours(text), viaQs(text));
    });
  }

  it('should give plain objects', () => {
    assert.equal(Object.getPrototypeOf(parseUrlEncoded('a=1')), Object.prototype);
  });

  describe('when an indexed list has a gap (qs would compact it, moving later items)', () => {
    const cases: Array<[string, string]> = [
      ['items[0]=first&items[2]=third&items[5]=sixth', 'missing index, expected: 1 got 2'],
      ['items[1]=only', 'missing index, expected: 0 got 1'],
      ['a[0][x]=1&a[2][x]=2', 'missing index, expected: 1 got 2'],
      ['user[name]=x&user[tags][0]=a&user[tags][3]=b', 'missing index, expected: 1 got 3'],
      ['%69tems[0]=a&items%5B2%5D=b', 'missing index, expected: 1 got 2'],
    ];
    for (const [text, why] of cases) {
      it(`should refuse ${JSON.stringify(text)} with a 400 naming the gap`, () => {
        assert.equal(ours(text), `Failed to parse URL-encoded form data: ${why}`);
      });
    }
    it('should keep lists without gaps, in any order of their keys', () => {
      assert.deepEqual(parseUrlEncoded('items[1]=b&items[0]=a&items[]=c'), { items: ['a', 'b', 'c'] });
    });
  });
});

describe('when the depth of a JSON text is measured', () => {
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

  it('should not count brackets inside strings, escaped quotes included', () => {
    const text = `{"a":"[[[[{{{{\\"[[[[","b":"\\\\","c":${deep(3)}}`;
    assert.equal(jsonDepthExceeds(Buffer.from(text), 4), false);
    assert.equal(jsonDepthExceeds(Buffer.from(text), 3), true);
  });

  it('should stop counting at the limit', () => {
    assert.equal(jsonDepthExceeds(Buffer.from(deep(10)), 10), false);
    assert.equal(jsonDepthExceeds(Buffer.from(deep(11) + 'garbage'), 10), true);
  });
});

describe('when the depth of a parsed JSON value is measured', () => {
  const docs = ['1', '"[[["', '[]', '{}', '{"a":[{"b":[[1]]}],"c":{"d":"]]]"}}', '[[[],[[[]]]],{"x":{"y":{}}}]', '{"__proto__":{"a":[[]]}}'];
  for (const doc of docs) {
    it(`should agree with the count on the text of ${doc}`, () => {
      for (const limit of [0, 1, 2, 3, 4, 5]) assert.equal(valueDepthExceeds(JSON.parse(doc), limit), jsonDepthExceeds(Buffer.from(doc), limit), `limit ${limit}`);
    });
  }
});

describe('when a JSON body is nested too deeply', () => {
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
  const tooDeep = (err: unknown) => err instanceof HttpError && err.status === 400 && err.message.includes('nesting exceeds');
  const parse = (text: string) => parseBody(Buffer.from(text), 'application/json', {}, true);

  it('should refuse it whether it is small (parsed first) or large (scanned first)', () => {
    assert.throws(() => parse(deep(MAX_JSON_DEPTH + 1)), tooDeep);
    const padding = 'x'.repeat(JSON_SCAN_FIRST_BYTES);
    assert.throws(() => parse(`{"pad":"${padding}","a":${deep(MAX_JSON_DEPTH)}}`), tooDeep);
  });

  it('should accept a large body at the limit', () => {
    const padding = 'x'.repeat(JSON_SCAN_FIRST_BYTES);
    assert.doesNotThrow(() => parse(`{"pad":"${padding}","a":${deep(MAX_JSON_DEPTH - 1)}}`));
  });

  it('should call a body that is both malformed and too deep too deep, whatever its size', () => {
    assert.throws(() => parse('['.repeat(MAX_JSON_DEPTH + 1)), tooDeep);
    assert.throws(() => parse(`{"pad":"${'x'.repeat(JSON_SCAN_FIRST_BYTES)}","a":${'['.repeat(MAX_JSON_DEPTH + 1)}`), tooDeep);
  });
});

describe('when a body is parsed', () => {
  it('should return JSON, form and text bodies synchronously', () => {
    const json = parseBody(Buffer.from('{"a":1}'), 'application/json', {}, true);
    assert.deepEqual(json, { body: { a: 1 }, files: {} });
    assert.deepEqual(parseBody(Buffer.from('a=1'), 'application/x-www-form-urlencoded', {}, false), { body: { a: '1' }, files: {} });
    assert.deepEqual(parseBody(Buffer.from('hi'), 'text/plain; charset=utf-8', {}, false), { body: 'hi', files: {} });
  });

  it('should throw the problem for malformed JSON at once', () => {
    assert.throws(() => parseBody(Buffer.from('{'), 'application/json', {}, true), (err: unknown) => err instanceof HttpError && err.status === 400);
  });

  it('should return a promise for multipart', async () => {
    const boundary = 'b0und';
    const raw = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="t"\r\n\r\nv\r\n--${boundary}--\r\n`);
    const type = `multipart/form-data; boundary=${boundary}`;
    const parsed = parseBody(raw, type, { 'content-type': type }, false);
    assert.ok(parsed instanceof Promise);
    assert.deepEqual((await parsed).body, { t: 'v' });
  });
});

describe('when parameters are validated on a live route', () => {
  const app = new App({ port: 0 });
  app.get('/list', (d) => {
    const opts = d.query.opts as { tags: string[] };
    opts.tags.push('changed by the handler');
    return { opts, on: d.query.on };
  }, { parameters: { query: { opts: { type: 'object', default: { tags: ['x'] } }, on: { type: 'boolean', optional: true } } } });
  const router = app.intoRouter();

  it('should give each request its own copy of an object default', async () => {
    await request(router).get('/list');
    const res = await request(router).get('/list');
    assert.deepEqual(res.body.opts, { tags: ['x', 'changed by the handler'] });
  });

  it('should refuse an Object.prototype name as a boolean', async () => {
    const res = await request(router).get('/list?on=constructor');
    assert.equal(res.status, 422);
    assert.equal(JSON.parse(res.text).errors[0].type, 'bool_parsing');
  });

  it('should read a query name such as constructor as a plain field', async () => {
    const res = await request(router).get('/list?on=true&constructor=1');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.on, true);
  });
});
