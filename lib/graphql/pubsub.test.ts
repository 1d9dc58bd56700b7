import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryPubSub } from './pubsub.js';

describe('when a subscriber reads published events', () => {
  it('should deliver them in order, to every subscriber of the topic only', async () => {
    const pubsub = new MemoryPubSub();
    const a = pubsub.subscribe('t');
    const b = pubsub.subscribe('t');
    const other = pubsub.subscribe('u');
    pubsub.publish('t', 1);
    pubsub.publish('t', 2);
    assert.deepEqual([await a.next(), await a.next()], [{ value: 1, done: false }, { value: 2, done: false }]);
    assert.deepEqual(await b.next(), { value: 1, done: false });
    assert.equal(pubsub.listenerCount('u'), 1);
    await Promise.all([a.return!(), b.return!(), other.return!()]);
  });
  it('should resolve a waiting next() with the next event', async () => {
    const pubsub = new MemoryPubSub();
    const it = pubsub.subscribe('t');
    const pending = it.next();
    pubsub.publish('t', 'x');
    assert.deepEqual(await pending, { value: 'x', done: false });
    await it.return!();
  });
});

describe('when a subscription is returned', () => {
  it('should remove its listener at once, even while next() waits for an event', async () => {
    const pubsub = new MemoryPubSub();
    const it = pubsub.subscribe('t');
    const pending = it.next();
    assert.equal(pubsub.listenerCount('t'), 1);
    assert.deepEqual(await it.return!(), { value: undefined, done: true });
    assert.equal(pubsub.listenerCount('t'), 0);
    assert.deepEqual(await pending, { value: undefined, done: true });
    assert.deepEqual(await it.next(), { value: undefined, done: true });
  });
  it('should release a thousand subscriptions without any event being published', async () => {
    const pubsub = new MemoryPubSub();
    const its = Array.from({ length: 1000 }, () => pubsub.subscribe('t'));
    const pending = its.map((it) => it.next());
    assert.equal(pubsub.listenerCount('t'), 1000);
    await Promise.all(its.map((it) => it.return!()));
    assert.equal(pubsub.listenerCount('t'), 0);
    assert.ok((await Promise.all(pending)).every((r) => r.done));
  });
  it('should end on throw() and reject with the given error', async () => {
    const pubsub = new MemoryPubSub();
    const it = pubsub.subscribe('t');
    await assert.rejects(it.throw!(new Error('stop')), /stop/);
    assert.equal(pubsub.listenerCount('t'), 0);
  });
});

describe('when a subscriber does not read', () => {
  it('should keep at most maxQueued events, then end its subscription after them', async () => {
    const pubsub = new MemoryPubSub({ maxQueued: 3 });
    const it = pubsub.subscribe('t');
    for (let i = 0; i < 10; i++) pubsub.publish('t', i);
    assert.equal(pubsub.listenerCount('t'), 0);
    const seen = [];
    for (let r = await it.next(); !r.done; r = await it.next()) seen.push(r.value);
    assert.deepEqual(seen, [0, 1, 2]);
  });
  it('should refuse a bad maxQueued', () => {
    assert.throws(() => new MemoryPubSub({ maxQueued: 0 }), /maxQueued must be a positive integer, got 0/);
  });
});
