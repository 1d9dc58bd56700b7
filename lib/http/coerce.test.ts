/**
 * Integer parameters: short integer text is read by a character loop; it must read exactly what the
 * reference rule (an optional sign and ASCII digits, Number() of the text) reads, and refuse the rest.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { scalarCoercer, UNCONVERTIBLE } from './coerce.js';

const toInteger = scalarCoercer({ type: 'integer' });
/** The rule as the regular expression states it (up to 15 characters, where no 64-bit range check applies). */
const reference = (raw: string): unknown => (/^[+-]?\d+$/.test(raw) ? Number(raw) : UNCONVERTIBLE);

describe('when integer text is read', () => {
  it('should read what the reference rule reads, value for value', () => {
    const texts = [
      '0', '7', '42', '4242', '-1', '+1', '-0', '+0', '007', '-007', '999999999999999', '-99999999999999', '123456789012345',
      '', '-', '+', '--1', '+-1', '1-', ' 1', '1 ', '1.0', '1e3', '0x10', '١٢', '１', '12a', 'a12', '1_000', '\u00001',
    ];
    for (const t of texts) assert.deepEqual(Object.is(toInteger(t), -0) ? 'minus zero' : toInteger(t), Object.is(reference(t), -0) ? 'minus zero' : reference(t), JSON.stringify(t));
  });

  it('should keep the 64-bit range check for longer text', () => {
    assert.equal(toInteger('9223372036854775807'), 9223372036854775807);
    assert.equal(toInteger('9223372036854775808'), UNCONVERTIBLE);
    assert.equal(toInteger('-9223372036854775808'), -9223372036854775808);
    assert.equal(toInteger('1234567890123456'), 1234567890123456);
  });
});
