import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { snapshotFromParts, type ResponseSnapshot } from '../snapshot.js';
import { compareResponse, parseSetCookies } from './compare.js';

function snap(status: number, headers: Record<string, string | string[]>, body: string | object = ''): ResponseSnapshot {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const h = typeof body === 'string' ? headers : { 'content-type': 'application/json', ...headers };
  return snapshotFromParts({ status, headers: h, body: Buffer.from(text) });
}

const whats = (m: { what: string }[]) => m.map((x) => x.what);

describe('compareResponse', () => {
  describe('when comparing the status', () => {
    it('should pass on an equal status', () => {
      assert.deepEqual(compareResponse({ status_code: 204 }, snap(204, {})), []);
    });
    it('should report a different status', () => {
      assert.deepEqual(compareResponse({ status_code: 200 }, snap(404, {})), [{ what: 'status', expected: 200, actual: 404 }]);
    });
  });

  describe('when comparing headers', () => {
    const res = snap(200, { 'X-Request-ID': '0b7e3f4c-9d2a-4e1b-8c3d-5f6a7b8c9d0e', 'X-Response-Time': '12ms', 'Content-Type': 'text/plain' });
    it('should match names case-insensitively and values exactly', () => {
      assert.deepEqual(compareResponse({ status_code: 200, headers: { 'content-TYPE': 'text/plain' } }, res), []);
      assert.deepEqual(whats(compareResponse({ status_code: 200, headers: { 'Content-Type': 'text/plain; charset=utf-8' } }, res)), ['header content-type']);
    });
    it('should compare a Content-Type listed without parameters as a media type (charset and case free)', () => {
      const json = snap(200, { 'Content-Type': 'Application/Problem+JSON; charset=utf-8' });
      assert.deepEqual(compareResponse({ status_code: 200, headers: { 'Content-Type': 'application/problem+json' } }, json), []);
      assert.deepEqual(whats(compareResponse({ status_code: 200, headers: { 'Content-Type': 'application/json' } }, json)), ['header content-type']);
      assert.deepEqual(whats(compareResponse({ status_code: 200, headers: { 'Content-Type': 'application/problem+json; charset=utf-8' } }, json)), ['header content-type'], 'listed parameters: exact');
    });
    it('should compare Vary as a list of field names: each listed one named, case-insensitive, others free', () => {
      assert.deepEqual(compareResponse({ status_code: 200, headers: { Vary: 'Accept-Encoding' } }, snap(200, { Vary: 'Origin, accept-encoding' })), []);
      assert.deepEqual(whats(compareResponse({ status_code: 200, headers: { Vary: 'Accept-Encoding, Origin' } }, snap(200, { Vary: 'accept-encoding' }))), ['header vary']);
      assert.deepEqual(whats(compareResponse({ status_code: 200, headers: { Vary: 'Accept-Encoding' } }, snap(200, {}))), ['header vary']);
    });
    it('should accept <<uuid>> only for a UUID', () => {
      assert.deepEqual(compareResponse({ status_code: 200, headers: { 'x-request-id': '<<uuid>>' } }, res), []);
      assert.deepEqual(whats(compareResponse({ status_code: 200, headers: { 'x-response-time': '<<uuid>>' } }, res)), ['header x-response-time']);
    });
    it('should check <<present>> and <<absent>>', () => {
      assert.deepEqual(compareResponse({ status_code: 200, headers: { 'x-request-id': '<<present>>', 'x-other': '<<absent>>' } }, res), []);
      assert.deepEqual(whats(compareResponse({ status_code: 200, headers: { 'x-other': '<<present>>', 'x-request-id': '<<absent>>' } }, res)), ['header x-other', 'header x-request-id']);
    });
    it('should treat values containing .* as anchored patterns', () => {
      assert.deepEqual(compareResponse({ status_code: 200, headers: { 'X-Response-Time': '.*ms', 'X-Request-ID': '.*' } }, res), []);
      const m = compareResponse({ status_code: 200, headers: { 'X-Response-Time': '.*s', 'Content-Type': '.*json' } }, res);
      assert.deepEqual(whats(m), ['header content-type']);
      assert.equal(m[0]!.note, 'compared as a regular expression');
    });
    it('should report a missing header', () => {
      assert.deepEqual(compareResponse({ status_code: 200, headers: { 'x-missing': 'v' } }, res), [{ what: 'header x-missing', expected: 'v', actual: '<<absent>>' }]);
    });
  });

  describe('when comparing JSON bodies', () => {
    it('should deep-equal regardless of key order', () => {
      assert.deepEqual(compareResponse({ status_code: 200, body: { a: 1, b: [1, { c: 2 }] } }, snap(200, {}, { b: [1, { c: 2 }], a: 1 })), []);
    });
    it('should report extra, missing and different members with their paths', () => {
      const m = compareResponse({ status_code: 200, body: { a: 1, b: { c: [1, 2] }, gone: true } }, snap(200, {}, { a: 2, b: { c: [1] }, extra: 1 }));
      assert.deepEqual(whats(m), ['body $.a', 'body $.b.c.length', 'body $.gone', 'body $.extra']);
    });
    it('should compare problem type URIs by their last path segment', () => {
      const expected = { type: 'https://spikard.dev/errors/validation-error', title: 'T', status: 422 };
      assert.deepEqual(compareResponse({ status_code: 422, body: expected }, snap(422, {}, { ...expected, type: 'https://keel.dev/errors/validation-error' })), []);
      assert.deepEqual(whats(compareResponse({ status_code: 422, body: expected }, snap(422, {}, { ...expected, type: 'https://keel.dev/errors/bad-request' }))), ['body $.type']);
    });
    it('should compare non-URI type members exactly', () => {
      const m = compareResponse({ status_code: 422, body: { errors: [{ type: 'missing' }] } }, snap(422, {}, { errors: [{ type: 'string_too_short' }] }));
      assert.deepEqual(whats(m), ['body $.errors[0].type']);
    });
    it('should treat string leaves containing .* as patterns', () => {
      assert.deepEqual(compareResponse({ status_code: 200, body: { request_id: '.*' } }, snap(200, {}, { request_id: 'abc' })), []);
    });
    it('should accept tokens as string leaves', () => {
      const body = { id: '0b7e3f4c-9d2a-4e1b-8c3d-5f6a7b8c9d0e', at: 123 };
      assert.deepEqual(compareResponse({ status_code: 200, body: { id: '<<uuid>>', at: '<<present>>', secret: '<<absent>>' } }, snap(200, {}, body)), []);
      const m = compareResponse({ status_code: 200, body: { id: '<<uuid>>', at: '<<absent>>' } }, snap(200, {}, { id: 'x', at: 1 }));
      assert.deepEqual(whats(m), ['body $.id', 'body $.at']);
    });
    it('should report a body that is not JSON', () => {
      const m = compareResponse({ status_code: 200, body: { a: 1 } }, snap(200, {}, '<html>'));
      assert.equal(m[0]!.note, 'response body is not JSON');
    });
    it('should not confuse 1 with "1"', () => {
      assert.deepEqual(whats(compareResponse({ status_code: 200, body: { a: 1 } }, snap(200, {}, { a: '1' }))), ['body $.a']);
    });
  });

  describe('when comparing text bodies', () => {
    it('should compare exactly', () => {
      assert.deepEqual(compareResponse({ status_code: 200, body: 'foo bar' }, snap(200, {}, 'foo bar')), []);
      assert.deepEqual(whats(compareResponse({ status_code: 200, body: 'foo bar' }, snap(200, {}, 'foo bar\n'))), ['body']);
    });
    it('should accept a JSON string equal to the expected text', () => {
      assert.deepEqual(compareResponse({ status_code: 200, body: 'foo bar' }, snap(200, { 'content-type': 'application/json' }, JSON.stringify('foo bar'))), []);
    });
    it('should require an empty body for a null or empty expected body', () => {
      assert.deepEqual(compareResponse({ status_code: 204, body: null }, snap(204, {})), []);
      assert.deepEqual(whats(compareResponse({ status_code: 200, body: '' }, snap(200, {}, 'x'))), ['body']);
    });
    it('should not assert the body when none is expected', () => {
      assert.deepEqual(compareResponse({ status_code: 200 }, snap(200, {}, 'anything')), []);
    });
  });

  describe('when comparing cookies', () => {
    const res = snap(200, { 'set-cookie': ['session=abc; Max-Age=3600; Path=/; Domain=example.com; Secure; HttpOnly; SameSite=Strict', 'gone=; Max-Age=0'] });
    it('should match the listed attributes', () => {
      const m = compareResponse(
        { status_code: 200, cookies: { session: { value: 'abc', max_age: 3600, path: '/', domain: '.example.com', secure: true, httponly: true, samesite: 'strict' }, gone: { value: '', max_age: 0 } } },
        res,
      );
      assert.deepEqual(m, []);
    });
    it('should report wrong values, wrong flags and missing cookies', () => {
      const m = compareResponse({ status_code: 200, cookies: { session: { value: 'x', path: '/api' }, gone: { httponly: true }, other: { value: '1' } } }, res);
      assert.deepEqual(m.map((x) => [x.what, x.actual]), [
        ['cookie session', 'value=abc; path=/'],
        ['cookie gone', 'httponly=<<absent>>'],
        ['cookie other', '<<absent>>'],
      ]);
    });
  });
});

describe('parseSetCookies', () => {
  it('should keep = inside values and lower-case attribute names', () => {
    const c = parseSetCookies(['token=a=b; PATH=/x']);
    assert.deepEqual(c.get('token'), { value: 'a=b', attributes: { path: '/x' } });
  });

});

describe('compareResponse, error items and levels', () => {
  describe('when an error item leaves out input or ctx', () => {
    const problem = (item: Record<string, unknown>) => ({ type: 'https://x/errors/validation-error', status: 422, errors: [item] });
    const got = snap(422, {}, problem({ type: 'missing', loc: ['query', 'q'], msg: 'Field required', input: null, ctx: { a: 1 } }));
    it('should not assert them (the corpus format marks them optional)', () => {
      assert.deepEqual(compareResponse({ status_code: 422, body: problem({ type: 'missing', loc: ['query', 'q'], msg: 'Field required' }) }, got), []);
    });
    it('should still assert them when given, and any other extra key', () => {
      assert.deepEqual(whats(compareResponse({ status_code: 422, body: problem({ type: 'missing', loc: ['query', 'q'], msg: 'Field required', input: '' }) }, got)), ['body $.errors[0].input']);
      const extra = snap(422, {}, problem({ type: 'missing', loc: ['query', 'q'], msg: 'Field required', url: 'x' }));
      assert.deepEqual(whats(compareResponse({ status_code: 422, body: problem({ type: 'missing', loc: ['query', 'q'], msg: 'Field required' }) }, extra)), ['body $.errors[0].url']);
    });
  });

  describe('when grading at the lenient level', () => {
    const expected = { status_code: 422, headers: { 'x-a': 'b' }, body: { type: 'https://spikard.dev/errors/validation-error', title: 'Request Validation Failed', detail: 'x', errors: [{ type: 'string_too_short', loc: ['query', 'q'], msg: 'String should have at least 3 characters', ctx: { min_length: 3 } }] } };
    it('should grade only the status, the problem type slug and loc + type of each error', () => {
      const got = snap(422, {}, { type: 'https://example.org/problems/validation-error', title: 'Bad', errors: [{ type: 'string_too_short', loc: ['query', 'q'], msg: 'too short' }] });
      assert.deepEqual(compareResponse(expected, got, 'lenient'), []);
      assert.ok(compareResponse(expected, got, 'strict').length > 0);
    });
    it('should still require the headers an RFC says MUST come with the status (Allow on 405, WWW-Authenticate on 401, a listed Retry-After)', () => {
      const notAllowed = { status_code: 405, headers: { Allow: 'GET, HEAD' }, body: { type: 'https://keel.dev/errors/method-not-allowed', title: 'Method Not Allowed' } };
      assert.deepEqual(whats(compareResponse(notAllowed, snap(405, {}, { type: 'x/method-not-allowed' }), 'lenient')), ['header allow']);
      assert.deepEqual(compareResponse(notAllowed, snap(405, { allow: 'HEAD, GET' }, { type: 'x/method-not-allowed' }), 'lenient'), [], 'the order of methods is free');
      assert.deepEqual(whats(compareResponse(notAllowed, snap(405, { allow: 'GET' }, { type: 'x/method-not-allowed' }), 'lenient')), ['header allow']);
      assert.deepEqual(whats(compareResponse({ status_code: 405 }, snap(405, {}, {}), 'lenient')), ['header allow'], 'required though the case does not list it');
      assert.deepEqual(whats(compareResponse({ status_code: 401 }, snap(401, {}, {}), 'lenient')), ['header www-authenticate']);
      assert.deepEqual(compareResponse({ status_code: 401 }, snap(401, { 'www-authenticate': 'Bearer' }, {}), 'lenient'), []);
      assert.deepEqual(whats(compareResponse({ status_code: 429, headers: { 'Retry-After': '<<present>>' } }, snap(429, {}, {}), 'lenient')), ['header retry-after']);
      assert.deepEqual(compareResponse({ status_code: 429 }, snap(429, {}, {}), 'lenient'), [], 'Retry-After only where the case lists it');
      assert.deepEqual(whats(compareResponse({ status_code: 405 }, snap(404, {}, {}), 'lenient')), ['status'], 'not when the status is wrong already');
    });
    it('should report a wrong slug, loc or type, and a missing item', () => {
      const got = snap(422, {}, { type: 'https://example.org/problems/bad-request', errors: [{ type: 'too_short', loc: ['query', 'r'] }, { type: 'x', loc: [] }] });
      assert.deepEqual(whats(compareResponse(expected, got, 'lenient')), ['body $.type', 'body $.errors.length', 'body $.errors[0].type', 'body $.errors[0].loc']);
    });
  });
});
