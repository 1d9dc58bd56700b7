import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ClientBudget, KeyedCounter } from './client-budget.js';

const socket = (remoteAddress: string) => ({ remoteAddress });

describe('when a ClientBudget counts connections', () => {
  it('should refuse the one past maxConnectionsPerClient for that client only, and admit again after a release', () => {
    const lines: unknown[] = [];
    const budget = new ClientBudget({ maxConnectionsPerClient: 2, messagesPerSecond: null, messageBurst: 1, logger: { debug() {}, warn: (o: unknown) => void lines.push(o) } as never });
    assert.equal(budget.acquire('a', 'connection'), true);
    assert.equal(budget.acquire('a', 'connection'), true);
    assert.equal(budget.acquire('a', 'connection'), false);
    assert.equal(budget.acquire('b', 'connection'), true);
    assert.equal(budget.refused, 1);
    assert.equal(lines.length, 1, 'one throttled warn line');
    budget.release('a');
    assert.equal(budget.connections('a'), 1);
    assert.equal(budget.acquire('a', 'connection'), true);
  });

  it('should key IPv4-mapped IPv6 as IPv4 and group IPv6 by /56, as the rate limit does', () => {
    const budget = new ClientBudget({ maxConnectionsPerClient: 1, messagesPerSecond: null, messageBurst: 1 });
    assert.equal(budget.connectionKey(socket('::ffff:10.0.0.1')), '10.0.0.1');
    assert.equal(budget.connectionKey(socket('2001:db8:1:100::1')), budget.connectionKey(socket('2001:db8:1:1ff::2')));
    assert.notEqual(budget.connectionKey(socket('2001:db8:1:100::1')), budget.connectionKey(socket('2001:db8:1:200::1')));
  });

  it("should not count a trusted proxy's own connections (trust_proxy)", () => {
    const budget = new ClientBudget({ maxConnectionsPerClient: 1, messagesPerSecond: null, messageBurst: 1, trustProxy: 'loopback' });
    assert.equal(budget.connectionKey(socket('127.0.0.1')), undefined);
    assert.equal(budget.connectionKey(socket('203.0.113.9')), '203.0.113.9');
  });

  for (const trustProxy of [true, 2] as const) {
    it(`should count every peer under trust_proxy ${trustProxy} (any of them may be a direct client)`, () => {
      const budget = new ClientBudget({ maxConnectionsPerClient: 1, messagesPerSecond: null, messageBurst: 1, trustProxy });
      assert.equal(budget.connectionKey(socket('127.0.0.1')), '127.0.0.1');
    });
  }
});

describe("when a client's sockets share one message meter", () => {
  it('should charge the burst, then answer how long until the next message is due without charging it', () => {
    const budget = new ClientBudget({ maxConnectionsPerClient: null, messagesPerSecond: 10, messageBurst: 3 });
    const one = budget.messages('a')!;
    const two = budget.messages('a')!;
    assert.deepEqual([one.charge(), two.charge(), one.charge()], [0, 0, 0]);
    const wait = two.charge();
    assert.ok(wait > 0 && wait <= 100, `wait ${wait} ms at 10/s`);
    assert.ok(one.charge() > 0, 'the same client on its other socket waits too');
    assert.equal(budget.messages('b')!.charge(), 0, 'another client has its own');
    one.release();
    two.release();
  });

  it('should give no meter when messages are not limited', () => {
    assert.equal(new ClientBudget({ maxConnectionsPerClient: 1, messagesPerSecond: null, messageBurst: 1 }).messages('a'), undefined);
  });
});

describe('when a KeyedCounter has no limit', () => {
  it('should count without refusing', () => {
    const c = new KeyedCounter(null);
    for (let i = 0; i < 1000; i++) assert.equal(c.acquire('k'), true);
    assert.equal(c.count('k'), 1000);
  });
});
