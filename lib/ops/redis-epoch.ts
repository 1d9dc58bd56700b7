/**
 * Did Redis come back empty? (issue 47: after a restart without persistence, 194 accepted jobs never ran
 * and the only line was "redis store back".) A marker key is written when the store is first up; when
 * the store comes back after a lost connection, `SET marker NX` succeeds only if the marker is gone,
 * i.e. Redis lost its data, and then only for the first instance to look (so one loss is reported once,
 * not once per instance). What was lost is estimated from the queue's depth sampled while Redis was up
 * (every EPOCH_DEPTH_SAMPLE_MS, one command): the jobs waiting, delayed or running at most that long
 * before the outage. A Redis restored from an older snapshot keeps the marker: its loss is not seen.
 */

/** How often the queue's depth is sampled while Redis answers, ms (5000): the estimate of a loss is at most this old. */
export const EPOCH_DEPTH_SAMPLE_MS = 5000;

/* eslint-disable @typescript-eslint/no-explicit-any -- ioredis is optional */
type Client = any;

export class RedisEpoch {
  readonly #client: Client;
  readonly #key: string;
  readonly #depth: () => Promise<number>;
  readonly #onEmpty: (lost: number) => void;
  #marked = false;
  #lastDepth = 0;
  #timer: NodeJS.Timeout | undefined;

  /**
   * @param client a command connection (the producer's)
   * @param key the marker's key, in the store's own key space
   * @param depth the jobs in Redis now (waiting, delayed, active…)
   * @param onEmpty told once per loss, with the last depth sampled before it
   */
  constructor(client: Client, key: string, depth: () => Promise<number>, onEmpty: (lost: number) => void) {
    this.#client = client;
    this.#key = key;
    this.#depth = depth;
    this.#onEmpty = onEmpty;
  }

  /** The store is up (again). `reconnected`: a connection was lost and made again since it was last up. */
  up(reconnected: boolean): void {
    const seen = this.#marked;
    this.#client.set(this.#key, String(Date.now()), 'NX').then((answer: unknown) => {
      this.#marked = true;
      if (answer === 'OK' && seen && reconnected) this.#onEmpty(this.#lastDepth);
      this.#sample();
    }, () => undefined);
  }

  /** The store is not up: stop sampling (a sample taken after Redis came back empty would read 0). */
  down(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #sample(): void {
    if (this.#timer) return;
    const tick = (): void => {
      this.#depth().then((n) => {
        if (this.#timer) this.#lastDepth = n;
      }, () => undefined);
      this.#timer = setTimeout(tick, EPOCH_DEPTH_SAMPLE_MS);
      this.#timer.unref();
    };
    tick();
  }

  close(): void {
    clearTimeout(this.#timer);
  }
}
