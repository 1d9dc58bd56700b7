/**
 * The router's index: layers bucketed by the static first segment of their path, so a request only tests the
 * layers that can match it, in stack order (Express's ordering rules are kept: a candidate list is the stack with
 * the impossible layers left out, never reordered). A layer whose first segment is not a plain literal (a param, a
 * wildcard, a RegExp, an array, '/') is a candidate for every path.
 */
import type { Layer } from './layer.js';

/** At most this many distinct first segments get a cached candidate list (others are merged on each request). */
const MAX_CACHED_SEGMENTS = 1000;

/** The first segment of a pathname ('' for '/' or '//x'). */
export function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return end === -1 ? path.slice(1) : path.slice(1, end);
}

export class LayerIndex {
  /** The stack this index was built from, and its length then (a changed length means rebuild). */
  readonly stack: Layer[];
  readonly length: number;
  /** Stack positions of the layers that can match any path. */
  readonly any: number[] = [];
  private readonly exact = new Map<string, number[]>();
  private readonly folded = new Map<string, number[]>();
  private readonly cache = new Map<string, number[]>();

  /** `literal`: the first segments that may be bucketed (the router's rules say which). */
  constructor(stack: Layer[], literal: RegExp) {
    this.stack = stack;
    this.length = stack.length;
    for (let i = 0; i < stack.length; i++) {
      const layer = stack[i]!;
      const path = layer.rawPath;
      const seg = typeof path === 'string' && path[0] === '/' && path !== '/' ? firstSegment(path) : '';
      if (seg === '' || !literal.test(seg)) { this.any.push(i); continue; }
      const sensitive = layer.sensitive;
      const map = sensitive ? this.exact : this.folded;
      const key = sensitive ? seg : seg.toLowerCase();
      let bucket = map.get(key);
      if (!bucket) map.set(key, (bucket = []));
      bucket.push(i);
    }
  }

  /** The stack positions of the layers that may match a path whose first segment is `seg`, ascending. */
  candidates(seg: string): number[] {
    const cached = this.cache.get(seg);
    if (cached) return cached;
    const a = this.exact.get(seg);
    const b = this.folded.get(seg.toLowerCase());
    if (!a && !b) return this.any;
    const merged = this.any.concat(a ?? [], b ?? []).sort((x, y) => x - y);
    if (this.cache.size < MAX_CACHED_SEGMENTS) this.cache.set(seg, merged);
    return merged;
  }
}

/** The position in `list` of the first stack position at or after `idx`. */
export function lowerBound(list: number[], idx: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! < idx) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
