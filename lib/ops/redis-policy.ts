/**
 * The bounds keel puts on the ioredis clients it creates itself (RedisPubSub, the BullMQ backend), so
 * that a hung or absent Redis becomes an answer (503 with Retry-After, or the fail-open path) within a
 * known time instead of a wait (issue 28). Clients the user hands in are bounded by the caller (the rate
 * limit RedisStore races its own timer: `timeoutMs`); docs/scaling.md shows such a client.
 */

/** Default bound on one command of a client keel creates, ms (500): ioredis `commandTimeout`. */
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 500;

/** Longest pause between two reconnection attempts, ms (1000): the `Retry-After: 1` keel's 503s give. */
export const REDIS_RECONNECT_MAX_DELAY_MS = 1000;

/**
 * ioredis `retryStrategy`: 100 ms, 200 ms, … capped at REDIS_RECONNECT_MAX_DELAY_MS. It never gives up
 * (a server that returns must be used again without a restart), but the wait after Redis returns is
 * bounded by the cap (ioredis's default caps at 2000 ms).
 */
export function boundedRetryStrategy(times: number): number {
  return Math.min(times * 100, REDIS_RECONNECT_MAX_DELAY_MS);
}

/**
 * How often a Redis Cluster client keel creates reads the slot map again, ms (2000): ioredis's default is
 * never (it reads it on MOVED or a closed connection, and a hung primary sends neither), so once the
 * cluster promoted a replica, keel's clients kept sending to the stopped node until it resumed (issue 47).
 */
export const CLUSTER_SLOTS_REFRESH_MS = 2000;
