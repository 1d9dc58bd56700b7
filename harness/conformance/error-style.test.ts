import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { corpusErrorStyle, withCorpusErrorStyle } from './error-style.js';

describe('the corpus error style of a parameter', () => {
  it('should be generic for a bare schema declared required: true', () => {
    assert.equal(corpusErrorStyle({ type: 'integer', maximum: 100, required: true }), 'generic');
  });

  it('should be the reference\'s with an annotation, without required, or with required: false', () => {
    assert.equal(corpusErrorStyle({ type: 'string', annotation: 'str', required: true, pattern: '^Digest .+' }), 'reference');
    assert.equal(corpusErrorStyle({ type: 'string', maxLength: 3 }), 'reference');
    assert.equal(corpusErrorStyle({ type: 'string', required: false }), 'reference');
    assert.equal(corpusErrorStyle(null), 'reference');
  });

  it('should mark parameter entries only (not files, not whole-object schemas)', () => {
    const out = withCorpusErrorStyle({
      query: { a: { type: 'string', required: true }, b: { type: 'string' } },
      files: { f: { required: true } },
      headers: { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] },
    });
    assert.deepEqual(out.query, { a: { type: 'string', required: true, error_style: 'generic' }, b: { type: 'string' } });
    assert.deepEqual(out.files, { f: { required: true } });
    assert.deepEqual(out.headers, { type: 'object', properties: { x: { type: 'string' } }, required: ['x'] });
  });
});
