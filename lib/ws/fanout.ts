/**
 * Fan-out in slices (issue 26): one event published to many local subscribers (WebSocket sessions'
 * `subscribe(topic)`, GraphQL subscriptions) used to be delivered to all of them in one turn of the
 * event loop: 20k GraphQL subscriptions and 5 `addBook` mutations made 97,645 frames in a 7.0 s stall,
 * and `/ws/chat` fan-out held `/health` 6.9 s. The pub/sub wakes every subscriber at once (cheap), but
 * what each then does (execute the GraphQL selection, encode, write its frame) is admitted here a
 * slice at a time per turn of the loop (DEFAULT_DELIVERY_SLICE at first, then adapted so a turn takes
 * about DELIVERY_TURN_TARGET_MS): past the slice, the next deliveries wait for a `setImmediate`, so
 * timers and I/O (a `/health` request) are served between slices.
 *
 * Teardown goes through the same slices: a socket closing with its subscriptions releases them a slice
 * at a time, so 1,000 sockets dropping at once do not hold the loop either.
 *
 * The slicer is shared by every route of the process, so fairness holds across routes and topics.
 * It wraps a PubSub's iterators only: the pub/sub itself (lib/pubsub/) is untouched.
 */
import type { PubSub } from '../pubsub/memory.js';

/** Deliveries (or releases) admitted in the first turn of the event loop before yielding: 256. */
export const DEFAULT_DELIVERY_SLICE = 256;
/**
 * Target length of one turn of the event loop while deliveries wait, ms: 10. The slice adapts to it
 * within a burst of deliveries: when a turn took longer (deliveries that each execute a GraphQL
 * selection, or a loaded machine) the next slice shrinks in proportion, when it took less than half
 * it doubles (between MIN_DELIVERY_SLICE and MAX_DELIVERY_SLICE), so cheap deliveries (one WebSocket
 * frame) are not held to the pace of expensive ones. Once nothing waits, the slice is back to its start.
 */
export const DELIVERY_TURN_TARGET_MS = 25;
/** Smallest adaptive slice: 16 deliveries per turn. */
export const MIN_DELIVERY_SLICE = 16;
/** Largest adaptive slice: 2048 deliveries per turn. */
export const MAX_DELIVERY_SLICE = 2048;

const DONE: IteratorResult<unknown> = Object.freeze({ value: undefined, done: true });

/**
 * Admits up to `slice` units of work per turn of the event loop; the rest wait for the next turn, in
 * order. The slice adapts to how long the turns take (DELIVERY_TURN_TARGET_MS).
 */
export class DeliverySlicer {
  /** The current slice (starts at the constructor's `slice`). */
  slice: number;
  readonly #initial: number;
  readonly #adaptive: boolean;
  #budget: number;
  #waiting: (() => void)[] = [];
  #drainWaiters: (() => void)[] = [];
  #head = 0;
  #scheduled = false;
  #turnStart = 0;

  /** `adaptive: false` keeps `slice` fixed (tests). */
  constructor(slice: number = DEFAULT_DELIVERY_SLICE, { adaptive = true }: { adaptive?: boolean } = {}) {
    if (!Number.isInteger(slice) || slice < 1) throw new TypeError(`slice must be a positive integer, got ${String(slice)}`);
    this.slice = slice;
    this.#initial = slice;
    this.#budget = slice;
    this.#adaptive = adaptive;
  }

  /** Work waiting for a later turn. */
  get waiting(): number {
    return this.#waiting.length - this.#head;
  }

  /**
   * `undefined` when deliveries keep pace (none waits, this turn's slice is not spent); else a promise
   * resolved on the first turn that follows a turn whose slice was not spent. WebSocket sessions read their next message only then: a client publishing faster than
   * the fan-out delivers is held back by TCP (its session stops reading), instead of its events piling
   * up in every subscriber's queue until the pub/sub ends the subscriptions (`maxQueued`).
   */
  drained(): Promise<void> | undefined {
    if (this.waiting === 0 && this.#budget > 0) return undefined;
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  /** `undefined` when the work may run now, else a promise that resolves on the turn it may. */
  admit(): Promise<void> | undefined {
    this.#schedule();
    if (this.#budget > 0 && this.waiting === 0) {
      this.#budget--;
      return undefined;
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#turnStart = performance.now();
    // setImmediate runs after the loop's I/O phase; one scheduled from within it runs on the next turn.
    setImmediate(this.#turn);
  }

  readonly #turn = (): void => {
    this.#scheduled = false;
    // The turn before did not spend its slice: deliveries have caught up with the events.
    const caughtUp = this.#budget > 0 && this.waiting === 0;
    if (this.#adaptive && this.#budget === 0) {
      // The whole slice was used: how long did that turn of the loop take?
      const took = performance.now() - this.#turnStart;
      if (took > DELIVERY_TURN_TARGET_MS) this.slice = Math.max(MIN_DELIVERY_SLICE, Math.floor((this.slice * DELIVERY_TURN_TARGET_MS) / took));
      else if (took < DELIVERY_TURN_TARGET_MS / 2) this.slice = Math.min(MAX_DELIVERY_SLICE, this.slice * 2);
    } else if (this.#adaptive && this.waiting === 0) {
      // The burst is over: the next one starts from the initial slice, not from this one's pace.
      this.slice = this.#initial;
    }
    this.#budget = this.slice;
    const waited = this.waiting > 0;
    while (this.#budget > 0 && this.#head < this.#waiting.length) {
      this.#budget--;
      this.#waiting[this.#head++]!();
    }
    if (this.#head === this.#waiting.length) {
      this.#waiting = [];
      this.#head = 0;
    }
    if (caughtUp && this.#drainWaiters.length > 0) {
      const drained = this.#drainWaiters;
      this.#drainWaiters = [];
      for (const resolve of drained) resolve();
    }
    if (waited || this.waiting > 0 || this.#drainWaiters.length > 0) this.#schedule();
  };
}

/** The process-wide slicer of WebSocket and GraphQL deliveries. */
export const deliveries = new DeliverySlicer();

/** `events` whose values and release pass through `slicer` (see the module comment). */
export function slicedEvents<T>(events: AsyncIterator<T>, slicer: DeliverySlicer = deliveries): AsyncIterableIterator<T> {
  let ended = false;
  const release = (): Promise<IteratorResult<T>> => (events.return ? events.return() : Promise.resolve(DONE as IteratorResult<T>));
  return {
    next(): Promise<IteratorResult<T>> {
      if (ended) return Promise.resolve(DONE as IteratorResult<T>);
      return events.next().then((result) => {
        if (result.done) return result;
        const wait = slicer.admit();
        return wait ? wait.then(() => (ended ? (DONE as IteratorResult<T>) : result)) : result;
      });
    },
    return(): Promise<IteratorResult<T>> {
      ended = true;
      const wait = slicer.admit();
      return wait ? wait.then(release) : release();
    },
    throw(err?: unknown): Promise<IteratorResult<T>> {
      ended = true;
      void release();
      return Promise.reject(err);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/** Marks a PubSub already wrapped by slicedPubSub (wrapping twice would admit each delivery twice). */
const SLICED = Symbol('keel.slicedPubSub');

/**
 * `pubsub` with every subscription's deliveries and release sliced: publish and listenerCount are the
 * pub/sub's own (so its `listenerCount` still counts subscriptions).
 */
export function slicedPubSub(pubsub: PubSub, slicer: DeliverySlicer = deliveries): PubSub {
  if ((pubsub as { [SLICED]?: boolean })[SLICED]) return pubsub;
  return {
    [SLICED]: true,
    publish: (topic, payload) => pubsub.publish(topic, payload),
    subscribe: (topic) => slicedEvents(pubsub.subscribe(topic), slicer),
    listenerCount: (topic) => pubsub.listenerCount(topic),
  } as PubSub;
}
