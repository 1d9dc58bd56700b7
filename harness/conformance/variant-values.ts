/**
 * Generated variants, part 1: other failing values for a validation error's keyword and bound, and the
 * error item derived with them. Keyed on what the case is — the JSON Schema keyword the sent value
 * fails at the item's `loc` (error-situation.ts) — never on case ids. A variant is checked by reading
 * its situation again: the new value must fail the same keyword alone, or no variant is made.
 */
import { isDeepStrictEqual } from 'node:util';
import { schemaAt, situationOf } from './error-situation.js';
import type { ConformanceCase } from './types.js';
import { type Rng, word } from './variant-rng.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** ctx members that name a bound of the schema (they stay as the base case has them). */
const BOUND_KEYS = new Set(['min_length', 'max_length', 'ge', 'gt', 'le', 'lt', 'pattern', 'expected', 'multiple_of', 'min_items', 'max_items', 'format', 'exclusive_minimum', 'exclusive_maximum', 'minimum', 'maximum', 'unique_items', 'additional_properties']);
const headerName = (n: string) => n.toLowerCase().replace(/_/g, '-');

/** The value the request carries at a parameter or body `loc`, as sent (texts for parameters). */
interface Sent {
  /** A parameter's text(s), or the JSON body member. */
  raw: unknown;
}

function queryOf(c: ConformanceCase): { get(): URLSearchParams; set(p: URLSearchParams): void } | undefined {
  const req = c.request;
  if (req.query_string !== undefined) return { get: () => new URLSearchParams(req.query_string), set: (p) => { req.query_string = p.toString(); } };
  const q = req.path.indexOf('?');
  if (q >= 0) return { get: () => new URLSearchParams(req.path.slice(q + 1)), set: (p) => { req.path = `${req.path.slice(0, q)}?${p.toString()}`; } };
  return undefined;
}

function placeholderIndex(route: string, name: string): number {
  return route.split('/').findIndex((s) => new RegExp(`^\\{${name.replace(/[^A-Za-z0-9_]/g, '')}(:(?!path\\})[A-Za-z]+)?\\}$`).test(s));
}

/** Read (and, with `next`, replace) the value at `loc` in the case's request; undefined when this rule cannot say. */
export function valueAt(c: ConformanceCase, loc: readonly unknown[], next?: unknown): Sent | undefined {
  const [source, ...rest] = loc;
  const req = c.request;
  const name = String(rest[0]);
  if (source === 'body') {
    if (!isObject(req.body) && !Array.isArray(req.body)) return undefined;
    let parent: unknown = req.body;
    for (const k of rest.slice(0, -1)) parent = isObject(parent) || Array.isArray(parent) ? (parent as Json)[String(k)] : undefined;
    const key = String(rest[rest.length - 1]);
    if (!isObject(parent) || !(key in parent) || rest.length === 0) return undefined;
    const raw = parent[key];
    if (next !== undefined) parent[key] = next;
    return { raw };
  }
  if (rest.length !== 1) return undefined;
  if (source === 'query') {
    if (req.query_params && name in req.query_params) {
      const raw = req.query_params[name];
      if (next !== undefined) req.query_params[name] = next;
      return { raw: Array.isArray(raw) ? raw.map(String) : String(raw) };
    }
    const q = queryOf(c);
    const params = q?.get();
    if (!q || !params?.has(name)) return undefined;
    const all = params.getAll(name);
    if (next !== undefined) {
      params.delete(name);
      for (const v of [next].flat()) params.append(name, String(v));
      q.set(params);
    }
    return { raw: all.length === 1 ? all[0] : all };
  }
  if (source === 'path') {
    const i = placeholderIndex(c.handler.route, name);
    const [path, query] = req.path.split(/\?(.*)/s, 2) as [string, string | undefined];
    const segs = path.split('/');
    if (i < 0 || segs.length !== c.handler.route.split('/').length) return undefined;
    const raw = decodeURIComponent(segs[i]!);
    if (next !== undefined) {
      segs[i] = encodeURIComponent(String(next));
      req.path = segs.join('/') + (query !== undefined ? `?${query}` : '');
    }
    return { raw };
  }
  if (source === 'headers' || source === 'header') {
    const key = Object.keys(req.headers ?? {}).find((k) => headerName(k) === headerName(name));
    if (key === undefined) return undefined;
    const raw = req.headers![key];
    if (next !== undefined) req.headers![key] = String(next);
    return { raw };
  }
  if (source === 'cookie' || source === 'cookies') {
    if (!req.cookies || !(name in req.cookies)) return undefined;
    const raw = req.cookies[name];
    if (next !== undefined) req.cookies[name] = String(next);
    return { raw };
  }
  return undefined;
}

const int = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));

/** Candidate failing values for a keyword (texts for parameters, JSON for a body member). */
function candidates(situation: string, schema: Json, base: unknown, text: boolean, rng: Rng, source: string): unknown[] {
  const num = (n: number) => (text ? String(n) : n);
  const integer = schema.type === 'integer' || (isObject(schema.items) && schema.items.type === 'integer');
  const list = Array.isArray(base) ? base : [];
  switch (situation) {
    case 'minLength': {
      const min = Number(schema.minLength);
      const lo = source === 'body' ? 0 : 1;
      return min - 1 < lo ? [] : [word(rng, int(rng, lo, min - 1))];
    }
    case 'maxLength':
      return [word(rng, Number(schema.maxLength) + int(rng, 1, 40))];
    case 'minimum':
      return [num(integer ? Number(schema.minimum) - int(rng, 1, 500) : Number(schema.minimum) - int(rng, 1, 999) / 100)];
    case 'exclusiveMinimum':
      return [num(Number(schema.exclusiveMinimum) - (integer ? int(rng, 0, 500) : int(rng, 0, 999) / 100))];
    case 'maximum':
      return [num(integer ? Number(schema.maximum) + int(rng, 1, 500) : Number(schema.maximum) + int(rng, 1, 999) / 100)];
    case 'exclusiveMaximum':
      return [num(Number(schema.exclusiveMaximum) + (integer ? int(rng, 0, 500) : int(rng, 0, 999) / 100))];
    case 'multipleOf': {
      const k = Number(schema.multipleOf);
      const n = Math.round((typeof base === 'number' ? base : Number(base)) || 0) + int(rng, 1, 40);
      return [num(n % k === 0 ? n + 1 : n)];
    }
    case 'pattern': {
      const s = typeof base === 'string' ? base : word(rng, 6);
      const at = int(rng, 0, s.length);
      return [`${s.slice(0, at)}${'!#~'[int(rng, 0, 2)]}${s.slice(at)}`, `${word(rng, 4)} ${word(rng, 3)}`];
    }
    case 'enum':
      return [`${word(rng, 1)}${word(rng, int(rng, 4, 9))}`];
    case 'format:email':
      return [[`${word(rng, 6)}.example.com`, `${word(rng, 5)}@`, `@${word(rng, 5)}.org`][int(rng, 0, 2)]];
    case 'format:uuid':
      return [`${word(rng, 8)}-${word(rng, 4)}-zzzz-${word(rng, 4)}`];
    case 'format:ipv4':
      return [`${int(rng, 256, 999)}.${int(rng, 0, 255)}.${int(rng, 0, 255)}.${int(rng, 0, 255)}`];
    case 'format:date':
      return [`20${int(rng, 10, 39)}-${int(rng, 13, 99)}-${String(int(rng, 1, 28)).padStart(2, '0')}`];
    case 'format:date-time':
      return [`20${int(rng, 10, 39)}-01-01T${int(rng, 25, 99)}:00:00Z`];
    case 'format:uri':
      return [`not a uri ${word(rng, 5)}`];
    case 'type:integer':
      // Text of the same shape as the base's: a number that is not an integer is echoed as a number.
      return text && typeof base === 'string' && Number.isFinite(Number(base)) ? [`${int(rng, 1, 999)}.${int(rng, 1, 9)}`] : [word(rng, int(rng, 3, 8))];
    case 'type:number':
    case 'type:boolean':
      return [text ? `x${word(rng, int(rng, 3, 8))}` : `x${word(rng, 4)}`];
    case 'minItems': {
      const min = Number(schema.minItems);
      const lo = source === 'body' ? 0 : 1;
      if (min - 1 < lo || !list.length) return [];
      return [Array.from({ length: int(rng, lo, min - 1) }, () => (integer ? num(int(rng, 1, 9999)) : word(rng, int(rng, 2, 8))))];
    }
    case 'maxItems': {
      if (!list.length) return [];
      return [Array.from({ length: Number(schema.maxItems) + int(rng, 1, 4) }, (_, i) => (integer ? num(1000 * (i + 1) + int(rng, 0, 999)) : `${word(rng, 5)}${i}`))];
    }
    default:
      return [];
  }
}

/** The base value in the forms an item may echo it: as sent, and converted to the declared type. */
function forms(raw: unknown, schema: Json): unknown[] {
  const conv = (t: unknown, type: unknown) => (type === 'integer' || type === 'number') && typeof t === 'string' && t.trim() !== '' && Number.isFinite(Number(t)) ? Number(t) : t;
  const typed = Array.isArray(raw) ? raw.map((r) => conv(r, isObject(schema.items) ? schema.items.type : undefined)) : conv(raw, schema.type);
  return [raw, typed];
}

/** The item's `input` or a ctx value, moved from the base value to the new one in the same form; NO when it cannot be told. */
const NO = Symbol('underivable');
function moved(v: unknown, oldForms: unknown[], newForms: unknown[]): unknown {
  for (let i = 0; i < oldForms.length; i++) if (isDeepStrictEqual(v, oldForms[i])) return newForms[i];
  return NO;
}

/**
 * A variant of a 422 case with one error item: another value failing the same keyword (see the module
 * comment), with `input` and `ctx` derived; undefined when no such value or item can be derived.
 */
export function otherFailingValue(base: ConformanceCase, rng: Rng): ConformanceCase | undefined {
  const errors = (base.expected.body as Json | undefined)?.errors;
  if (base.expected.status_code !== 422 || !Array.isArray(errors) || errors.length !== 1 || !isObject(errors[0])) return undefined;
  const item = errors[0];
  const loc = item.loc;
  if (!Array.isArray(loc)) return undefined;
  const situation = situationOf(base, loc);
  const schema = schemaAt(base, loc);
  const sent = valueAt(base, loc);
  if (!situation || !schema || !sent) return undefined;
  const text = loc[0] !== 'body';
  for (const value of candidates(situation, schema, sent.raw, text, rng, String(loc[0]))) {
    const v = structuredClone(base);
    if (isDeepStrictEqual(value, sent.raw) || !valueAt(v, loc, value) || situationOf(v, loc) !== situation) continue;
    const after = valueAt(v, loc)!;
    const oldForms = forms(sent.raw, schema);
    const newForms = forms(after.raw, schema);
    const e = (v.expected.body as { errors: Json[] }).errors[0]!;
    if ('input' in item) {
      const input = moved(item.input, oldForms, newForms);
      if (input === NO) continue;
      e.input = input;
    }
    if (isObject(item.ctx)) {
      const ctx: Json = {};
      let ok = true;
      for (const [k, old] of Object.entries(item.ctx)) {
        if (k === 'actual_length' && typeof newForms[1] === 'string') ctx[k] = (newForms[1] as string).length;
        else if (k === 'actual_items' && Array.isArray(newForms[1])) ctx[k] = (newForms[1] as unknown[]).length;
        else if (BOUND_KEYS.has(k)) ctx[k] = old;
        else {
          const m = moved(old, oldForms, newForms);
          if (m === NO) ok = false;
          ctx[k] = m;
        }
      }
      if (!ok) continue;
      e.ctx = ctx;
    }
    // A message that quotes the value it was given cannot be re-worded by rule.
    const quoted = [sent.raw, ...oldForms].flat().map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).filter((s) => s && s.length >= 2);
    if (typeof item.msg === 'string' && quoted.some((q) => (item.msg as string).includes(q))) continue;
    return v;
  }
  return undefined;
}
