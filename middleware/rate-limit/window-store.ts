/**
 * express-rate-limit's Store API (the interface rate-limit-redis, rate-limit-memcached,
 * rate-limit-postgresql … implement) and keel's in-memory implementation of it.
 *
 * These stores count hits in fixed windows: `increment(key)` adds one hit and says when the client's
 * window ends; the limiter refuses a request once the count passes `limit`. That is express-rate-limit's
 * semantics, kept so a store written for it works unchanged. keel's own record style (`per_second` /
 * `burst`) uses the token buckets of store.ts instead.
 */

/** A client's hit count in the current window, and when the window ends (when the store knows). */
export interface ClientRateLimitInfo {
  totalHits: number;
  resetTime: Date | undefined;
}

/** What a Store's `init` receives: the limiter's settings (express-rate-limit's `Options`). */
export type StoreInitOptions = Readonly<Record<string, unknown>> & { readonly windowMs: number };

/** express-rate-limit's Store interface (v7/v8): any object implementing it can be passed as `store`. */
export interface WindowStore {
  /** Called once, when the limiter is created (may be async: a rejection is logged, not thrown). */
  init?(options: StoreInitOptions): void | Promise<void>;
  /** The client's count and window end, without counting a hit. */
  get?(key: string): Promise<ClientRateLimitInfo | undefined> | ClientRateLimitInfo | undefined;
  /** Count one hit. */
  increment(key: string): Promise<ClientRateLimitInfo> | ClientRateLimitInfo;
  /** Take one hit back (skipSuccessfulRequests / skipFailedRequests). */
  decrement(key: string): Promise<void> | void;
  /** Forget a client. */
  resetKey(key: string): Promise<void> | void;
  /** Forget every client. */
  resetAll?(): Promise<void> | void;
  /** Stop timers and connections. */
  shutdown?(): Promise<void> | void;
  /** true when two instances never share keys (in-memory stores): used by the double-count check. */
  localKeys?: boolean;
  /** The key prefix of a shared store: the double-count check tells limiters on one server apart by it. */
  prefix?: string;
}

/** The callback of a pre-v7 store's `incr`. */
export type IncrementCallback = (error: Error | undefined, totalHits: number, resetTime: Date | undefined) => void;

/** A pre-v7 store (callback `incr`), still accepted by express-rate-limit 8. */
export interface LegacyWindowStore {
  incr(key: string, callback: IncrementCallback): void;
  decrement(key: string): void;
  resetKey(key: string): void;
  resetAll?(): void;
}

/** Whether `store` is a pre-v7 store: `incr` and no `increment` (authors may keep both for compatibility). */
export function isLegacyStore(store: object): store is LegacyWindowStore {
  const s = store as Record<string, unknown>;
  return typeof s.incr === 'function' && typeof s.increment !== 'function';
}

/** A pre-v7 store behind the promise API. */
export function promisifyStore(store: WindowStore | LegacyWindowStore): WindowStore {
  if (!isLegacyStore(store)) return store;
  const legacy = store;
  return {
    increment: (key) => new Promise<ClientRateLimitInfo>((resolve, reject) => {
      legacy.incr(key, (error, totalHits, resetTime) => (error ? reject(error) : resolve({ totalHits, resetTime })));
    }),
    decrement: async (key) => legacy.decrement(key),
    resetKey: async (key) => legacy.resetKey(key),
    resetAll: async () => legacy.resetAll?.(),
  };
}

interface Client {
  totalHits: number;
  resetTime: Date;
}

/**
 * express-rate-limit's MemoryStore semantics, in one process: a fixed window per client that starts at
 * its first hit and lasts `windowMs`.
 *
 * Memory stays bounded without a scan: clients live in two maps, `current` and `previous`. A hit moves
 * its client into `current`; every `windowMs` the maps rotate and whatever is left in `previous` (no
 * hit for a whole window, so its window has ended) is dropped in bulk.
 */
export class FixedWindowMemoryStore implements WindowStore {
  /** Window length, set by `init`. */
  windowMs = 0;
  /** Keys never shared with another instance. */
  readonly localKeys = true;
  #previous = new Map<string, Client>();
  #current = new Map<string, Client>();
  #timer: NodeJS.Timeout | undefined;

  init(options: StoreInitOptions): void {
    this.windowMs = options.windowMs;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = setInterval(() => {
      this.#previous = this.#current;
      this.#current = new Map();
    }, this.windowMs);
    // The rotation must not keep a process alive that has nothing else to do.
    this.#timer.unref();
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    return this.#current.get(key) ?? this.#previous.get(key);
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const client = this.#client(key);
    const now = Date.now();
    if (client.resetTime.getTime() <= now) this.#restart(client, now);
    client.totalHits++;
    return client;
  }

  async decrement(key: string): Promise<void> {
    const client = this.#client(key);
    if (client.totalHits > 0) client.totalHits--;
  }

  async resetKey(key: string): Promise<void> {
    this.#current.delete(key);
    this.#previous.delete(key);
  }

  async resetAll(): Promise<void> {
    this.#current.clear();
    this.#previous.clear();
  }

  /** Stop the rotation timer and forget everyone. */
  shutdown(): void {
    clearInterval(this.#timer);
    this.#current.clear();
    this.#previous.clear();
  }

  #restart(client: Client, now = Date.now()): void {
    client.totalHits = 0;
    client.resetTime.setTime(now + this.windowMs);
  }

  #client(key: string): Client {
    let client = this.#current.get(key);
    if (client) return client;
    client = this.#previous.get(key);
    if (client) this.#previous.delete(key);
    else {
      client = { totalHits: 0, resetTime: new Date() };
      this.#restart(client);
    }
    this.#current.set(key, client);
    return client;
  }
}
