/**
 * One work budget per request for the AsyncAPI endpoints (issue 26 item 2).
 *
 * A document is small, but every `$ref` to a schema copies that schema into the answer: one schema
 * referenced by a thousand messages is a thousand copies, and schemas that reference each other
 * multiply. A budget per resolved value let a 23.5 KB document expand to a 193 MB answer (43 s of CPU,
 * +900 MB of memory), so the budget is per request: every expansion of the request draws on it.
 *
 * Two measures, both checked BEFORE anything is built: `measure` computes what a value expands to
 * (nodes, and bytes of its JSON) in time linear in the document, each `$ref` target measured once and
 * reused at every reference (as lib/graphql/limits.ts measures fragments), and the request's
 * ExpansionBudget refuses when the sum would pass its limit. The expansion itself then charges the
 * budget node by node as a safety net (the measure cuts recursion on a cycle and can undercount
 * where deepResolve cuts it elsewhere), so what is built never exceeds the budget either.
 */
import { AsyncApiDocumentError, canonicalPointer, childPointer, escapeToken, isObject, lookup } from './resolve.js';

import { DEFAULT_ASYNCAPI_MAX_EXPANDED_NODES, DEFAULT_ASYNCAPI_MAX_RESPONSE_BYTES } from '../records/protocol.js';

export { DEFAULT_ASYNCAPI_MAX_EXPANDED_NODES, DEFAULT_ASYNCAPI_MAX_RESPONSE_BYTES };

/** Sums saturate here: a few kilobytes of fan-out describe 10^100 nodes. */
const SATURATED = Number.MAX_SAFE_INTEGER;
/**
 * Deepest nesting of an expanded value. Input JSON stops at 64 levels (MAX_JSON_DEPTH), but a chain of
 * schemas each referencing the next nests deeper once expanded, and the walks recurse.
 */
export const MAX_EXPANDED_DEPTH = 256;
const sum = (a: number, b: number): number => Math.min(SATURATED, a + b);

/** What an answer, or part of it, costs. */
export interface Cost {
  nodes: number;
  bytes: number;
}

/** The request's expansion would pass the budget: a 422 `work-budget-exceeded` problem. */
export class AsyncApiBudgetError extends AsyncApiDocumentError {
  /** Which limit: `max_expanded_nodes` or `max_response_bytes`. */
  readonly setting: 'max_expanded_nodes' | 'max_response_bytes';
  readonly limit: number;
  constructor(pointer: string, setting: 'max_expanded_nodes' | 'max_response_bytes', limit: number, measured: number, subject = 'the answer expands to') {
    const what = setting === 'max_expanded_nodes' ? `${limit} nodes` : `${limit} bytes of JSON`;
    const size = measured >= SATURATED ? '' : ` (${measured})`;
    super(pointer, `${subject} more than ${what}${size}, the AsyncApiConfig.${setting} budget of one request`);
    this.name = 'AsyncApiBudgetError';
    this.setting = setting;
    this.limit = limit;
  }
}

/** JSON size of a primitive (what JSON.stringify writes, escapes aside). */
function primitiveBytes(v: unknown): number {
  if (typeof v === 'string') return v.length + 2;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v).length;
  return 4; // null
}

/**
 * The budget of one request: every expansion of the request charges it.
 *
 * @example
 * const budget = new ExpansionBudget(config.max_expanded_nodes, config.max_response_bytes);
 * parseAsyncApi(spec, budget); // AsyncApiBudgetError (a 422) before building an answer past either limit
 */
export class ExpansionBudget {
  readonly maxNodes: number;
  readonly maxBytes: number;
  nodes = 0;
  bytes = 0;
  /** Measures of `$ref` targets (canonical pointer → cost), shared by every measure of the request. */
  readonly #memo = new Map<string, Cost>();
  readonly #inProgress = new Set<string>();

  constructor(maxNodes: number = DEFAULT_ASYNCAPI_MAX_EXPANDED_NODES, maxBytes: number = DEFAULT_ASYNCAPI_MAX_RESPONSE_BYTES) {
    this.maxNodes = maxNodes;
    this.maxBytes = maxBytes;
  }

  /** A budget that never refuses (the server's own configured document). */
  static unlimited(): ExpansionBudget {
    return new ExpansionBudget(Infinity, Infinity);
  }

  /** Refuse (AsyncApiBudgetError) when `cost` more would pass a limit; nothing is charged. */
  ensure(cost: Cost, pointer: string): void {
    const nodes = sum(this.nodes, cost.nodes);
    if (nodes > this.maxNodes) throw new AsyncApiBudgetError(pointer, 'max_expanded_nodes', this.maxNodes, nodes);
    const bytes = sum(this.bytes, cost.bytes);
    if (bytes > this.maxBytes) throw new AsyncApiBudgetError(pointer, 'max_response_bytes', this.maxBytes, bytes);
  }

  /** Charge `nodes` and `bytes` actually produced; AsyncApiBudgetError when a limit is passed. */
  charge(nodes: number, bytes: number, pointer: string): void {
    this.nodes = sum(this.nodes, nodes);
    this.bytes = sum(this.bytes, bytes);
    if (this.nodes > this.maxNodes) throw new AsyncApiBudgetError(pointer, 'max_expanded_nodes', this.maxNodes, this.nodes);
    if (this.bytes > this.maxBytes) throw new AsyncApiBudgetError(pointer, 'max_response_bytes', this.maxBytes, this.bytes);
  }

  /** Charge one JSON value of the answer: 1 node, its bytes (a string's, a key's) plus punctuation. */
  chargeValue(value: unknown, key: string | number | undefined, pointer: string): void {
    const keyBytes = typeof key === 'string' ? key.length + 4 : 1; // `"key":` and a comma, or a comma
    const own = Array.isArray(value) || isObject(value) ? 2 : primitiveBytes(value);
    this.charge(1, keyBytes + own, pointer);
  }

  /**
   * What `deepResolve(doc, value, pointer)` would produce, without producing it: linear in the
   * document, each `$ref` target measured once per request. A reference met again while its own
   * target is being measured (a recursive schema) costs what deepResolve keeps: `{"$ref": …}`.
   */
  measure(doc: unknown, value: unknown, pointer: string): Cost {
    const walk = (v: unknown, at: string, depth: number): Cost => {
      if (depth > MAX_EXPANDED_DEPTH) throw new AsyncApiDocumentError(pointer, `the value nests more than ${MAX_EXPANDED_DEPTH} levels once its $refs are expanded`);
      if (Array.isArray(v)) {
        let cost: Cost = { nodes: 1, bytes: 2 };
        v.forEach((item, i) => {
          const c = walk(item, childPointer(at, i), depth + 1);
          cost = { nodes: sum(cost.nodes, c.nodes), bytes: sum(cost.bytes, c.bytes + 1) };
        });
        return cost;
      }
      if (!isObject(v)) return { nodes: 1, bytes: primitiveBytes(v) };
      if (typeof v.$ref === 'string') {
        const target = canonicalPointer(v.$ref, at);
        if (this.#inProgress.has(target)) return { nodes: 2, bytes: v.$ref.length + 10 };
        const known = this.#memo.get(target);
        if (known) return known;
        this.#inProgress.add(target);
        const cost = walk(lookup(doc, v.$ref, at), target, depth);
        this.#inProgress.delete(target);
        this.#memo.set(target, cost);
        return cost;
      }
      let cost: Cost = { nodes: 1, bytes: 2 };
      for (const k in v) {
        const c = walk(v[k], childPointer(at, k), depth + 1);
        cost = { nodes: sum(cost.nodes, c.nodes), bytes: sum(cost.bytes, sum(c.bytes, k.length + 4)) };
      }
      return cost;
    };
    return walk(value, pointer, 0);
  }
}

/**
 * A copy of `value` with every local `$ref` replaced by its target. A reference back into a value
 * that is being expanded (a recursive schema) is kept as `{ "$ref": … }`: the result stays finite
 * and still says what the schema means.
 *
 * `budget` is the request's (lib/asyncapi/budget.ts): what the value expands to is measured first and
 * refused if it would pass the budget, so an expansion over it is never built; what is built is then
 * charged node by node. Default: a fresh budget with the default limits.
 */
export function deepResolve(doc: unknown, value: unknown, pointer: string, budget: ExpansionBudget = new ExpansionBudget()): unknown {
  budget.ensure(budget.measure(doc, value, pointer), pointer);
  // Where a value lives is only needed to resolve (and report) a `$ref`: it is kept as the pointer of the
  // last followed reference plus the keys below it, and written out only there. Each reference is resolved once.
  const targets = new Map<string, { target: string; value: unknown }>();
  const resolve = (ref: string, base: string, path: ReadonlyArray<string | number>) => {
    let known = targets.get(ref);
    if (!known) {
      const at = base + path.map((t) => '/' + escapeToken(String(t))).join('');
      known = { target: canonicalPointer(ref, at), value: lookup(doc, ref, at) };
      targets.set(ref, known);
    }
    return known;
  };
  const walk = (v: unknown, key: string | number | undefined, base: string, path: Array<string | number>, stack: Set<string>, depth: number): unknown => {
    if (depth > MAX_EXPANDED_DEPTH) throw new AsyncApiDocumentError(pointer, `the value nests more than ${MAX_EXPANDED_DEPTH} levels once its $refs are expanded`);
    if (isObject(v) && typeof v.$ref === 'string') {
      const { target, value: resolved } = resolve(v.$ref, base, path);
      if (stack.has(target)) {
        budget.chargeValue(v, key, pointer);
        budget.chargeValue(v.$ref, '$ref', pointer);
        return { $ref: v.$ref };
      }
      return walk(resolved, key, target, [], new Set(stack).add(target), depth);
    }
    budget.chargeValue(v, key, pointer);
    // Loops, not a closure per node: this runs for every value of the answer (71,666 in a near-budget
    // document), and a function made per node cost ~20% of the parse (more under tsx, which names each one).
    if (Array.isArray(v)) {
      const items: unknown[] = new Array(v.length);
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        items[i] = walk(v[i], i, base, path, stack, depth + 1);
        path.pop();
      }
      return items;
    }
    if (!isObject(v)) return v;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) {
      path.push(k);
      out[k] = walk(v[k], k, base, path, stack, depth + 1);
      path.pop();
    }
    return out;
  };
  return walk(value, undefined, pointer, [], new Set([pointer]), 0);
}
