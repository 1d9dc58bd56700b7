import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { fastDateTime } from './date-time-format.js';
import { compileSchema } from './validation.js';

const require = createRequire(import.meta.url);
const { fullFormats } = require('ajv-formats/dist/formats') as { fullFormats: Record<string, { validate: (s: string) => boolean }> };
const original = fullFormats['date-time']!.validate;

/** Valid and invalid values in every shape the fast path reads, and the ones it hands on. */
const VALUES = [
  '2024-03-01T09:30:00.000Z', '2026-11-30T17:05:12Z', '2026-11-30t17:05:12z', '2026-11-30 17:05:12Z', '2026-11-30\t17:05:12Z',
  '2024-02-29T00:00:00Z', '2023-02-29T00:00:00Z', '2000-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2026-04-31T00:00:00Z',
  '2026-00-10T00:00:00Z', '2026-13-10T00:00:00Z', '2026-01-00T00:00:00Z', '2026-01-32T00:00:00Z',
  '2026-01-01T24:00:00Z', '2026-01-01T23:60:00Z', '2026-01-01T23:59:60Z', '2026-01-01T23:59:60+00:00', '2026-06-30T22:59:60-01:00',
  '2026-01-01T12:59:60Z', '2026-01-01T23:59:61Z', '2026-01-01T00:00:00', '2026-01-01T00:00:00.Z', '2026-01-01T00:00:00.123456789+05:30',
  '2026-01-01T00:00:00+0530', '2026-01-01T00:00:00+05', '2026-01-01T00:00:00+24:00', '2026-01-01T00:00:00+05:60', '2026-01-01T00:00:00-23:59',
  '2026-01-01T00:00:00Zx', '2026-01-01T00:00:00ZZ', '2026-01-01TT00:00:00Z', '2026-1-01T00:00:00Z', '226-01-01T00:00:00Z', '20260-01-01T00:00:00Z',
  '2026-01-01X00:00:00Z', '2026-01-01T0a:00:00Z', '2026-01-01T00:00:00.1a+00:00', '', 'T', '2026-01-01', '00:00:00Z',
  '٢٠٢٦-01-01T00:00:00Z', '2026-01-01T00:00:00\u00a0', '2026-01-01\u00a000:00:00Z', '9999-12-31T23:59:59.999Z', '0000-01-01T00:00:00Z',
  '2026-01-31T00:00:00Z', '2026-04-30T00:00:00Z', '2026-02-28T00:00:00Z', '2026-02-30T00:00:00Z', '2024-02-30T00:00:00Z',
  '2026-12-31T00:00:00Z', '2026-11-31T00:00:00Z', '2026-01-29T00:00:00Z', '2026-01-01T00:00:00Z\n', '\n2026-01-01T00:00:00Z',
  '2026-01-01T19:59:59+19:59', '2026-01-01T20:00:00-20:00',
];

describe('format date-time', () => {
  it('should answer as ajv-formats does, value by value', () => {
    const fast = fastDateTime(original);
    for (const v of VALUES) assert.equal(fast(v), original(v), JSON.stringify(v));
  });

  it('should be what keel\'s schemas check (a wrong date is still refused)', () => {
    const check = compileSchema({ type: 'string', format: 'date-time' });
    assert.equal(check('2026-11-30T17:05:12.000Z'), true);
    assert.equal(check('2026-02-30T17:05:12.000Z'), false);
    assert.equal(check('2026-06-30T23:59:60Z'), true);
    assert.equal(check('2026-11-30'), false);
  });
});
