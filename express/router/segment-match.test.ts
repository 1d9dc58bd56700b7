import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { match } from 'path-to-regexp';
import { decodeParam } from './layer.js';
import { segmentMatcher } from './segment-match.js';

/** What a matcher answered, comparable: false, the thrown error's message and status, or the path and params. */
function outcome(fn: (path: string) => unknown, path: string): unknown {
  try {
    const m = fn(path) as false | { path: string; params: Record<string, unknown> };
    if (!m) return false;
    assert.equal(Object.getPrototypeOf(m.params), null);
    return { path: m.path, params: Object.entries(m.params) };
  } catch (err) {
    return { threw: (err as Error).message, status: (err as any).status };
  }
}

const PATTERNS = ['/r37', '/r37/:id', '/api/:version', '/Users/:userId/Books/:book_id', '/:a', '/:a/:b', '/a.b/~c_d/-e@f', '/x/:$y/z'];
const PATHS = [
  '/', '', '/r37', '/R37', '/r37/', '/r37//', '/r370', '/r37/42', '/r37/42/', '/r37/42//', '/r37/42/x', '/r37//42',
  '/api', '/api/v1', '/API/v1', '/api/v1/', '/api/v1/r37/42', '/api/v1//x', '/api//x', '/api/v1%2Fx/y', '/api/%E2%82%AC',
  '/api/%zz', '/api/a%', '/users/7/books/9', '/Users/7/Books/9/', '/USERS/7/BOOKS/9/extra', '/a.b/~c_d/-e@f',
  '/A.B/~C_D/-E@F', '/x/1/z', '/x/1/Z/', '/\u212a', '/r3\u212a', '/a?b', '/caf\u00e9/x', 'r37', '//r37',
];

describe('when a route path has only literal and named-parameter segments', () => {
  it("should match every path exactly as path-to-regexp 8's match does, for each option", () => {
    let compared = 0;
    for (const pattern of PATTERNS) {
      for (const sensitive of [false, true]) {
        for (const end of [true, false]) {
          for (const trailing of [true, false]) {
            const ours = segmentMatcher(pattern, { sensitive, end, trailing, decode: decodeParam });
            assert.ok(ours, `${pattern} is a segment pattern`);
            const theirs = match(pattern, { sensitive, end, trailing, decode: decodeParam });
            for (const path of PATHS) {
              assert.deepEqual(outcome(ours, path), outcome(theirs, path), `${pattern} ${JSON.stringify(path)} sensitive=${sensitive} end=${end} trailing=${trailing}`);
              compared++;
            }
          }
        }
      }
    }
    assert.equal(compared, PATTERNS.length * 8 * PATHS.length);
  });

  it('should leave every other pattern to path-to-regexp', () => {
    const options = { sensitive: false, end: true, trailing: true, decode: decodeParam };
    for (const pattern of ['/', '/*splat', '/a{/:b}', '/:a/:a', '/a b', '/a+b', '/:"quoted"', '/a\\:b', '/a//b', 'a', '/caf\u00e9', '/:1a', '/a/']) {
      assert.equal(segmentMatcher(pattern, options), undefined, pattern);
    }
  });
});
