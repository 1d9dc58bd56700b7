import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as turn } from 'node:timers/promises';
import { ConfigError } from '../http/errors.js';
import { ServerConfig } from '../records/server.js';
import { MemoryPubSub } from '../pubsub/memory.js';
import { fairnessOfConfig, fairnessOptions, DEFAULT_WS_IDLE_TIMEOUT, DEFAULT_WS_MAX_BUFFERED_BYTES, DEFAULT_WS_MESSAGE_BURST, DEFAULT_WS_MESSAGES_PER_SECOND } from './fairness.js';
import { DeliverySlicer, slicedPubSub } from './fanout.js';

describe('when WebSocket fairness options are checked', () => {
  it('should fill in the named defaults', () => {
    assert.deepEqual(fairnessOptions(), {
      messagesPerSecond: DEFAULT_WS_MESSAGES_PER_SECOND, messageBurst: DEFAULT_WS_MESSAGE_BURST, onRateExceeded: 'close',
      maxBufferedBytes: DEFAULT_WS_MAX_BUFFERED_BYTES, onSendBufferFull: 'close', idleTimeout: DEFAULT_WS_IDLE_TIMEOUT,
    });
  });
  it('should take the ServerConfig ws_* keys as the defaults of a route', () => {
    const config = ServerConfig.parse({ ws_messages_per_second: 5, ws_message_burst: 10, ws_on_rate_exceeded: 'drop', ws_max_buffered_bytes: null, ws_on_send_buffer_full: 'drop', ws_idle_timeout: 30 });
    assert.deepEqual(fairnessOptions(fairnessOfConfig(config)), { messagesPerSecond: 5, messageBurst: 10, onRateExceeded: 'drop', maxBufferedBytes: null, onSendBufferFull: 'drop', idleTimeout: 30 });
  });
  for (const [bad, key] of [
    [{ messagesPerSecond: 0 }, 'messagesPerSecond'], [{ messageBurst: 1.5 }, 'messageBurst'], [{ onRateExceeded: 'kick' }, 'onRateExceeded'],
    [{ maxBufferedBytes: -1 }, 'maxBufferedBytes'], [{ onSendBufferFull: 'drop-oldest' }, 'onSendBufferFull'], [{ idleTimeout: -5 }, 'idleTimeout'],
  ] as const) {
    it(`should refuse ${JSON.stringify(bad)} with a ConfigError naming ${key} and quoting the value`, () => {
      assert.throws(() => fairnessOptions(bad as never), (err: unknown) => err instanceof ConfigError && err.key === key && err.message.includes(String(Object.values(bad)[0])));
    });
  }
  it('should refuse an unknown option with the one meant', () => {
    assert.throws(() => fairnessOptions({ messagesPerSec: 5 } as never), /Unknown key "messagesPerSec".*Did you mean "messagesPerSecond"/);
  });
  it('should refuse ws_messages_per_second: 0 in ServerConfig, and accept null (no limit)', () => {
    assert.throws(() => ServerConfig.parse({ ws_messages_per_second: 0 }), (err: unknown) => err instanceof ConfigError && err.key === 'ws_messages_per_second');
    assert.equal(ServerConfig.parse({ ws_messages_per_second: null }).ws_messages_per_second, null);
    assert.throws(() => ServerConfig.parse({ ws_on_rate_exceeded: 'kick' }), ConfigError);
  });
});

describe('when many deliveries wait for a slicer', () => {
  it('should admit one slice per turn of the event loop, in order', async () => {
    const slicer = new DeliverySlicer(3, { adaptive: false });
    const order: number[] = [];
    const turns: number[] = [];
    let turnNo = 0;
    const ticking = setInterval(() => turnNo++, 0);
    await Promise.all(Array.from({ length: 7 }, async (_, i) => {
      await slicer.admit();
      order.push(i);
      turns.push(turnNo);
    }));
    clearInterval(ticking);
    assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6]);
    // 3 now, 3 on a later turn, 1 on a turn after that.
    assert.ok(turns[3]! >= turns[2]! && turns[6]! >= turns[5]!);
    assert.equal(slicer.waiting, 0);
  });
  it('should deliver an event to every subscriber of a sliced PubSub and release them all', async () => {
    const memory = new MemoryPubSub();
    const pubsub = slicedPubSub(memory, new DeliverySlicer(10, { adaptive: false }));
    const its = Array.from({ length: 50 }, () => pubsub.subscribe('t'));
    assert.equal(pubsub.listenerCount('t'), 50);
    const next = its.map((it) => it.next());
    let settledBeforeTurn = 0;
    for (const p of next) void p.then(() => settledBeforeTurn++);
    pubsub.publish('t', 'e');
    await Promise.resolve();
    await Promise.resolve();
    await Promise.resolve();
    assert.ok(settledBeforeTurn <= 10, `${settledBeforeTurn} delivered before the loop turned`);
    assert.deepEqual((await Promise.all(next)).map((r) => r.value), Array(50).fill('e'));
    await Promise.all(its.map((it) => it.return!()));
    await turn();
    assert.equal(memory.listenerCount('t'), 0);
  });
});
