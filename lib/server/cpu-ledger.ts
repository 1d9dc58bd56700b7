/**
 * The per-client CPU budgets of lib/server/cost.ts: one number per client, as the rate limit's MemoryStore
 * (middleware/rate-limit/store.ts), but counted in milliseconds of work and charged after the work.
 */
import { performance } from 'node:perf_hooks';

/** Default cap on the clients a ledger tracks at once (as the rate limit's DEFAULT_MEMORY_STORE_MAX_KEYS). */
export const DEFAULT_LEDGER_MAX_KEYS = 100_000;
/** Expired entries removed per admission; more than one, so eviction outpaces insertion. */
const SWEEP_PER_ADMIT = 2;

/**
 * Per-client CPU budgets as GCRA: each client's "theoretical arrival time", the instant its bucket is
 * full again. Charging `ms` of work moves it `ms × interval` later; a client whose TAT is more than a
 * full bucket ahead of now is in debt.
 */
export class CpuLedger {
  readonly #tats = new Map<string, number>();
  readonly #interval: number;
  readonly #capacity: number;
  readonly #maxKeys: number;
  readonly #now: () => number;

  constructor(msPerSecond: number, burstMs: number, options: { maxKeys?: number; now?: () => number } = {}) {
    // Wall milliseconds that refill one millisecond of budget.
    this.#interval = 1000 / msPerSecond;
    this.#capacity = burstMs * this.#interval;
    this.#maxKeys = options.maxKeys ?? DEFAULT_LEDGER_MAX_KEYS;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Clients tracked now. */
  get size(): number {
    return this.#tats.size;
  }

  /** 0 when `key` may start work, else the milliseconds until it may. */
  waitMs(key: string): number {
    const now = this.#now();
    this.#sweep(now);
    const tat = this.#tats.get(key);
    if (tat === undefined) return 0;
    const ahead = tat - now;
    return ahead >= this.#capacity ? ahead - this.#capacity + this.#interval : 0;
  }

  /** Budget left to `key`, ms of work (negative: in debt). */
  remainingMs(key: string): number {
    const tat = this.#tats.get(key);
    const ahead = tat === undefined ? 0 : Math.max(0, tat - this.#now());
    return (this.#capacity - ahead) / this.#interval;
  }

  /** Charge `ms` of work to `key`; the bucket may go into debt. */
  charge(key: string, ms: number): void {
    if (!(ms > 0)) return;
    const now = this.#now();
    const stored = this.#tats.get(key);
    const tat = (stored === undefined || stored < now ? now : stored) + ms * this.#interval;
    this.#tats.delete(key);
    this.#tats.set(key, tat);
    if (this.#tats.size > this.#maxKeys) this.#tats.delete(this.#tats.keys().next().value!);
  }

  #sweep(now: number): void {
    let n = 0;
    for (const [key, tat] of this.#tats) {
      if (n++ >= SWEEP_PER_ADMIT || tat > now) return;
      this.#tats.delete(key);
    }
  }
}
