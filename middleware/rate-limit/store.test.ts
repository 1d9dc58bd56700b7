import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStore, gcraTake, type BucketPolicy } from './store.js';

/** A store on a clock the test moves by hand. */
function clocked(options: { maxKeys?: number } = {}) {
  let t = 1_000;
  const store = new MemoryStore({ ...options, now: () => t });
  return { store, advance: (ms: number) => void (t += ms) };
}

describe('gcraTake (the token bucket)', () => {
  const policy: BucketPolicy = { burst: 3, perSecond: 1 };
  it('should allow a full burst from an empty state, counting down remaining', () => {
    let tat: number | undefined;
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const step = gcraTake(tat, 0, policy);
      assert.equal(step.result.allowed, true);
      remaining.push(step.result.remaining);
      tat = step.tat;
    }
    assert.deepEqual(remaining, [2, 1, 0]);
    const refused = gcraTake(tat, 0, policy);
    assert.deepEqual(refused.result, { allowed: false, remaining: 0, retryAfterMs: 1000, resetMs: 3000 });
    assert.equal(refused.tat, undefined, 'a refused request does not change the state');
  });
  it('should handle rates that do not divide a second evenly', () => {
    let tat: number | undefined;
    for (let i = 0; i < 3; i++) tat = gcraTake(tat, 0, { burst: 3, perSecond: 3 }).tat;
    assert.equal(gcraTake(tat, 0, { burst: 3, perSecond: 3 }).result.allowed, false);
    assert.equal(gcraTake(tat, 334, { burst: 3, perSecond: 3 }).result.allowed, true);
  });
});

describe('MemoryStore', () => {
  describe('when a client spends its bucket', () => {
    it('should refuse past the burst and tell how long until the next token', () => {
      const { store } = clocked();
      const policy = { burst: 2, perSecond: 4 };
      assert.equal(store.take('a', policy).allowed, true);
      assert.equal(store.take('a', policy).allowed, true);
      const refused = store.take('a', policy);
      assert.equal(refused.allowed, false);
      assert.equal(refused.retryAfterMs, 250);
    });
    it('should refill one token per interval, never more than the burst', () => {
      const { store, advance } = clocked();
      const policy = { burst: 2, perSecond: 4 };
      store.take('a', policy);
      store.take('a', policy);
      advance(250);
      assert.equal(store.take('a', policy).allowed, true);
      assert.equal(store.take('a', policy).allowed, false);
      advance(10_000);
      assert.equal(store.take('a', policy).remaining, 1, 'a long pause refills to the burst, not beyond');
    });
    it('should not refill partially before an interval has passed', () => {
      const { store, advance } = clocked();
      const policy = { burst: 1, perSecond: 1 };
      store.take('a', policy);
      advance(999);
      const refused = store.take('a', policy);
      assert.equal(refused.allowed, false);
      assert.equal(refused.retryAfterMs, 1);
    });
    it('should keep clients apart', () => {
      const { store } = clocked();
      const policy = { burst: 1, perSecond: 1 };
      assert.equal(store.take('a', policy).allowed, true);
      assert.equal(store.take('a', policy).allowed, false);
      assert.equal(store.take('b', policy).allowed, true);
    });
  });

  describe('when many distinct clients arrive', () => {
    it('should never track more than maxKeys', () => {
      const { store } = clocked({ maxKeys: 100 });
      const policy = { burst: 10, perSecond: 1 };
      for (let i = 0; i < 5_000; i++) {
        store.take(`client-${i}`, policy);
        assert.ok(store.size <= 100, `size ${store.size} after ${i + 1} clients`);
      }
      assert.equal(store.size, 100);
    });
    it('should forget clients whose bucket has refilled', () => {
      const { store, advance } = clocked();
      const policy = { burst: 2, perSecond: 100 };
      for (let i = 0; i < 1_000; i++) store.take(`client-${i}`, policy);
      assert.equal(store.size, 1_000);
      advance(20); // every bucket is full again after burst / per_second = 20 ms
      for (let i = 0; i < 600; i++) store.take('steady', policy);
      assert.equal(store.size, 1, 'only the active client is left');
    });
    it('should keep a drained client while its bucket refills', () => {
      const { store, advance } = clocked();
      const policy = { burst: 1, perSecond: 1 };
      store.take('drained', policy);
      advance(500);
      for (let i = 0; i < 10; i++) store.take(`other-${i}`, policy);
      assert.equal(store.take('drained', policy).allowed, false, 'eviction never hands a drained client a new bucket early');
    });
  });

  describe('when constructed with a bad maxKeys', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      it(`should throw a RangeError for ${bad}`, () => {
        assert.throws(() => new MemoryStore({ maxKeys: bad }), RangeError);
      });
    }
  });
});
