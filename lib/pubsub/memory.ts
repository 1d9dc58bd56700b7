/**
 * Publish / subscribe for events that must reach every instance: GraphQL subscriptions (the `full`
 * schema's bookAdded, SDL routes with `subscriptionEvents`) and WebSocket broadcasts (`app.publish()`,
 * `app.pubsub.subscribe()` in an `app.ws()` handler). `MemoryPubSub` (one process) is the default;
 * `RedisPubSub` (./redis.ts) carries the same calls over Redis PUBLISH / SUBSCRIBE.
 *
 * Payloads are JSON values. Both adapters hand subscribers a JSON copy, so code behaves the same
 * whichever one is configured. Delivery is at most once: Redis pub/sub keeps nothing for a subscriber
 * that is not connected (use a background job for work that must not be lost).
 */
import { EventEmitter } from 'node:events';

export type PubSubListener = (payload: unknown) => void;

/** Stop one subscription (idempotent). */
export type Unsubscribe = () => Promise<void>;

export interface PubSub {
  /** Send `payload` (a JSON value) to every subscriber of `topic`. */
  publish(topic: string, payload: unknown): Promise<void>;
  /** Call `listener` with each payload published on `topic` from now on; resolves once the subscription is in place. */
  subscribe(topic: string, listener: PubSubListener): Promise<Unsubscribe>;
  /** Release connections (RedisPubSub). */
  close?(): Promise<void>;
}

/** Largest topic name, characters. */
export const MAX_TOPIC_LENGTH = 512;

export function checkTopic(topic: unknown): asserts topic is string {
  if (typeof topic !== 'string' || topic.length === 0 || topic.length > MAX_TOPIC_LENGTH) {
    throw new TypeError(`A pub/sub topic must be a string of 1 to ${MAX_TOPIC_LENGTH} characters, got ${JSON.stringify(topic)?.slice(0, 80)}`);
  }
}

/** The payload as JSON text; a value JSON cannot carry is a TypeError at publish. */
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

/** Call each listener; one that throws does not stop the others. */
export function deliver(listeners: Iterable<PubSubListener>, text: string, onError: (err: unknown) => void): void {
  for (const listener of [...listeners]) {
    try {
      listener(JSON.parse(text));
    } catch (err) {
      onError(err);
    }
  }
}

/**
 * Events inside one process (the default of every App).
 *
 * @example
 * const pubsub = new MemoryPubSub();
 * const off = await pubsub.subscribe('chat', (m) => console.log(m));
 * await pubsub.publish('chat', { text: 'hi' });
 * await off();
 */
export class MemoryPubSub implements PubSub {
  readonly #topics = new Map<string, Set<PubSubListener>>();

  async publish(topic: string, payload: unknown): Promise<void> {
    checkTopic(topic);
    const text = encodePayload(topic, payload);
    const listeners = this.#topics.get(topic);
    if (listeners) deliver(listeners, text, (err) => queueMicrotask(() => { throw err; }));
  }

  async subscribe(topic: string, listener: PubSubListener): Promise<Unsubscribe> {
    checkTopic(topic);
    if (typeof listener !== 'function') throw new TypeError('subscribe(topic, listener) expects a function');
    let set = this.#topics.get(topic);
    if (!set) this.#topics.set(topic, (set = new Set()));
    // Each call is its own subscription, even with the same function.
    const own: PubSubListener = (p) => listener(p);
    set.add(own);
    return async () => {
      set.delete(own);
      if (set.size === 0 && this.#topics.get(topic) === set) this.#topics.delete(topic);
    };
  }

  /** Topics with at least one subscriber (tests, diagnostics). */
  get topicCount(): number {
    return this.#topics.size;
  }
}

/** Events buffered per subscriber of `pubsubIterator` before the oldest are dropped (a slow client). */
export const DEFAULT_ITERATOR_BUFFER = 256;

/**
 * The events of `topic` as an async iterator (GraphQL subscription resolvers). Subscribes at once; `return()` (the client's `complete`, or the connection closing) unsubscribes. A
 * consumer slower than the events keeps the newest `buffer` of them.
 */
export function pubsubIterator<T = unknown>(pubsub: PubSub, topic: string, buffer = DEFAULT_ITERATOR_BUFFER): AsyncIterableIterator<T> {
  const queue: T[] = [];
  const events = new EventEmitter();
  let unsubscribe: Promise<Unsubscribe> | undefined;
  let done = false;
  const start = () => (unsubscribe ??= pubsub.subscribe(topic, (payload) => {
    if (done) return;
    queue.push(payload as T);
    if (queue.length > buffer) queue.shift();
    events.emit('event');
  }));
  const finish = async (): Promise<IteratorResult<T>> => {
    done = true;
    events.emit('event');
    if (unsubscribe) await (await unsubscribe.catch(() => async () => undefined))();
    return { value: undefined, done: true };
  };
  // Subscribed now, not at the first next(): an event published right after the subscription started is not missed.
  void start().catch(() => undefined);
  return {
    async next(): Promise<IteratorResult<T>> {
      await start();
      while (!done && queue.length === 0) await new Promise((r) => events.once('event', r));
      if (queue.length > 0) return { value: queue.shift()!, done: false };
      return { value: undefined, done: true };
    },
    return: finish,
    throw: async (err: unknown) => {
      await finish();
      throw err;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
