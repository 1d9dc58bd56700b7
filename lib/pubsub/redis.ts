/**
 * Events between instances over Redis PUBLISH / SUBSCRIBE (ioredis, an optional peer dependency
 * loaded on first use). One connection publishes, one subscribes. Subscribers of this instance are
 * served by an in-process MemoryPubSub (same bounds: `return()` releases at once, a subscriber that
 * does not read ends after `maxQueued` events); a Redis channel is subscribed while this instance has
 * at least one subscriber of its topic, and ioredis subscribes again after a reconnect.
 *
 * Delivery is at most once: Redis keeps nothing for an instance that is not connected. Payloads cross
 * as JSON. When Redis is down: `passOnStoreError: true` (the default) delivers the event to this
 * instance's own subscribers and logs a warning (fail open: events are notifications);
 * `passOnStoreError: false` rejects `publish()` with PubSubUnavailableError (fail closed: the
 * built-in schema's `addBook` then reports the error). docs/scaling.md.
 *
 * Honest around outages (issue 28): this instance's subscribers get each event it publishes exactly
 * once, straight from publish() (its copy coming back from Redis is recognised by the instance id in
 * the message and skipped), so a publish that timed out and ran late cannot deliver twice here; a
 * publish answered as failed is delivered nowhere (a deadline checked in Redis, ./redis-publish.ts);
 * right after a reconnect a publish waits for the subscribers of its topic to be back, or fails.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { pino, type Logger } from 'pino';
import { HttpError } from '../http/errors.js';
import { missingPackages, missingPackagesError } from '../ops/packages.js';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from '../ops/redis-policy.js';
import { connectionProblem, createRedisClient, isClusterConnection, pingSlotsOf, type RedisConnection } from '../ops/redis-connection.js';
import { logBase } from '../ops/log-level.js';
import { errorText, StoreHealth, type StoreStatus } from '../ops/store-health.js';
import { raceStarvationAware, starved, watchLoop } from '../ops/loop-stall.js';
import { checkTopic, encodePayload, MemoryPubSub, type PubSub } from './memory.js';
import { observe } from '../observability/observe.js';
import type { JobTracing, TraceCarrier } from '../observability/job-spans.js';
import { PUBLISH_BEFORE_SCRIPT, PUBLISH_DEADLINE_MARGIN_MS, Receivers, RedisClock, SHARD_NUMSUB_SCRIPT, SPUBLISH_BEFORE_SCRIPT } from './redis-publish.js';

/**
 * Messages keel publishes: `k1 <instance id> <JSON payload>`. A message without the tag (another
 * publisher, an older keel) is taken as JSON payload, as before. With spans on, the instance id is
 * followed by `|` and the publisher's trace context (URI-encoded JSON), which an older keel, comparing
 * the whole token with its own id, reads as another instance's event, as it is.
 */
const TAG = 'k1 ';

/** The publisher's trace context from a message's tag; undefined when absent or unreadable (a new trace then). */
function traceCarrier(token: string | undefined): unknown {
  if (!token) return undefined;
  try {
    return JSON.parse(decodeURIComponent(token));
  } catch {
    return undefined;
  }
}

/** Prefix of every channel: 'keel:ps:'. */
export const DEFAULT_PUBSUB_PREFIX = 'keel:ps:';

/** Longest wait for Redis at publish before passOnStoreError decides: 500 ms (DEFAULT_REDIS_COMMAND_TIMEOUT_MS). */
export const PUBLISH_TIMEOUT_MS = DEFAULT_REDIS_COMMAND_TIMEOUT_MS;

export interface RedisPubSubOptions {
  /**
   * Redis URL (`redis://127.0.0.1:6379`), ioredis options (`{ host, port, password, tls }`), or a Redis
   * Cluster's seed nodes (`{ cluster: ['10.0.0.1:6379', …], clusterOptions }`: sharded pub/sub,
   * SPUBLISH / SSUBSCRIBE, Redis ≥ 7; docs/scaling.md#redis-cluster).
   */
  connection: RedisConnection;
  /** Channel prefix; instances that share it share events. Default {@link DEFAULT_PUBSUB_PREFIX} ('keel:ps:'). */
  prefix?: string;
  /** When Redis is unreachable: true delivers to this instance only and logs (default), false rejects publish(). */
  passOnStoreError?: boolean;
  /** Unread events kept per local subscriber (MemoryPubSub maxQueued). Default 1000. */
  maxQueued?: number;
  /** Where Redis failures (and recoveries) are logged. Default: the App's logger when given to createApp, else pino at info. */
  logger?: Logger;
}

/** publish() could not reach Redis (`passOnStoreError: false`): a 503 problem if it reaches a client. */
export class PubSubUnavailableError extends HttpError {
  readonly topic: string;
  constructor(topic: string, cause: unknown) {
    super(503, 'The event bus is unavailable; try again later', { code: 'KEEL_SERVICE_UNAVAILABLE', extensions: { code: 'KEEL_SERVICE_UNAVAILABLE' }, headers: { 'Retry-After': '1' }, expected: true, cause });
    this.topic = topic;
  }
}

/* eslint-disable @typescript-eslint/no-explicit-any -- ioredis is optional: its types stay out of keel's declarations */
type Client = any;

/**
 * A PubSub shared by every instance that uses the same Redis and prefix.
 *
 * @example
 * import { createApp, RedisPubSub } from 'keel';
 * const pubsub = new RedisPubSub({ connection: process.env.REDIS_URL! });
 * const app = createApp(config, setup, { pubsub });
 */
export class RedisPubSub implements PubSub {
  readonly #options: RedisPubSubOptions;
  readonly #prefix: string;
  #logger: Logger;
  readonly #ownLogger: boolean;
  readonly #local: MemoryPubSub;
  /** Topics whose channel this instance subscribed, with the SUBSCRIBE in flight or done. */
  readonly #channels = new Map<string, Promise<unknown>>();
  #clients: Promise<{ pub: Client; sub: Client; clock: RedisClock }> | undefined;
  #closed = false;
  /** Tells this instance's messages from other instances' (a fresh id per RedisPubSub). */
  readonly #origin = randomUUID();
  #tracing: JobTracing | undefined;
  readonly #health: StoreHealth;
  readonly #receivers = new Receivers();
  #unwatch: (() => void) | undefined;
  /** Sharded pub/sub on a Redis Cluster (SPUBLISH / SSUBSCRIBE) instead of PUBLISH / SUBSCRIBE. */
  readonly #cluster: boolean;

  constructor(options: RedisPubSubOptions) {
    const c = options?.connection;
    const problem = connectionProblem(c);
    if (problem) throw new TypeError(`RedisPubSub needs connection: ${problem}, got ${JSON.stringify(c)}`);
    if (options.prefix !== undefined && (typeof options.prefix !== 'string' || options.prefix === '')) throw new TypeError(`RedisPubSub prefix must be a non-empty string, got ${JSON.stringify(options.prefix)}`);
    if (options.passOnStoreError !== undefined && typeof options.passOnStoreError !== 'boolean') throw new TypeError(`RedisPubSub passOnStoreError must be true or false, got ${JSON.stringify(options.passOnStoreError)}`);
    this.#options = options;
    this.#cluster = isClusterConnection(c);
    this.#prefix = options.prefix ?? DEFAULT_PUBSUB_PREFIX;
    // info: a store that logs "down" (warn) must log "back" (info) too.
    this.#logger = options.logger ?? pino({ level: 'info', base: logBase('keel.pubsub') });
    this.#ownLogger = options.logger !== undefined;
    this.#local = new MemoryPubSub({ maxQueued: options.maxQueued });
    this.#health = new StoreHealth(this.#logger, 'pubsub');
    // Back from a reconnect: subscriptions are being re-established everywhere (ioredis does it).
    this.#health.onChange((_state, _previous, reconnected) => {
      if (reconnected) this.#receivers.reconnected();
    });
  }

  /**
   * The state of Redis as this pub/sub sees it (readiness: `{ redis: 'up' }` when events cross instances).
   * The connections open on first use; asking opens them, so a readiness check does not wait for a publish.
   */
  status(): StoreStatus {
    if (!this.#clients && !this.#closed) this.#connect().catch((err: unknown) => this.#logger.warn({ err: errorText(err) }, 'pubsub: cannot connect'));
    return this.#health.status();
  }

  #connect(): Promise<{ pub: Client; sub: Client; clock: RedisClock }> {
    this.#clients ??= (async () => {
      const missing = missingPackages(['ioredis@6']);
      if (missing.length) throw missingPackagesError('RedisPubSub', missing);
      const mod: any = await import('ioredis');
      const make = (own: Record<string, unknown>, ownCluster?: Record<string, unknown>): Client => {
        // Bounded reconnects unless the user's connection options choose their own strategy.
        const client = createRedisClient(mod, this.#options.connection, own, ownCluster);
        client.on('error', (err: Error) => this.#logger.debug({ err: errorText(err) }, 'pubsub: redis connection error'));
        observe.redisClient(this, 'pubsub', client);
        return client;
      };
      // While Redis is down a publish fails after one reconnection attempt (or PUBLISH_TIMEOUT_MS); the
      // subscriber waits and resubscribes on reconnect. (Not enableOfflineQueue: false: the first
      // publish of a fresh instance would fail before the connection is up.)
      // No ioredis commandTimeout: after a stall of this process it would fire before the reply is read
      // and lose a publish that Redis made; keel bounds each command itself, starvation-aware.
      const pub = make({ maxRetriesPerRequest: 1 });
      // A cluster shards events by channel (SSUBSCRIBE on each channel's shard, one connection per shard).
      const sub = make({ maxRetriesPerRequest: null }, { shardedSubscribers: true });
      sub.on(this.#cluster ? 'smessage' : 'message', (channel: string, text: string) => this.#receive(channel.slice(this.#prefix.length), text));
      // In a cluster the channel is the script's key, so it runs on the channel's shard.
      pub.defineCommand('keelPublishBefore', this.#cluster ? { numberOfKeys: 1, lua: SPUBLISH_BEFORE_SCRIPT } : { numberOfKeys: 0, lua: PUBLISH_BEFORE_SCRIPT });
      pub.defineCommand('keelShardNumsub', { numberOfKeys: 1, lua: SHARD_NUMSUB_SCRIPT });
      // The shards of the channels this instance uses (any primary before the first): issue 47.
      const probe = () => this.#bounded(pingSlotsOf(pub, this.#neededKeys()), 'PING');
      this.#health.attach(pub, probe);
      observe.probe(this, pub, probe);
      this.#unwatch = watchLoop();
      this.#health.attach(sub);
      return { pub, sub, clock: new RedisClock(pub) };
    })();
    return this.#clients;
  }

  #receive(topic: string, text: string): void {
    let payload: unknown;
    let trace: string | undefined;
    try {
      if (text.startsWith(TAG)) {
        const space = text.indexOf(' ', TAG.length);
        let origin = text.slice(TAG.length, space);
        const bar = origin.indexOf('|');
        if (bar >= 0) [origin, trace] = [origin.slice(0, bar), origin.slice(bar + 1)];
        // This instance's own event: its subscribers had it from publish().
        if (origin === this.#origin) return;
        text = text.slice(space + 1);
      }
      payload = JSON.parse(text);
    } catch (err) {
      this.#logger.warn({ err, topic }, 'pubsub: message is not JSON; dropped');
      return;
    }
    if (this.#tracing) this.#tracing.consume(traceCarrier(trace), { name: topic, system: 'redis', event: true }, () => this.#local.publish(topic, payload));
    else this.#local.publish(topic, payload);
    this.#release(topic);
  }

  /** The App's logger, used when this RedisPubSub was made without `logger` (createApp hands it over). */
  useLogger(logger: Logger): void {
    if (this.#ownLogger) return;
    this.#logger = logger;
    this.#health.useLogger(logger);
  }

  /** Spans of the events: `publish <topic>` here, `process <topic>` where another instance receives it. */
  traceWith(tracing: JobTracing | undefined): void {
    this.#tracing = tracing;
  }

  /** Unsubscribe the channel once this instance has no subscriber of `topic` left. */
  #release(topic: string): void {
    if (this.#local.listenerCount(topic) > 0 || !this.#channels.has(topic)) return;
    this.#channels.delete(topic);
    void this.#connect().then(({ sub }) => (this.#cluster ? sub.sunsubscribe(this.#prefix + topic) : sub.unsubscribe(this.#prefix + topic))).catch(() => undefined);
  }

  /**
   * Publish to every instance. Resolves once Redis took the event (this instance's subscribers have it
   * then, once); fails within about PUBLISH_TIMEOUT_MS (RESUBSCRIBE_WAIT_MS right after a reconnect).
   */
  publish(topic: string, payload: unknown): Promise<void> {
    if (!this.#tracing) return this.#publish(topic, payload);
    const send = this.#tracing.produce({ name: topic, system: 'redis', event: true });
    return send.settle(this.#publish(topic, payload, send.carrier));
  }

  async #publish(topic: string, payload: unknown, trace?: TraceCarrier): Promise<void> {
    checkTopic(topic);
    const text = encodePayload(topic, payload);
    try {
      // Known away: fail at once (a chat loop awaiting each publish is not held up per message).
      if (!this.#health.available) throw new Error('Redis is unavailable (waiting for it to answer again)');
      const tag = trace && `|${encodeURIComponent(JSON.stringify(trace))}`;
      const started = performance.now();
      try {
        await this.#publishBefore(topic, text, Date.now() + PUBLISH_TIMEOUT_MS, tag);
      } catch (err) {
        // Past its deadline only because this process was starved: nothing was published, try once more.
        if (!(err instanceof NotPublished) || !starved(started, PUBLISH_TIMEOUT_MS)) throw err;
        await this.#publishBefore(topic, text, Date.now() + PUBLISH_TIMEOUT_MS, tag);
      }
      this.#health.commandSucceeded();
      observe.event('published');
    } catch (err) {
      if (this.#health.available && !(err instanceof ReceiversMissing)) this.#health.commandFailed(err);
      observe.storeError('pubsub', err);
      if (this.#options.passOnStoreError === false) {
        observe.event('refused');
        throw new PubSubUnavailableError(topic, err);
      }
      observe.event('local_only');
      this.#health.count('pubsub: redis unavailable; events delivered to this instance only (passOnStoreError)', { topic, reason: errorText(err) });
    }
    this.#local.publish(topic, JSON.parse(text));
  }

  /** PUBLISH unless Redis's clock passed `deadline` first; rejects at `deadline` at the latest. */
  async #publishBefore(topic: string, text: string, deadline: number, trace = ''): Promise<void> {
    const expected = this.#receivers.expected(topic);
    const end = expected ? Math.max(deadline, expected.until) : deadline;
    const wait = Math.max(0, end - Date.now());
    const attempt = (async () => {
      const { pub, clock } = await this.#connect();
      let budget = deadline;
      if (expected) {
        // Right after a reconnect: wait for the instances subscribed before (bounded), else report failure.
        for (;;) {
          // PUBSUB SHARDNUMSUB answers for its own node only: a script keyed by the channel runs on its shard.
          const n = this.#cluster ? await pub.keelShardNumsub(this.#prefix + topic) : ((await pub.pubsub('NUMSUB', this.#prefix + topic)) as [string, number])[1];
          if (Number(n) >= expected.count) break;
          if (Date.now() + 50 >= expected.until) throw new ReceiversMissing(topic, Number(n), expected.count);
          await new Promise((r) => setTimeout(r, 50));
        }
        budget = Math.max(deadline, Math.min(expected.until, Date.now() + PUBLISH_TIMEOUT_MS));
      }
      const redisDeadline = Math.floor(budget - PUBLISH_DEADLINE_MARGIN_MS + (await clock.offset()));
      const message = `${TAG}${this.#origin}${trace} ${text}`;
      if (this.#cluster) return this.#spublishBefore(pub, topic, message, redisDeadline, budget);
      const n = Number(await pub.keelPublishBefore(this.#prefix + topic, message, redisDeadline));
      if (n < 0) throw new NotPublished();
      this.#receivers.published(topic, n);
    })();
    // Extended once if this process was starved meanwhile: the reply may be waiting in the socket (lib/ops/loop-stall.ts).
    await raceStarvationAware(attempt, wait, () => new Error(`Redis did not take the event within ${wait} ms`), false);
  }

  /**
   * Cluster: SPUBLISH on the channel's shard. When the node serving the channel is not the one that took
   * this topic's last event (a failover, a migrated slot), the subscriptions are moving with it: the
   * script publishes only once as many subscribers as that event reached are there (issue 37: without
   * this, 1 event answered 200 was missed per failover or migration); they get until `budget`, else the
   * publish fails. While a slot migrates, the script (keyed by a channel no node holds as a key) is sent
   * to the importing node (ASK), where the subscribers are not yet: publishes fail until the slot is
   * handed over and they follow. After RESUBSCRIBE_WAIT_MS of that, the shard is taken as it is.
   */
  async #spublishBefore(pub: Client, topic: string, message: string, redisDeadline: number, budget: number): Promise<void> {
    for (;;) {
      // After RESUBSCRIBE_WAIT_MS of a moved shard without its subscribers, take it as it is (they left).
      const last = this.#receivers.movedLongAgo(topic) ? undefined : this.#receivers.last(topic);
      const [n, node, have] = ((await pub.keelPublishBefore(this.#prefix + topic, message, redisDeadline, last?.count ?? 0, last?.node ?? '')) as unknown[]).map((x, i) => (i === 1 ? String(x) : Number(x))) as [number, string, number];
      if (n === -1) throw new NotPublished();
      if (n >= 0) return this.#receivers.published(topic, n, node);
      this.#receivers.moved(topic);
      if (Date.now() + 50 >= budget - PUBLISH_DEADLINE_MARGIN_MS) throw new ReceiversMissing(topic, have, last?.count ?? 0);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  subscribe(topic: string): AsyncIterableIterator<unknown> {
    checkTopic(topic);
    if (this.#closed) throw new Error('RedisPubSub is closed');
    const events = this.#local.subscribe(topic);
    if (!this.#channels.has(topic)) {
      const subscribed = this.#connect().then(({ sub }) => (this.#cluster ? sub.ssubscribe(this.#prefix + topic) : sub.subscribe(this.#prefix + topic)));
      subscribed.catch((err: unknown) => this.#logger.warn({ err, topic }, 'pubsub: subscribe failed; events of other instances will not arrive'));
      this.#channels.set(topic, subscribed);
    }
    const end = events.return!.bind(events);
    events.return = async (value?: unknown) => {
      const r = await end(value);
      this.#release(topic);
      return r;
    };
    return events;
  }

  /** Resolves once this instance's SUBSCRIBE of `topic` is confirmed by Redis (tests, readiness checks). */
  async subscribed(topic: string): Promise<void> {
    await this.#channels.get(topic);
  }

  listenerCount(topic: string): number {
    return this.#local.listenerCount(topic);
  }

  /** One PING through the publishing connection (opened if it is not yet): readiness probes the event bus with it. */
  async ping(): Promise<void> {
    if (this.#closed) throw new Error('RedisPubSub is closed');
    const { pub } = await this.#connect();
    await this.#bounded(pingSlotsOf(pub, this.#neededKeys()), 'PING');
  }

  /** The keys whose shards this instance needs: its subscribed channels (a cluster shards events by channel). */
  #neededKeys(): string[] {
    return this.#cluster ? [...this.#channels.keys()].map((topic) => this.#prefix + topic) : [];
  }

  /** A command of the publishing connection, bounded by PUBLISH_TIMEOUT_MS (extended once if the loop was starved). */
  #bounded<T>(reply: Promise<T>, command: string): Promise<T> {
    return raceStarvationAware(reply, PUBLISH_TIMEOUT_MS, () => new Error(`Redis did not answer ${command} within ${PUBLISH_TIMEOUT_MS} ms`));
  }

  /** Disconnect both connections. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#health.close();
    this.#unwatch?.();
    if (!this.#clients) return;
    const clients = await this.#clients.catch(() => undefined);
    clients?.pub.disconnect();
    clients?.sub.disconnect();
  }
}

/** After a reconnect, the topic's subscribers were not all back in time: the event was not published. */
/** Redis ran the publish after its deadline (the script published nothing): safe to try again. */
class NotPublished extends Error {
  constructor() {
    super('Redis took the event after its deadline: not published');
  }
}

class ReceiversMissing extends Error {
  constructor(topic: string, have: number, want: number) {
    super(`${have} of the ${want} subscriber connections of "${topic}" were back after the reconnect: not published`);
  }
}
