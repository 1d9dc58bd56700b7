/**
 * A small bounded memo for answers derived from header strings (Accept-Encoding, Content-Type). Real
 * traffic repeats a handful of values; a client can send endless distinct ones, so the memo holds at
 * most `capacity` keys of at most `maxKeyLength` characters (capacity × maxKeyLength bounds its
 * memory): when it is full it starts over, which costs one recomputation per value and needs no
 * bookkeeping on the hot path, and a longer key is simply computed every time.
 */
export class BoundedMemo<V> {
  readonly #map = new Map<string, V>();

  constructor(
    readonly capacity: number,
    readonly maxKeyLength: number,
  ) {}

  /** The remembered answer for `key`, or `compute(key)` (remembered when the key is short enough). */
  get(key: string, compute: (key: string) => V): V {
    let value = this.#map.get(key);
    if (value === undefined && !this.#map.has(key)) {
      value = compute(key);
      if (key.length <= this.maxKeyLength) {
        if (this.#map.size >= this.capacity) this.#map.clear();
        this.#map.set(key, value);
      }
    }
    return value as V;
  }

  get size(): number {
    return this.#map.size;
  }
}
