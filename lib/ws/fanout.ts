/**
 * Fan-out in slices (issue 26): one event published to many local subscribers (WebSocket sessions'
 * `subscribe(topic)`, GraphQL subscriptions) used to be delivered to all of them in one turn of the
 * event loop: 20k GraphQL subscriptions and 5 `addBook` mutations made 97,645 frames in a 7.0 s stall,
 * and `/ws/chat` fan-out held `/health` 6.9 s. The pub/sub wakes every subscriber at once (cheap), but
 * what each then does (execute the GraphQL selection, encode, write its frame) is admitted here
 * DEFAULT_DELIVERY_SLICE at a time per turn of the loop: past the slice, the next deliveries wait for a
 * `setImmediate`, so timers and I/O (a `/health` request) are served between slices.
 *
 * Teardown goes through the same slices: a socket closing with its subscriptions releases them a slice
 * at a time, so 1,000 sockets dropping at once do not hold the loop either.
 *
 * The slicer is shared by every route of the process, so fairness holds across routes and topics.
 * It wraps a PubSub's iterators only: the pub/sub itself (lib/pubsub/) is untouched.
 */
import type { PubSub } from '../pubsub/memory.js';

/** Deliveries (or releases) admitted per turn of the event loop before yielding: 256. */
export const DEFAULT_DELIVERY_SLICE = 256;

const DONE: IteratorResult<unknown> = Object.freeze({ value: undefined, done: true });

/** Admits up to `slice` units of work per turn of the event loop; the rest wait for the next turn, in order. */
export class DeliverySlicer {
  readonly slice: number;
  #budget: number;
  #waiting: (() => void)[] = [];
  #head = 0;
  #scheduled = false;

  constructor(slice: number = DEFAULT_DELIVERY_SLICE) {
    if (!Number.isInteger(slice) || slice < 1) throw new TypeError(`slice must be a positive integer, got ${String(slice)}`);
    this.slice = slice;
    this.#budget = slice;
  }

  /** Work waiting for a later turn. */
  get waiting(): number {
    return this.#waiting.length - this.#head;
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
    // setImmediate runs after the loop's I/O phase; one scheduled from within it runs on the next turn.
    setImmediate(this.#turn);
  }

  readonly #turn = (): void => {
    this.#scheduled = false;
    this.#budget = this.slice;
    while (this.#budget > 0 && this.#head < this.#waiting.length) {
      this.#budget--;
      this.#waiting[this.#head++]!();
    }
    if (this.#head === this.#waiting.length) {
      this.#waiting = [];
      this.#head = 0;
    }
    if (this.waiting > 0 || this.#budget < this.slice) this.#schedule();
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
