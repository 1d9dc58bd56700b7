/**
 * Cluster connections as operators give them (issue 37): REDIS_CLUSTER_NODES parsed, and every bad
 * seed list, node or prefix refused when the component is built, naming what was wrong.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseClusterNodes } from './redis-connection.js';
import { bullmqBackground, DEFAULT_BULLMQ_CLUSTER_PREFIX } from '../background/index.js';
import { RedisPubSub } from '../pubsub/index.js';

describe('when REDIS_CLUSTER_NODES is parsed', () => {
  it('should give host and port of each seed, IPv6 in brackets', () => {
    assert.deepEqual(parseClusterNodes('10.0.0.1:7000, redis-1.internal:6379,[::1]:7001'), [
      { host: '10.0.0.1', port: 7000 }, { host: 'redis-1.internal', port: 6379 }, { host: '::1', port: 7001 },
    ]);
  });
  // Each bad list, with the part the error must quote.
  const bad: [string, string][] = [
    ['', '""'], ['   ', '"   "'], ['10.0.0.1', '"10.0.0.1"'], ['10.0.0.1:', '"10.0.0.1:"'], [':7000', '":7000"'],
    ['10.0.0.1:0', '"10.0.0.1:0"'], ['10.0.0.1:65536', '"10.0.0.1:65536"'], ['10.0.0.1:7000,', '""'],
    ['redis://10.0.0.1:7000', '"redis://10.0.0.1:7000"'], ['::1:7000', '"::1:7000"'], ['a b:7000', '"a b:7000"'],
  ];
  for (const [text, quoted] of bad) {
    it(`should refuse ${JSON.stringify(text)}, quoting ${quoted}`, () => {
      assert.throws(() => parseClusterNodes(text), (err: Error) => err instanceof TypeError && err.message.includes(quoted));
    });
  }
});

describe('when a component is given a cluster connection', () => {
  const cases: [string, unknown, RegExp][] = [
    ['an empty seed list', { cluster: [] }, /non-empty array/],
    ['a seed that is not host:port', { cluster: ['10.0.0.1'] }, /"10\.0\.0\.1".*host:port/],
    ['a seed object without a port', { cluster: [{ host: '10.0.0.1' }] }, /host:port" or \{ host, port \}/],
    ['clusterOptions that are not an object', { cluster: ['10.0.0.1:7000'], clusterOptions: 'tls' }, /clusterOptions/],
    ['node options beside the seeds', { cluster: ['10.0.0.1:7000'], password: 'x' }, /unknown key password.*redisOptions/],
  ];
  for (const [what, connection, message] of cases) {
    it(`should refuse ${what} in RedisPubSub`, () => {
      assert.throws(() => new RedisPubSub({ connection: connection as never }), (err: Error) => err instanceof TypeError && message.test(err.message));
    });
    it(`should refuse ${what} in bullmqBackground, naming the option`, () => {
      assert.throws(() => bullmqBackground({ connection: connection as never }), (err: Error) => /Invalid bullmqBackground option connection/.test(err.message) && message.test(err.message));
    });
  }

  it('should refuse a BullMQ prefix without a hash tag (CROSSSLOT at the first enqueue otherwise)', () => {
    assert.throws(() => bullmqBackground({ connection: { cluster: ['10.0.0.1:7000'] }, prefix: 'jobs' }), /option prefix: expected a hash tag on a cluster, e\.g\. "\{jobs\}", got "jobs"/);
    assert.throws(() => bullmqBackground({ connection: { cluster: ['10.0.0.1:7000'] }, prefix: 'jobs:{}' }), /option prefix/);
  });

  it('should take a hash-tagged prefix, and default to one', () => {
    assert.equal(DEFAULT_BULLMQ_CLUSTER_PREFIX, '{keel:bull}');
    assert.equal(bullmqBackground({ connection: { cluster: ['10.0.0.1:7000'] }, prefix: '{jobs}' }).kind, 'bullmq');
    assert.equal(bullmqBackground({ connection: { cluster: [{ host: '10.0.0.1', port: 7000 }], clusterOptions: { redisOptions: { password: 'p' } } } }).kind, 'bullmq');
  });
});
