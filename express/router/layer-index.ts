/**
 * The router's index: layers bucketed by the static first segment of their path, so a request only tests the
 * layers that can match it, in stack order (Express's ordering rules are kept: a candidate list is the stack with
 * the impossible layers left out, never reordered). A layer whose first segment is not a plain literal (a param, a
 * wildcard, a RegExp, an array, '/') is a candidate for every path.
 */
import type { Layer } from './layer.js';

/** At most this many distinct first segments get a cached candidate list (others are merged on each request). */
const MAX_CACHED_SEGMENTS = 1000;
const LITERAL_5 = /^[A-Za-z0-9_~.-]+$/;
// path-to-regexp 0.1 gives '.' a meaning before a param (':a.:b'), so only plainer segments are indexed there.
const LITERAL_4 = /^[A-Za-z0-9_~-]+$/;

/** The first segment of a pathname ('' for '/' or '//x'). */
export function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return end === -1 ? path.slice(1) : path.slice(1, end);
}

export class LayerIndex {
  /** The stack this index was built from, and its length then (a changed length means rebuild). */
  readonly stack: Layer[];
  readonly length: number;
  /** Layers that can match any path. */
  readonly any: Layer[] = [];
  private readonly exact = new Map<string, Layer[]>();
  private readonly folded = new Map<string, Layer[]>();
  private readonly cache = new Map<string, Layer[]>();

  constructor(stack: Layer[], v4: boolean) {
    this.stack = stack;
    this.length = stack.length;
    const literal = v4 ? LITERAL_4 : LITERAL_5;
    for (let i = 0; i < stack.length; i++) {
      const layer = stack[i]!;
      layer.idx = i;
      const path = layer.rawPath;
      const seg = typeof path === 'string' && path[0] === '/' && path !== '/' ? firstSegment(path) : '';
      if (seg === '' || !literal.test(seg)) { this.any.push(layer); continue; }
      const sensitive = layer.sensitive;
      const map = sensitive ? this.exact : this.folded;
      const key = sensitive ? seg : seg.toLowerCase();
      let bucket = map.get(key);
      if (!bucket) map.set(key, (bucket = []));
      bucket.push(layer);
    }
  }

  /** The layers that may match a path whose first segment is `seg`, in stack order. */
  candidates(seg: string): Layer[] {
    const cached = this.cache.get(seg);
    if (cached) return cached;
    const a = this.exact.get(seg);
    const b = this.folded.get(seg.toLowerCase());
    if (!a && !b) return this.any;
    const merged = this.any.concat(a ?? [], b ?? []).sort((x, y) => x.idx - y.idx);
    if (this.cache.size < MAX_CACHED_SEGMENTS) this.cache.set(seg, merged);
    return merged;
  }
}

/** The position of the first layer of `list` at or after stack position `idx`. */
export function lowerBound(list: Layer[], idx: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.idx < idx) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
