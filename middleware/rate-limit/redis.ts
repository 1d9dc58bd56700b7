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
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from '../../lib/ops/redis-policy.js';
import { raceStarvationAware, starved, watchLoop } from '../../lib/ops/loop-stall.js';
import { pino, type Logger } from 'pino';
import { logBase } from '../../lib/ops/log-level.js';
import { StoreHealth, type StoreStatus } from '../../lib/ops/store-health.js';
import type { BucketPolicy, RateLimitStore, TakeResult } from './store.js';
import type { ClientRateLimitInfo, StoreInitOptions, WindowStore } from './window-store.js';

/** Default prefix of every key the store writes. */
export const DEFAULT_REDIS_PREFIX = 'keel:rl:';

// The default bound on one command (500 ms), shared with the clients keel creates. A hung Redis (SIGSTOP,
// a network partition: the socket stays open, so the client neither errors nor reconnects) would
// otherwise hold every limited request until it resumes; past the bound the command is a store failure.
export { DEFAULT_REDIS_COMMAND_TIMEOUT_MS };

export interface RedisStoreOptions {
  /**
   * Send one command and resolve with its reply.
   * node-redis: `(...args) => client.sendCommand(args)`; ioredis: `(command, ...args) => client.call(command, ...args)`.
   */
  sendCommand: (...args: string[]) => Promise<unknown>;
  /** Key prefix; give each limiter its own. Default `DEFAULT_REDIS_PREFIX` ('keel:rl:'). */
  prefix?: string;
  /**
   * Longest wait for one command's reply, ms (a positive number, or 0 for no bound). Default
   * `DEFAULT_REDIS_COMMAND_TIMEOUT_MS` (500). The client is yours, so keel races its own timer; give an
   * ioredis client `commandTimeout` too, so it drops the late reply itself (docs/scaling.md).
   */
  timeoutMs?: number;
  /**
   * Where the store's down and back transitions are logged (once each). Default: the App's logger when
   * the store is given to createApp (`AppOptions.rateLimit.store`), else pino at info.
   */
  logger?: Logger;
  /**
   * The readiness probe (`ping()`). Default: one PING through `sendCommand`. On a Redis Cluster that
   * reaches one node picked at random: give one that asks every primary, e.g. for an ioredis Cluster
   * `() => Promise.all(cluster.nodes('master').map((node) => node.ping()))` (docs/scaling.md#redis-cluster).
   */
  ping?: () => Promise<unknown>;
}

/** The error a command that outlived `timeoutMs` rejects with. */
export class RedisCommandTimeoutError extends Error {
  constructor(command: string, ms: number) {
    super(`RedisStore: ${command} had no reply within ${ms} ms (timeoutMs)`);
    this.name = 'RedisCommandTimeoutError';
  }
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

// express-rate-limit's fixed window (the Store API): KEYS[1] = counter; ARGV[1] = window ms. The window
// starts with the first hit and ends when the key expires. Returns {hits, ms until the window ends}.
const WINDOW_INCREMENT = `
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then
  redis.call('SET', KEYS[1], 1, 'PX', ARGV[1])
  return {1, tonumber(ARGV[1])}
end
return {redis.call('INCR', KEYS[1]), ttl}
`;
// Only a counter that still exists is decremented: DECR on an expired key would create -1 without expiry.
const WINDOW_DECREMENT = `
if redis.call('PTTL', KEYS[1]) > 0 then return redis.call('DECR', KEYS[1]) end
return 0
`;
const WINDOW_GET = `return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])}`;
const sha1 = (script: string): string => createHash('sha1').update(script).digest('hex');
const SHAS = new Map([WINDOW_INCREMENT, WINDOW_DECREMENT, WINDOW_GET].map((script) => [script, sha1(script)]));

/**
 * Shared token buckets in Redis ≥ 5 / Valkey (`take`, for keel's `{ per_second, burst }`), and an
 * express-rate-limit Store (`increment` …, for its options): one atomic script per request either way,
 * with no script loading at start-up (EVALSHA, and EVAL once when the server does not know the script).
 *
 * @example
 * import { createClient } from 'redis';
 * import { rateLimit, RedisStore } from 'keel/middleware/rate-limit';
 *
 * const client = createClient({ url: process.env.REDIS_URL });
 * await client.connect();
 * app.use(rateLimit({ per_second: 10, burst: 20 }, { store: new RedisStore({ sendCommand: (...args) => client.sendCommand(args) }) }));
 */
export class RedisStore implements RateLimitStore, WindowStore {
  readonly #send: (...args: string[]) => Promise<unknown>;
  readonly #prefix: string;
  readonly #health: StoreHealth;
  readonly #ownLogger: boolean;
  readonly #ping: (() => Promise<unknown>) | undefined;
  /** Window length for the Store API, set by `init`. */
  windowMs = 0;
  /** Keys are shared with every instance on the same server (express-rate-limit's double-count check reads this). */
  readonly localKeys = false;

  /** The key prefix (express-rate-limit's double-count check tells limiters apart by it). */
  get prefix(): string {
    return this.#prefix;
  }

  constructor(options: RedisStoreOptions) {
    if (typeof options?.sendCommand !== 'function') throw new TypeError('RedisStore needs a sendCommand(...args) function');
    const timeoutMs = options.timeoutMs ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS;
    if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs < 0) {
      throw new TypeError(`RedisStore timeoutMs must be a number of ms ≥ 0 (0: no bound), got ${JSON.stringify(timeoutMs)}; the default is ${DEFAULT_REDIS_COMMAND_TIMEOUT_MS}`);
    }
    if (options.logger !== undefined && typeof options.logger?.warn !== 'function') throw new TypeError(`RedisStore logger must be a pino logger, got ${typeof options.logger}`);
    this.#ownLogger = options.logger !== undefined;
    this.#health = new StoreHealth(options.logger ?? pino({ level: 'info', base: logBase('keel.rate-limit') }), 'rate_limit');
    this.#health.commandsOnly();
    const send = options.sendCommand;
    const bounded = timeoutMs === 0 ? send : (...args: string[]) => withTimeout(resendIfStarved(send, args, timeoutMs), args[0] ?? 'command', timeoutMs);
    // Every command tells the store's state: one line when it goes down, one when it is back.
    this.#send = (...args: string[]) => bounded(...args).then((reply) => {
      this.#health.commandSucceeded();
      return reply;
    }, (err: unknown) => {
      // NOSCRIPT is an answer (the script is sent next), not a failure of the store.
      if (!/NOSCRIPT/.test(String((err as Error)?.message))) this.#health.commandFailed(err);
      throw err;
    });
    this.#prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
    if (options.ping !== undefined && typeof options.ping !== 'function') throw new TypeError(`RedisStore ping must be a function returning a promise, got ${JSON.stringify(options.ping)}`);
    this.#ping = options.ping && (timeoutMs === 0 ? options.ping : () => withTimeout(options.ping!(), 'PING', timeoutMs));
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

  /** The store's state as its commands tell it (`redis: 'up' | 'down'`). */
  status(): StoreStatus {
    return this.#health.status();
  }

  /** The App's logger, used when this store was made without `logger` (createApp hands it over). */
  useLogger(logger: Logger): void {
    if (!this.#ownLogger) this.#health.useLogger(logger);
  }

  /** Store API: remember the window length. */
  init(options: StoreInitOptions): void {
    this.windowMs = options.windowMs;
  }

  /** Store API: count one hit in the client's window. */
  async increment(key: string): Promise<ClientRateLimitInfo> {
    const reply = await this.#run(WINDOW_INCREMENT, key, String(Math.max(1, Math.ceil(this.windowMs))));
    if (!Array.isArray(reply) || reply.length !== 2) throw new Error('RedisStore: unexpected reply from the window script');
    return { totalHits: Number(reply[0]), resetTime: new Date(Date.now() + Number(reply[1])) };
  }

  /** Store API: take one hit back. */
  async decrement(key: string): Promise<void> {
    await this.#run(WINDOW_DECREMENT, key);
  }

  /** Store API: the client's hits and window end, without counting. */
  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const reply = await this.#run(WINDOW_GET, key);
    if (!Array.isArray(reply) || reply[0] === null || reply[0] === undefined || reply[0] === false) return undefined;
    return { totalHits: Number(reply[0]), resetTime: new Date(Date.now() + Number(reply[1])) };
  }

  /** One PING, bounded by `timeoutMs`: readiness (docs/operations.md) probes the store with it. */
  async ping(): Promise<void> {
    await (this.#ping ? this.#ping() : this.#send('PING'));
  }

  /** Store API (and keel's): forget a client. */
  async resetKey(key: string): Promise<void> {
    await this.#send('DEL', this.#prefix + key);
  }

  async #run(script: string, key: string, ...args: string[]): Promise<unknown> {
    const keyArgs = ['1', this.#prefix + key, ...args];
    try {
      return await this.#send('EVALSHA', SHAS.get(script)!, ...keyArgs);
    } catch (err) {
      if (!/NOSCRIPT/.test(String((err as Error)?.message))) throw err;
      return this.#send('EVAL', script, ...keyArgs);
    }
  }
}

/**
 * `reply`, or a RedisCommandTimeoutError once `ms` have passed; the timer never keeps the process alive.
 * A timeout during which this process's event loop was itself stalled is extended once (lib/ops/loop-stall.ts).
 */
function withTimeout(reply: Promise<unknown>, command: string, ms: number): Promise<unknown> {
  return raceStarvationAware(reply, ms, () => new RedisCommandTimeoutError(command, ms));
}

let watching = false;

/**
 * `send(...args)`, sent once more if it failed while this process was starved: the client's own
 * `commandTimeout` fires after a stall before the reply is read. The command may then run twice (one
 * token taken twice from one client's bucket during a stall), which beats judging Redis down.
 */
async function resendIfStarved(send: (...args: string[]) => Promise<unknown>, args: string[], ms: number): Promise<unknown> {
  if (!watching) {
    watching = true;
    watchLoop(); // a stall sampler for as long as the process uses a RedisStore (lib/ops/loop-stall.ts)
  }
  const started = performance.now();
  try {
    return await send(...args);
  } catch (err) {
    if (!starved(started, ms)) throw err;
    return send(...args);
  }
}
