/**
 * Problem bodies' text: the head-per-type writer, the compiled serialiser and JSON.stringify write the
 * same bytes, and the byte length known on the way is Buffer.byteLength's.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PROBLEM_HEADS_KEPT, problemJson, problemJsonByteLength, standardProblemJson } from './problem-json.js';

const STRINGS = [
  'no such account', '', 'quote " inside', 'back\\slash', 'tab\there', 'line\nbreak', 'nul \u0000 char', '\u001f',
  'café', '日本語', 'emoji 😀', 'lone \ud800 surrogate', 'lone \udfff low', '\u007f del', '\u2028 line separator',
  '</script>', 'a'.repeat(5000),
];

describe('when a problem of the standard members is written', () => {
  it('should write the bytes JSON.stringify writes, for every detail and instance', () => {
    for (const detail of [undefined, ...STRINGS]) {
      for (const instance of [undefined, '/accounts/7', 'é/"x"']) {
        const p: Record<string, unknown> = { type: 'https://keel.dev/errors/not-found', title: 'Resource Not Found', status: 404 };
        if (detail !== undefined) p.detail = detail;
        if (instance !== undefined) p.instance = instance;
        const text = problemJson(p);
        assert.equal(text, JSON.stringify(p), JSON.stringify(p));
        assert.equal(problemJsonByteLength(text), Buffer.byteLength(text));
        assert.equal(standardProblemJson(p.type, p.title, p.status, p.detail, p.instance), JSON.stringify(p));
      }
    }
  });

  it('should write titles and types that need escaping as JSON.stringify does', () => {
    for (const title of ['Ünïcode "Title"', 'Tab\tTitle', 'plain']) {
      const p = { type: 'about:blank', title, status: 418, detail: 'x' };
      assert.equal(problemJson(p), JSON.stringify(p));
      assert.equal(problemJsonByteLength(problemJson(p)), Buffer.byteLength(JSON.stringify(p)));
    }
  });

  it('should follow a type whose title or status changes, and types past the kept heads', () => {
    for (let i = 0; i < PROBLEM_HEADS_KEPT + 10; i++) {
      for (const [title, status] of [['A', 400], ['B', 400], ['A', 409]] as const) {
        const p = { type: `https://example.com/p/${i}`, title, status, detail: `d${i}` };
        assert.equal(problemJson(p), JSON.stringify(p));
      }
    }
  });
});

describe('when a problem has another shape', () => {
  it('should write members in their own order, extensions and odd types as JSON.stringify does', () => {
    const shapes: Record<string, unknown>[] = [
      { title: 'Not Found', type: 'about:blank', status: 404 },
      { type: 'about:blank', title: 'Not Found', status: 404, instance: '/x', detail: 'after instance' },
      { type: 'about:blank', title: 'Not Found', status: 404, retry_after: 3 },
      { type: 'about:blank', title: 'Not Found', status: 404, detail: 7 },
      { type: 'about:blank', title: 'Not Found', status: 404.5 },
      { type: 'about:blank', title: 'Not Found', status: 404, detail: undefined, instance: '/i' },
      { type: 'about:blank', status: 404 },
      { type: 'about:blank', title: 'Bad', status: 422, errors: [{ type: 'missing', loc: ['body', 'a'], msg: 'Field required', input: null }] },
    ];
    for (const p of shapes) assert.equal(problemJson(p), JSON.stringify(p), JSON.stringify(p));
  });

  it('should leave out inherited members, as JSON.stringify does', () => {
    const p = Object.assign(Object.create({ detail: 'inherited' }) as Record<string, unknown>, { type: 'about:blank', title: 'Gone', status: 410 });
    assert.equal(problemJson(p), JSON.stringify(p));
    assert.equal(problemJson(p), '{"type":"about:blank","title":"Gone","status":410}');
  });
});
