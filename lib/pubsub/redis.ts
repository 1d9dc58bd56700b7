/**
 * Events between instances over Redis PUBLISH / SUBSCRIBE (ioredis, an optional peer dependency
 * loaded on first use). One connection publishes, one subscribes; a Redis channel is subscribed while
 * at least one local listener wants its topic, and ioredis subscribes again after a reconnect.
 *
 * When Redis is down: `passOnStoreError: true` (the default) delivers the event to this instance's own
 * subscribers and logs a warning (fail open: events are best-effort notifications);
 * `passOnStoreError: false` rejects `publish()` with PubSubUnavailableError (fail closed: a mutation that
 * publishes then reports the error). docs/scaling.md.
 */
import { pino, type Logger } from 'pino';
import { HttpError } from '../errors.js';
import { missingPackages, missingPackagesError } from '../packages.js';
import { checkTopic, deliver, encodePayload, type PubSub, type PubSubListener, type Unsubscribe } from './memory.js';

/** Prefix of every channel: 'keel:ps:'. */
export const DEFAULT_PUBSUB_PREFIX = 'keel:ps:';

export interface RedisPubSubOptions {
  /** Redis URL (`redis://127.0.0.1:6379`) or ioredis options. */
  connection: string | Record<string, unknown>;
  /** Channel prefix; instances that share it share events. Default {@link DEFAULT_PUBSUB_PREFIX} ('keel:ps:'). */
  prefix?: string;
  /** When Redis is unreachable: true delivers locally only and logs (default), false rejects publish(). */
  passOnStoreError?: boolean;
  /** Where connection failures are logged. Default: pino at warn. */
  logger?: Logger;
}

/** publish() could not reach Redis (`passOnStoreError: false`): 503 if it reaches a client. */
export class PubSubUnavailableError extends HttpError {
  constructor(topic: string, cause: unknown) {
    super(503, 'The event bus is unavailable; try again later', { code: 'KEEL_SERVICE_UNAVAILABLE', headers: { 'Retry-After': '1' }, expected: true, cause });
    this.topic = topic;
  }
  readonly topic: string;
}

/* eslint-disable @typescript-eslint/no-explicit-any -- ioredis is optional: its types stay out of keel's declarations */
/**
 * @example
 * import { createApp, RedisPubSub } from 'keel';
 * const pubsub = new RedisPubSub({ connection: process.env.REDIS_URL! });
 * const app = createApp(config, setup, { pubsub });
 */
export class RedisPubSub implements PubSub {
  readonly #options: RedisPubSubOptions;
  readonly #prefix: string;
  readonly #logger: Logger;
  readonly #topics = new Map<string, Set<PubSubListener>>();
  #clients: Promise<{ pub: any; sub: any }> | undefined;
  #closed = false;

  constructor(options: RedisPubSubOptions) {
    const c = options?.connection;
    if (!(typeof c === 'string' && /^rediss?:\/\//.test(c)) && !(typeof c === 'object' && c !== null)) {
      throw new TypeError(`RedisPubSub needs connection: a redis:// URL or ioredis options, got ${JSON.stringify(c)}`);
    }
    if (options.prefix !== undefined && (typeof options.prefix !== 'string' || options.prefix === '')) throw new TypeError('RedisPubSub prefix must be a non-empty string');
    if (options.passOnStoreError !== undefined && typeof options.passOnStoreError !== 'boolean') throw new TypeError('RedisPubSub passOnStoreError must be true or false');
    this.#options = options;
    this.#prefix = options.prefix ?? DEFAULT_PUBSUB_PREFIX;
    this.#logger = options.logger ?? pino({ level: 'warn', base: { name: 'keel.pubsub' } });
  }

  #connect(): Promise<{ pub: any; sub: any }> {
    this.#clients ??= (async () => {
      const missing = missingPackages(['ioredis@6']);
      if (missing.length) throw missingPackagesError('RedisPubSub', missing);
      const mod: any = await import('ioredis');
      const Redis = mod.Redis ?? mod.default;
      const make = (extra: Record<string, unknown>) => {
        const c = this.#options.connection;
        const client = typeof c === 'string' ? new Redis(c, extra) : new Redis({ ...c, ...extra });
        client.on('error', (err: Error) => this.#logger.debug({ err }, 'pubsub: redis connection error'));
        return client;
      };
      // Publishing fails fast while Redis is down; subscribing waits and resubscribes on reconnect.
      const pub = make({ enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      const sub = make({ maxRetriesPerRequest: null });
      sub.on('message', (channel: string, text: string) => {
        const listeners = this.#topics.get(channel.slice(this.#prefix.length));
        if (listeners) deliver(listeners, text, (err) => this.#logger.error({ err, channel }, 'pubsub listener failed'));
      });
      return { pub, sub };
    })();
    return this.#clients;
  }

  async publish(topic: string, payload: unknown): Promise<void> {
    checkTopic(topic);
    const text = encodePayload(topic, payload);
    try {
      const { pub } = await this.#connect();
      await pub.publish(this.#prefix + topic, text);
    } catch (err) {
      if (this.#options.passOnStoreError === false) throw new PubSubUnavailableError(topic, err);
      this.#logger.warn({ err, topic }, 'pubsub: redis unavailable; event delivered to this instance only (passOnStoreError)');
      const listeners = this.#topics.get(topic);
      if (listeners) deliver(listeners, text, (e) => this.#logger.error({ err: e, topic }, 'pubsub listener failed'));
    }
  }

  async subscribe(topic: string, listener: PubSubListener): Promise<Unsubscribe> {
    checkTopic(topic);
    if (typeof listener !== 'function') throw new TypeError('subscribe(topic, listener) expects a function');
    if (this.#closed) throw new Error('RedisPubSub is closed');
    const { sub } = await this.#connect();
    let set = this.#topics.get(topic);
    const first = !set;
    if (!set) this.#topics.set(topic, (set = new Set()));
    const own: PubSubListener = (p) => listener(p);
    set.add(own);
    if (first) {
      const subscribed = sub.subscribe(this.#prefix + topic);
      // Connected: wait until Redis confirms, so an event published next is not missed. Not connected:
      // ioredis sends SUBSCRIBE when it reconnects; local events arrive meanwhile.
      if (sub.status === 'ready') await subscribed;
      else subscribed.catch((err: unknown) => this.#logger.warn({ err, topic }, 'pubsub: subscribe failed'));
    }
    let active = true;
    return async () => {
      if (!active) return;
      active = false;
      set.delete(own);
      if (set.size === 0 && this.#topics.get(topic) === set) {
        this.#topics.delete(topic);
        await sub.unsubscribe(this.#prefix + topic).catch(() => undefined);
      }
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#topics.clear();
    if (!this.#clients) return;
    const { pub, sub } = await this.#clients.catch(() => ({ pub: undefined, sub: undefined }));
    pub?.disconnect();
    sub?.disconnect();
  }
}
