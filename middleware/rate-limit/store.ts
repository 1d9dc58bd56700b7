/**
 * Token-bucket state for rateLimit: the bucket math and the in-memory store.
 *
 * The bucket is kept as GCRA (the Generic Cell Rate Algorithm, ITU-T I.371), which is exactly a token
 * bucket stored as one number per client: the "theoretical arrival time" (TAT), the instant at which
 * the bucket would be full again. Each accepted request moves TAT one emission interval
 * (1000 / per_second ms) later; a request is refused when that would put TAT more than a full bucket
 * (burst × interval) ahead of now. So a client gets `burst` requests at once and then one more every
 * interval, with no window boundaries to game (unlike fixed windows, which allow 2 × burst around a
 * boundary). One number per key also makes the Redis version a single atomic script (redis.ts).
 */

/** The bucket: `burst` tokens, refilled at `perSecond` tokens per second. */
export interface BucketPolicy {
  readonly burst: number;
  readonly perSecond: number;
}

/** The outcome of taking one token. Durations are milliseconds from now. */
export interface TakeResult {
  readonly allowed: boolean;
  /** Tokens left after this request (0 when refused). */
  readonly remaining: number;
  /** When refused: time until one token is back. 0 when allowed. */
  readonly retryAfterMs: number;
  /** Time until the bucket is full again (the quota "resets"). */
  readonly resetMs: number;
}

/**
 * Where bucket state lives. `take` must be atomic per key when the store is shared between processes
 * (RedisStore runs one Lua script). A store shared by several limiters needs one key space each
 * (give each its own store or key prefix): two policies on one key would move the same TAT.
 */
export interface RateLimitStore {
  take(key: string, policy: BucketPolicy): TakeResult | Promise<TakeResult>;
}

const round = (ms: number): number => Math.round(ms * 1e6) / 1e6;

/** Guards floor() against float error such as 2.9999999 tokens. */
const EPSILON = 1e-9;

/**
 * One GCRA step: given the stored TAT (undefined = full bucket) and the current time, the result and
 * the TAT to store (undefined when refused: state does not change).
 */
export function gcraTake(storedTat: number | undefined, now: number, policy: BucketPolicy): { result: TakeResult; tat: number | undefined } {
  const interval = 1000 / policy.perSecond;
  const capacity = policy.burst * interval;
  const tat = storedTat === undefined || storedTat < now ? now : storedTat;
  const next = tat + interval;
  // Rounded to nanoseconds: (now + interval) - now is not exactly interval in floating point.
  const ahead = round(next - now);
  if (ahead > capacity + EPSILON) {
    return { result: { allowed: false, remaining: 0, retryAfterMs: round(ahead - capacity), resetMs: round(tat - now) }, tat: undefined };
  }
  const remaining = Math.max(0, Math.floor((capacity - ahead) / interval + EPSILON));
  return { result: { allowed: true, remaining, retryAfterMs: 0, resetMs: ahead }, tat: next };
}

/** Default cap on the number of clients the in-memory store tracks at once (about 10-20 MB). */
export const DEFAULT_MEMORY_STORE_MAX_KEYS = 100_000;

/** Expired entries removed per request; more than one, so eviction outpaces insertion. */
const SWEEP_PER_TAKE = 2;

export interface MemoryStoreOptions {
  /** Most clients tracked at once. Default `DEFAULT_MEMORY_STORE_MAX_KEYS` (100000). */
  maxKeys?: number;
  /** Clock in milliseconds (tests, simulations). Default `performance.now`, which never jumps back. */
  now?: () => number;
}

/**
 * The default store: one process, a Map from client key to TAT.
 *
 * It never grows without bound. The Map is kept in least-recently-updated order (an update re-inserts
 * the key), and every `take` drops up to two entries from the old end whose bucket has refilled
 * completely (a full bucket is the same as no entry). Any key untouched for burst / per_second
 * seconds is therefore gone soon after. On top of that `maxKeys` is a hard cap: past it, the least
 * recently updated client is forgotten, which hands that one client a fresh bucket early; that is the
 * price of bounded memory when more distinct clients than `maxKeys` are active within one refill period.
 */
export class MemoryStore implements RateLimitStore {
  readonly #tats = new Map<string, number>();
  readonly #maxKeys: number;
  readonly #now: () => number;

  constructor(options: MemoryStoreOptions = {}) {
    const maxKeys = options.maxKeys ?? DEFAULT_MEMORY_STORE_MAX_KEYS;
    if (!Number.isInteger(maxKeys) || maxKeys < 1) throw new RangeError(`MemoryStore maxKeys must be an integer >= 1, got ${String(maxKeys)}`);
    this.#maxKeys = maxKeys;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Number of clients currently tracked. */
  get size(): number {
    return this.#tats.size;
  }

  take(key: string, policy: BucketPolicy): TakeResult {
    const now = this.#now();
    this.#sweep(now);
    const { result, tat } = gcraTake(this.#tats.get(key), now, policy);
    if (tat !== undefined) {
      this.#tats.delete(key);
      this.#tats.set(key, tat);
      if (this.#tats.size > this.#maxKeys) this.#tats.delete(this.#tats.keys().next().value!);
    }
    return result;
  }

  /** Forget every client. */
  clear(): void {
    this.#tats.clear();
  }

  #sweep(now: number): void {
    let n = 0;
    for (const [key, tat] of this.#tats) {
      if (n++ >= SWEEP_PER_TAKE || tat > now) return;
      this.#tats.delete(key);
    }
  }
}

/**
 * `Retry-After` of the 503 a failing store answers (RFC 9110 §10.2.3): one second, the order of a
 * Redis reconnect, so clients back off instead of hammering an instance whose store is down.
 */
export const STORE_UNAVAILABLE_RETRY_AFTER_SECONDS = 1;
/** The headers of that 503 (shared with the express-rate-limit-style limiter). */
export const STORE_UNAVAILABLE_HEADERS: Readonly<Record<string, string>> = Object.freeze({ 'Retry-After': String(STORE_UNAVAILABLE_RETRY_AFTER_SECONDS) });
/**
 * The `code` member of that 503 (an RFC 9457 §3.2 extension), the code docs/scaling.md names, so a
 * client or log can tell "store down" from other 503s without parsing `type`.
 */
export const STORE_UNAVAILABLE_EXTENSIONS: Readonly<Record<string, unknown>> = Object.freeze({ code: 'KEEL_SERVICE_UNAVAILABLE' });
