/**
 * A small bounded memo for values derived from request/response header strings (Accept-Encoding,
 * Content-Type). Real traffic repeats a handful of values; an attacker can send endless distinct
 * ones, so the map never exceeds `capacity`: when it is full it starts over, which costs one
 * recomputation per value and needs no bookkeeping on the hot path.
 */
export class BoundedCache<K, V> {
  readonly #map = new Map<K, V>();

  constructor(readonly capacity: number) {}

  get(key: K): V | undefined {
    return this.#map.get(key);
  }

  set(key: K, value: V): void {
    if (this.#map.size >= this.capacity) this.#map.clear();
    this.#map.set(key, value);
  }

  get size(): number {
    return this.#map.size;
  }
}
