import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ipKeyGenerator } from 'express-rate-limit';
import { ipKey } from './ip-key.js';

// keel computes the keys itself (on ip-address) so that keel does not depend on express-rate-limit, whose
// peer dependency would install Express for every user; the keys must stay exactly express-rate-limit's.
const ADDRESSES = [
  '203.0.113.7', '127.0.0.1', '::1', '::', '::ffff:203.0.113.7', '::ffff:cb00:7107', '::203.0.113.7', '::cb00:7107',
  '2001:db8::1', '2001:db8:abcd:12ff:ffff:ffff:ffff:ffff', '2001:db8:abcd:1200::', 'fe80::1', '2001:0db8:0000:0000:0000:0000:0000:0001',
  'ff02::1', '64:ff9b::203.0.113.7', '2001:db8::ffff:203.0.113.7',
];

describe('when a rate limit keys clients by address', () => {
  for (const subnet of [56, 64, 48, 128, 1, false] as const) {
    it(`should give express-rate-limit's keys with ipv6Subnet ${String(subnet)}`, () => {
      for (const ip of ADDRESSES) assert.equal(ipKey(ip, subnet), ipKeyGenerator(ip, subnet), ip);
    });
  }

  it('should group one /56 into one key and tell two /56 apart', () => {
    assert.equal(ipKey('2001:db8:abcd:1201::1', 56), ipKey('2001:db8:abcd:12ff::9', 56));
    assert.notEqual(ipKey('2001:db8:abcd:1201::1', 56), ipKey('2001:db8:abcd:1301::1', 56));
  });
});
