/**
 * How RedisPubSub keeps its publish answers honest around an outage (issue 28):
 *
 * - A deadline in Redis's own clock. A PUBLISH that times out client-side may still run when a hung
 *   Redis resumes (64 of 305 publishes answered 503 were delivered). keel publishes through a script
 *   that compares Redis's TIME with the publisher's deadline and publishes nothing once it has passed,
 *   so a publish answered "failed" is delivered nowhere. The deadline is translated into Redis's clock
 *   with an offset measured by TIME on each connection (Cristian's algorithm: the round trip bounds the
 *   error), and it ends PUBLISH_DEADLINE_MARGIN_MS before the client gives up, so the reply of a publish
 *   that made it has time to arrive.
 * - The reconnect window. After Redis restarts, every subscriber connection has to reconnect and
 *   subscribe again; a PUBLISH before that reaches fewer instances and still answers OK (41 and 45
 *   events lost). PUBLISH answers how many connections received the message: keel remembers that number
 *   per topic, and in the RESUBSCRIBE_WAIT_MS after a reconnect it waits (PUBSUB NUMSUB) until as many
 *   are subscribed again before publishing; if they are not back in time the publish is reported failed.
 */

/** Of the publish timeout, the part kept for the reply of a publish Redis accepted: 100 ms. */
export const PUBLISH_DEADLINE_MARGIN_MS = 100;
/** After a reconnect, how long a publish waits for the topic's subscribers to be back: 2500 ms. */
export const RESUBSCRIBE_WAIT_MS = 2500;
/** Topics whose receiver count is remembered (the most recently published): 10,000. */
export const MAX_TRACKED_TOPICS = 10_000;
/** A clock offset measured over a round trip longer than this is not trusted: 100 ms. */
const MAX_OFFSET_RTT_MS = 100;

/** PUBLISH ARGV[1] ARGV[2] unless Redis's clock is past ARGV[3] (ms): then -1 and nothing is published. */
export const PUBLISH_BEFORE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if now > tonumber(ARGV[3]) then return -1 end
return redis.call('PUBLISH', ARGV[1], ARGV[2])`;

/**
 * The same in a Redis Cluster (sharded pub/sub, Redis ≥ 7): KEYS[1] is the channel, so the script runs
 * on the primary of the channel's slot, and SPUBLISH there reaches every SSUBSCRIBE of the channel.
 * ARGV[3], ARGV[4]: the receivers of the topic's last event and the node (CLUSTER MYID) that took it.
 * On another node now (the shard failed over, the slot migrated), fewer subscribers than that means
 * theirs are still moving: {-2, node, subscribers} and nothing is published. Otherwise {receivers, node};
 * {-1, node} past the deadline.
 */
export const SPUBLISH_BEFORE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local node = redis.call('CLUSTER', 'MYID')
if now > tonumber(ARGV[2]) then return {-1, node} end
if ARGV[4] ~= '' and ARGV[4] ~= node then
  local have = redis.call('PUBSUB', 'SHARDNUMSUB', KEYS[1])[2]
  if have < tonumber(ARGV[3]) then return {-2, node, have} end
end
return {redis.call('SPUBLISH', KEYS[1], ARGV[1]), node}`;

/** Subscribers of KEYS[1] (a shard channel) on its own shard: PUBSUB SHARDNUMSUB run where the channel lives. */
export const SHARD_NUMSUB_SCRIPT = `return redis.call('PUBSUB', 'SHARDNUMSUB', KEYS[1])[2]`;

/* eslint-disable @typescript-eslint/no-explicit-any -- ioredis is optional */
type Client = any;

/** Redis's clock as seen from this process: `redisMs = Date.now() + offset`. */
export class RedisClock {
  readonly #client: Client;
  #offset: number | undefined;
  #rtt = Infinity;

  constructor(client: Client) {
    this.#client = client;
    // Each connection may reach another server (a failover): measure again.
    client.on('ready', () => {
      this.#rtt = Infinity;
      void this.measure().catch(() => undefined);
    });
  }

  async measure(): Promise<number> {
    const t0 = Date.now();
    const [s, us] = (await this.#client.time()) as [string, string];
    const t1 = Date.now();
    const offset = Number(s) * 1000 + Math.floor(Number(us) / 1000) - (t0 + t1) / 2;
    if (t1 - t0 <= this.#rtt) {
      this.#rtt = t1 - t0;
      this.#offset = offset;
    }
    return this.#offset ?? offset;
  }

  /** The offset, measured now if it never was or the last measure was too coarse. */
  async offset(): Promise<number> {
    if (this.#offset === undefined || this.#rtt > MAX_OFFSET_RTT_MS) return this.measure();
    return this.#offset;
  }
}

/** Per topic, how many connections received its last publish; after a reconnect, how many must be back. */
export class Receivers {
  readonly #last = new Map<string, number>();
  /** Cluster: the node that took the topic's last event. */
  readonly #nodes = new Map<string, string>();
  #expected = new Map<string, number>();
  #until = 0;

  /** Redis came back after a reconnect: for a while, publishes wait for the subscribers known before. */
  reconnected(now = Date.now()): void {
    this.#expected = new Map(this.#last);
    this.#until = now + RESUBSCRIBE_WAIT_MS;
  }

  /** Receivers a publish on `topic` should reach now, and until when to wait for them (undefined: no wait). */
  expected(topic: string, now = Date.now()): { count: number; until: number } | undefined {
    if (now >= this.#until) {
      if (this.#expected.size) this.#expected = new Map();
      return undefined;
    }
    const count = this.#expected.get(topic);
    return count ? { count, until: this.#until } : undefined;
  }

  /** The receivers of the topic's last event, and (cluster) the node that took it. */
  last(topic: string): { count: number; node: string } | undefined {
    const count = this.#last.get(topic);
    return count === undefined ? undefined : { count, node: this.#nodes.get(topic) ?? '' };
  }

  /** Cluster: since when the topic's shard moved without its subscribers (the first publish that found so). */
  readonly #moved = new Map<string, number>();

  /** Cluster: a publish found the topic's shard moved and its subscribers not there. */
  moved(topic: string, now = Date.now()): void {
    if (!this.#moved.has(topic)) this.#moved.set(topic, now);
    if (this.#moved.size > MAX_TRACKED_TOPICS) this.#moved.delete(this.#moved.keys().next().value!);
  }

  /** Cluster: the shard moved more than RESUBSCRIBE_WAIT_MS ago and the subscribers never came back. */
  movedLongAgo(topic: string, now = Date.now()): boolean {
    const since = this.#moved.get(topic);
    return since !== undefined && now - since >= RESUBSCRIBE_WAIT_MS;
  }

  /** A publish on `topic` reached `n` connections (on the cluster node `node`). */
  published(topic: string, n: number, node?: string): void {
    this.#moved.delete(topic);
    this.#last.delete(topic); // Map order: most recently published last, the oldest evicted first
    this.#last.set(topic, n);
    if (node !== undefined) this.#nodes.set(topic, node);
    if (this.#last.size > MAX_TRACKED_TOPICS) {
      const oldest = this.#last.keys().next().value!;
      this.#last.delete(oldest);
      this.#nodes.delete(oldest);
    }
    const want = this.#expected.get(topic);
    if (want !== undefined && n >= want) this.#expected.delete(topic);
  }
}
