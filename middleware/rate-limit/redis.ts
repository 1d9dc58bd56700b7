/**
 * A RateLimitStore in Redis (or Valkey), so that several keel instances share one limit.
 *
 * One Lua script does the whole GCRA step of store.ts atomically on the server, with the server's
 * clock (`TIME`), so instances with skewed clocks still agree. The key expires when its bucket would
 * be full again, so Redis holds only clients that are currently limited or recently active.
 *
 * Why not rate-limiter-flexible's RateLimiterRedis? Its stores count points in fixed windows; that
 * cannot express a refilling bucket (a client could spend 2 × burst around a window boundary, and
 * tokens return all at once instead of one per interval). The client library stays yours: pass a
 * `sendCommand` for node-redis or ioredis, as express-rate-limit's rate-limit-redis does.
 */
import { createHash } from 'node:crypto';
import type { BucketPolicy, RateLimitStore, TakeResult } from './store.js';

/** Default prefix of every key the store writes. */
export const DEFAULT_REDIS_PREFIX = 'keel:rl:';

export interface RedisStoreOptions {
  /**
   * Send one command and resolve with its reply.
   * node-redis: `(...args) => client.sendCommand(args)`; ioredis: `(command, ...args) => client.call(command, ...args)`.
   */
  sendCommand: (...args: string[]) => Promise<unknown>;
  /** Key prefix; give each limiter its own. Default `DEFAULT_REDIS_PREFIX` ('keel:rl:'). */
  prefix?: string;
}

// KEYS[1] = bucket key; ARGV[1] = interval ms; ARGV[2] = burst. Returns {allowed, remaining,
// retryAfterMs, resetMs}; numbers as strings because Redis truncates Lua numbers to integers.
const SCRIPT = `
local interval = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2]) * interval
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local ahead = tat + interval - now
if ahead > capacity + 1e-9 then
  return {0, '0', tostring(ahead - capacity), tostring(tat - now)}
end
redis.call('SET', KEYS[1], string.format('%.17g', tat + interval), 'PX', math.max(1, math.ceil(ahead)))
return {1, tostring(math.floor((capacity - ahead) / interval + 1e-9)), '0', tostring(ahead)}
`;
const SCRIPT_SHA = createHash('sha1').update(SCRIPT).digest('hex');

/**
 * Shared token buckets in Redis ≥ 5 / Valkey.
 *
 * @example
 * import { createClient } from 'redis';
 * import { rateLimit, RedisStore } from 'keel/middleware/rate-limit';
 *
 * const client = createClient({ url: process.env.REDIS_URL });
 * await client.connect();
 * app.use(rateLimit({ per_second: 10, burst: 20 }, { store: new RedisStore({ sendCommand: (...args) => client.sendCommand(args) }) }));
 */
export class RedisStore implements RateLimitStore {
  readonly #send: (...args: string[]) => Promise<unknown>;
  readonly #prefix: string;

  constructor(options: RedisStoreOptions) {
    if (typeof options?.sendCommand !== 'function') throw new TypeError('RedisStore needs a sendCommand(...args) function');
    this.#send = options.sendCommand;
    this.#prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
  }

  async take(key: string, policy: BucketPolicy): Promise<TakeResult> {
    const args = ['1', this.#prefix + key, String(1000 / policy.perSecond), String(policy.burst)];
    let reply: unknown;
    try {
      reply = await this.#send('EVALSHA', SCRIPT_SHA, ...args);
    } catch (err) {
      // First use on this server (or after SCRIPT FLUSH): send the script itself, which caches it.
      if (!/NOSCRIPT/.test(String((err as Error)?.message))) throw err;
      reply = await this.#send('EVAL', SCRIPT, ...args);
    }
    if (!Array.isArray(reply) || reply.length !== 4) throw new Error('RedisStore: unexpected reply from the rate-limit script');
    const [allowed, remaining, retryAfterMs, resetMs] = reply.map(Number) as [number, number, number, number];
    return { allowed: allowed === 1, remaining, retryAfterMs, resetMs };
  }
}
