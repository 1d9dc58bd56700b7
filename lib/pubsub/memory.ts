/**
 * Publish / subscribe for events that must reach every subscriber: GraphQL subscriptions (the built-in
 * schema's `bookAdded`, SDL routes with `subscriptionEvents`) and WebSocket broadcasts (`app.publish()`,
 * `app.pubsub.subscribe()` in an `app.ws()` handler). `MemoryPubSub` (one process) is every App's
 * default; `RedisPubSub` (./redis.ts) implements the same interface over Redis PUBLISH / SUBSCRIBE, so
 * an event published on one instance reaches subscribers on every instance (docs/scaling.md).
 *
 * Two properties keep a server with many subscribers bounded:
 * - `return()` on a subscription's iterator releases it *at once* (its listener and queue), even while
 *   a `next()` is waiting for an event. An `async function*` wrapped around `events.on()` does not: a
 *   generator suspended in `await` handles `return()` only after the next event arrives, so every
 *   completed or dropped subscription kept its memory until the topic fired again.
 * - a subscriber that does not read (a client that stopped reading its socket) holds at most
 *   `maxQueued` events; beyond that its subscription ends (the client gets `complete`) instead of
 *   queueing without bound.
 */
import { observe } from '../observability/observe.js';
import type { JobTracing } from '../observability/job-spans.js';

/** Events kept for one subscriber that has not read them yet; one more ends its subscription. */
export const DEFAULT_MAX_QUEUED_EVENTS = 1000;

/** What GraphQL subscriptions need from a publish / subscribe system. */
export interface PubSub {
  /** Deliver `payload` to every current subscriber of `topic`. */
  publish(topic: string, payload: unknown): void | Promise<void>;
  /**
   * The events of `topic` from now on. The iterator's `return()` must release the subscription
   * promptly (resolving a pending `next()` with `done`), as graphql-ws calls it on `complete` and on close.
   */
  subscribe(topic: string): AsyncIterableIterator<unknown>;
  /** Open subscriptions of `topic` (this instance's). */
  listenerCount(topic: string): number;
  /** Spans of the events (an App with `opentelemetry` on calls it when its router is built); undefined: none. */
  traceWith?(tracing: JobTracing | undefined): void;
}

export interface MemoryPubSubOptions {
  /** Unread events kept per subscriber. Default DEFAULT_MAX_QUEUED_EVENTS (1000). */
  maxQueued?: number;
}

const DONE: IteratorResult<unknown> = Object.freeze({ value: undefined, done: true });

/**
 * In-process PubSub: a Set of listeners per topic. Not an EventEmitter: removing one of n listeners
 * from an emitter's array costs O(n) (a search, then a splice or shift), so releasing n subscriptions
 * cost O(n²): 10,000 subscriptions released oldest first took 39 s, and closing 1,000 loaded
 * subscriptions stalled the example server 4.3 s (issue 26). A Set removes one in O(1).
 *
 * @example
 * const pubsub = new MemoryPubSub();
 * const events = pubsub.subscribe('bookAdded');
 * pubsub.publish('bookAdded', { id: 'b4' });
 * await events.next(); // { value: { id: 'b4' }, done: false }
 * await events.return(); // listener removed: pubsub.listenerCount('bookAdded') === 0
 */
export class MemoryPubSub implements PubSub {
  readonly #topics = new Map<string, Set<(payload: unknown) => void>>();
  readonly #maxQueued: number;
  #tracing: JobTracing | undefined;

  constructor(options: MemoryPubSubOptions = {}) {
    this.#maxQueued = options.maxQueued ?? DEFAULT_MAX_QUEUED_EVENTS;
    if (!Number.isInteger(this.#maxQueued) || this.#maxQueued < 1) {
      throw new TypeError(`maxQueued must be a positive integer, got ${String(options.maxQueued)}`);
    }
  }

  traceWith(tracing: JobTracing | undefined): void {
    this.#tracing = tracing;
  }

  publish(topic: string, payload: unknown): void {
    // Spans on: a PRODUCER span around the delivery (lib/observability/job-spans.ts).
    if (!this.#tracing) return this.#deliver(topic, payload);
    const send = this.#tracing.produce({ name: topic, system: 'keel', event: true });
    try {
      this.#deliver(topic, payload);
    } finally {
      send.end();
    }
  }

  #deliver(topic: string, payload: unknown): void {
    const listeners = this.#topics.get(topic);
    // A copy, as an emitter does: a subscriber added while delivering gets the next event, not this one.
    if (listeners) for (const listener of [...listeners]) listener(payload);
  }

  listenerCount(topic: string): number {
    return this.#topics.get(topic)?.size ?? 0;
  }

  subscribe(topic: string): AsyncIterableIterator<unknown> {
    const topics = this.#topics;
    const maxQueued = this.#maxQueued;
    const queue: unknown[] = [];
    let waiting: ((result: IteratorResult<unknown>) => void) | undefined;
    let listening = true;

    const stop = () => {
      if (!listening) return;
      listening = false;
      const listeners = topics.get(topic);
      listeners?.delete(listener);
      if (listeners?.size === 0) topics.delete(topic);
    };
    function listener(payload: unknown): void {
      if (!listening) return;
      if (waiting) {
        const resolve = waiting;
        waiting = undefined;
        resolve({ value: payload, done: false });
        observe.event('delivered');
      } else if (queue.length < maxQueued) {
        queue.push(payload);
        observe.event('delivered');
      } else {
        // A subscriber this far behind is not reading: end it after what is queued.
        stop();
        observe.event('dropped');
      }
    }
    const end = (): Promise<IteratorResult<unknown>> => {
      stop();
      queue.length = 0;
      if (waiting) {
        waiting(DONE);
        waiting = undefined;
      }
      return Promise.resolve(DONE);
    };
    let listeners = topics.get(topic);
    if (!listeners) topics.set(topic, (listeners = new Set()));
    listeners.add(listener);
    return {
      next(): Promise<IteratorResult<unknown>> {
        if (queue.length > 0) return Promise.resolve({ value: queue.shift(), done: false });
        if (!listening) return Promise.resolve(DONE);
        return new Promise((resolve) => { waiting = resolve; });
      },
      return: end,
      throw(err?: unknown): Promise<IteratorResult<unknown>> {
        void end();
        return Promise.reject(err);
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }
}

/** Largest topic name, characters. */
export const MAX_TOPIC_LENGTH = 512;

/** A topic is a string of 1 to MAX_TOPIC_LENGTH characters (TypeError otherwise). */
export function checkTopic(topic: unknown): asserts topic is string {
  if (typeof topic !== 'string' || topic.length === 0 || topic.length > MAX_TOPIC_LENGTH) {
    throw new TypeError(`A pub/sub topic must be a string of 1 to ${MAX_TOPIC_LENGTH} characters, got ${String(JSON.stringify(topic)).slice(0, 80)}`);
  }
}

/** The payload as JSON text, for adapters that cross processes; a value JSON cannot carry is a TypeError. */
export function encodePayload(topic: string, payload: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(payload);
  } catch (err) {
    throw new TypeError(`The payload published on "${topic}" must be a JSON value: ${(err as Error).message}`);
  }
  if (text === undefined) throw new TypeError(`The payload published on "${topic}" must be a JSON value, got ${typeof payload}`);
  return text;
}
