/**
 * A log line for events that come in storms (a client that hangs up mid-stream, jobs refused by a full queue,
 * HTTP/2 sessions over their cap, refusals while Redis is down): the first line at once, then one line per
 * interval with the counts since the last, and silence once an interval passes without any. Under a flood
 * the log grows by a line a second instead of a line (and a stack) per event (issues 26 and 28).
 *
 * Two ways to open an interval:
 * - one interval for all keys (default): the first event of any key is written at once, and every event until
 *   an interval passes quietly is counted (a storm of mixed codes is one storm);
 * - `perKey`: the first event of each key is written at once, even while another key's interval runs (a store
 *   refusing a job does not hide that it also dropped an event).
 * A failing logger never turns the event into a crash: what the writers throw is dropped.
 */

/** Events of one key counted during an interval, with the context of the latest. */
export interface ThrottledCount<C> {
  count: number;
  context: C;
}

export interface ThrottledLogOptions<K, C> {
  /** Length of an interval, ms. */
  intervalMs: number;
  /** The first event of each key gets its own line even while an interval runs (default false: one interval for all). */
  perKey?: boolean;
  /** Write the line of an event logged at once (count 1). */
  first(key: K, context: C): void;
  /** Write the line(s) of an interval: the keys counted in it (never empty), in the order they first came. */
  interval(counts: ReadonlyMap<K, ThrottledCount<C>>, intervalMs: number): void;
}

export class ThrottledLog<K, C = undefined> {
  readonly #options: ThrottledLogOptions<K, C>;
  /** Counted since the last line; with `perKey`, a key's presence (count 0 included) means its interval runs. */
  #counts = new Map<K, ThrottledCount<C>>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: ThrottledLogOptions<K, C>) {
    this.#options = options;
  }

  /** Record one event of `key`; `context` is what its line says besides the count (the latest one for an interval's line). */
  note(key: K, context: C): void {
    const entry = this.#counts.get(key);
    if (this.#options.perKey ? entry !== undefined : this.#timer !== undefined) {
      if (entry) {
        entry.count++;
        entry.context = context;
      } else this.#counts.set(key, { count: 1, context });
      return;
    }
    if (this.#options.perKey) this.#counts.set(key, { count: 0, context });
    this.#write(() => this.#options.first(key, context));
    this.#timer ??= this.#schedule();
  }

  /** Stop the interval timer (the owner is closing); counts not yet written are dropped. */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(): NodeJS.Timeout {
    const timer = setTimeout(() => this.#flush(), this.#options.intervalMs);
    timer.unref();
    return timer;
  }

  #flush(): void {
    this.#timer = undefined;
    const counted = new Map<K, ThrottledCount<C>>();
    for (const [key, entry] of this.#counts) if (entry.count > 0) counted.set(key, { ...entry });
    if (this.#options.perKey) {
      // A key quiet for a whole interval is done: its next event is written at once.
      for (const [key, entry] of this.#counts) if (entry.count === 0) this.#counts.delete(key); else entry.count = 0;
    } else this.#counts = new Map();
    if (counted.size === 0) return;
    this.#write(() => this.#options.interval(counted, this.#options.intervalMs));
    this.#timer = this.#schedule();
  }

  #write(line: () => void): void {
    try {
      line();
    } catch {
      // A failing logger must not turn the event it reports into a crash.
    }
  }
}
