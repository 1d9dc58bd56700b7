/**
 * The size of a value's JSON, counted without writing it and stopped as soon as it passes a limit:
 * a result of 191 MiB is refused after counting a little past the limit, never serialised to learn
 * that it is too large (issue 26 item 2: GraphQL answers, JSON-RPC results).
 */

/** `jsonSize` when the value cannot be serialised (a cycle, a BigInt) or nests deeper than MAX_SIZED_DEPTH. */
export const NOT_SERIALISABLE = -1;

/**
 * Deepest nesting counted. JSON.stringify itself overflows the stack a few thousand levels down; a
 * value deeper than this is reported as NOT_SERIALISABLE (the caller answers as for a cycle).
 */
export const MAX_SIZED_DEPTH = 1000;

interface Walk {
  size: number;
  readonly limit: number;
  readonly path: Set<object>;
}

/** Adds the JSON size of `v` to `w.size`; false when past the limit or not serialisable (w.size says which). */
function add(w: Walk, v: unknown, depth: number): boolean {
  switch (typeof v) {
    case 'string':
      // Code units plus the quotes: exact for ASCII without escapes, which the final byte count settles.
      w.size += v.length + 2;
      return w.size <= w.limit;
    case 'number':
      w.size += Number.isFinite(v) ? String(v).length : 4;
      return w.size <= w.limit;
    case 'boolean':
      w.size += v ? 4 : 5;
      return w.size <= w.limit;
    case 'bigint':
      w.size = NOT_SERIALISABLE;
      return false;
    case 'object':
      break;
    default:
      // undefined, functions and symbols: `null` in an array, left out of an object (the caller skips them).
      w.size += 4;
      return w.size <= w.limit;
  }
  if (v === null) {
    w.size += 4;
    return w.size <= w.limit;
  }
  const toJSON = (v as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return add(w, (toJSON as () => unknown).call(v), depth);
  if (depth > MAX_SIZED_DEPTH || w.path.has(v)) {
    w.size = NOT_SERIALISABLE;
    return false;
  }
  w.path.add(v);
  w.size += 2;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      if (i > 0) w.size += 1;
      if (!add(w, v[i], depth + 1)) return false;
    }
  } else {
    let first = true;
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      const child = (v as Record<string, unknown>)[k];
      if (child === undefined || typeof child === 'function' || typeof child === 'symbol') continue;
      // `"key":`, and the comma before every member but the first.
      w.size += k.length + (first ? 3 : 4);
      first = false;
      if (!add(w, child, depth + 1)) return false;
    }
  }
  w.path.delete(v);
  return w.size <= w.limit;
}

/**
 * The size of `JSON.stringify(value)` in characters (escapes not counted), or a number above `limit`
 * as soon as the count passes it, or NOT_SERIALISABLE. Work is bounded by `limit`, not by the value.
 *
 * @example
 * jsonSize({ a: 'xyz' }, 1024); // 13
 * jsonSize({ a: 'x'.repeat(1e6) }, 1024) > 1024; // true, after one string
 */
export function jsonSize(value: unknown, limit: number): number {
  const w: Walk = { size: 0, limit, path: new Set() };
  add(w, value, 0);
  return w.size;
}
