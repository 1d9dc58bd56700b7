/** The token bucket of ./h2-abuse.ts's reset and stream budgets: `rate` tokens a second, at most `burst`. */
export class Bucket {
  #tokens: number;
  #last = performance.now();
  constructor(readonly rate: number, readonly burst: number) {
    this.#tokens = burst;
  }
  #refill(): void {
    const now = performance.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#last) / 1000) * this.rate);
    this.#last = now;
  }
  take(): boolean {
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens--;
    return true;
  }
  empty(): boolean {
    return this.below(1);
  }
  below(n: number): boolean {
    this.#refill();
    return this.#tokens < n;
  }
  /** ms until the bucket is full again (how long a client's state must outlive its last session). */
  refillMs(): number {
    this.#refill();
    return ((this.burst - this.#tokens) / this.rate) * 1000;
  }
}
