import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { negotiateEncoding, parseAcceptEncoding, type Coding } from './negotiate.js';

const BOTH: Coding[] = ['br', 'gzip'];

describe('negotiateEncoding: when both codings are offered', () => {
  const cases: Array<[string | undefined, Coding | null]> = [
    [undefined, null],
    ['', null],
    ['identity', null],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, br', 'br'],
    ['br;q=0.1, gzip;q=0.9', 'gzip'],
    ['gzip;q=0.5, br;q=0.5', 'br'],
    ['*', 'br'],
    ['*;q=0', null],
    ['gzip;q=0', null],
    ['gzip;q=0, *', 'br'],
    ['br;q=0, *;q=0.3', 'gzip'],
    ['deflate', null],
    ['GZIP', 'gzip'],
    ['x-gzip', 'gzip'],
    ['gzip ; q=0.8 , br ; q=0.9', 'br'],
    ['gzip;q=1.000', 'gzip'],
    ['gzip;q=0.001', 'gzip'],
    ['br;q=2, gzip', 'gzip'],
    ['br;q=abc, gzip;q=0.1', 'gzip'],
    ['br;q=0.1234', null],
    ['br;level=1', 'br'],
  ];
  for (const [header, expected] of cases) {
    it(`should pick ${expected ?? 'identity'} for ${header === undefined ? 'no header' : JSON.stringify(header)}`, () => {
      assert.equal(negotiateEncoding(header, BOTH), expected);
    });
  }

  it('should read a header given as several lines', () => {
    assert.equal(negotiateEncoding(['gzip;q=0.2', 'br;q=0.1'], BOTH), 'gzip');
  });
});

describe('negotiateEncoding: when only one coding is offered', () => {
  it('should not offer gzip when only br is on', () => {
    assert.equal(negotiateEncoding('gzip', ['br']), null);
    assert.equal(negotiateEncoding('gzip, br;q=0.1', ['br']), 'br');
  });

  it('should not offer br when only gzip is on', () => {
    assert.equal(negotiateEncoding('br', ['gzip']), null);
    assert.equal(negotiateEncoding('*', ['gzip']), 'gzip');
  });
});

describe('parseAcceptEncoding', () => {
  it('should keep the first weight of a repeated coding', () => {
    assert.deepEqual([...parseAcceptEncoding('gzip;q=0.3, gzip;q=1')], [['gzip', 0.3]]);
  });

  it('should skip empty members', () => {
    assert.deepEqual([...parseAcceptEncoding(' , br,,')], [['br', 1]]);
  });
});
