/**
 * The params schema a JSON-RPC validation item declares. The corpus's validation items (format:
 * testing_data/jsonrpc/validation/schema.json) say which JSON Schema constraint the params break —
 * `{fieldPath, constraint, value?, details}`, or several under `errors` — where a method document
 * would give `params_schema`. That statement is the method's declaration (the handler's own data),
 * so the kind writes it as a JSON Schema and the server validates the params against it: the -32602
 * answer stays the server's (JSON-RPC 2.0 §5.1), produced by its own params validation.
 *
 * Each `constraint` is a JSON Schema keyword; its bound is the number the item's `details` states
 * ("String length must be at least 2" → minLength 2), a `type` the type it expects ("Expected type
 * integer, got string"), a `format` the format it names ("Invalid email format"), an `enum` the list
 * after "one of:". A statement that gives no bound adds nothing (the case then fails, visibly).
 *
 * Method documents word the same statements without the keyword: `{field, reason}`, a list
 * `errors: [{field, message}]`, or an object of messages by field (`errors: {address: {zip:
 * "…"}}`, list items by `index`). The keyword is then read from the words (wordedKeyword): required
 * or missing; "Expected <type>", "must be a <type>" (or an `expected_type` member); "<format> format",
 * "valid <format>"; "one of: …"; "must not be empty"; non-negative, positive; "N digits" (a pattern);
 * "between A and B" (the bound the value sent breaks); a number with at least / at most / not exceed /
 * less than / greater than / too short / too long: a length bound for a string or list value (the
 * value the call sends at that field), else a numeric one.
 */
import { isObject, type Json } from './kind.js';

/** Keywords whose bound is a number stated in `details`. */
const NUMERIC = new Set(['minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'multipleOf']);
const TYPES = new Set(['string', 'integer', 'number', 'boolean', 'object', 'array', 'null']);
/** Formats ajv-formats knows, by the words the corpus uses for them ("Invalid UUID format"). */
const FORMATS: Record<string, string> = { email: 'email', uuid: 'uuid', uri: 'uri', url: 'uri', ipv4: 'ipv4', ipv6: 'ipv6', hostname: 'hostname', date: 'date', time: 'time', 'date-time': 'date-time', datetime: 'date-time' };

/** `user.tags[1].name` → ['user', 'tags', 1, 'name'] (numbers are array items). */
export function fieldPathSegments(path: string): Array<string | number> {
  const out: Array<string | number> = [];
  for (const part of path.split('.')) {
    const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) return [];
    if (m[1]) out.push(m[1]);
    for (const idx of m[2]!.matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]));
  }
  return out;
}

/** The schema node at `path` under `root` (object properties, array items), created on the way. */
function nodeAt(root: Json, path: ReadonlyArray<string | number>): Json {
  let node = root;
  for (const seg of path) {
    if (typeof seg === 'number') {
      node.type ??= 'array';
      node = (node.items ??= {}) as Json;
    } else {
      node.type ??= 'object';
      const props = (node.properties ??= {}) as Json;
      node = (props[seg] ??= {}) as Json;
    }
  }
  return node;
}

/** The JSON Schema keyword and value one statement declares, or undefined when it states no bound. */
function keywordOf(constraint: string, details: string): [string, unknown] | undefined {
  if (NUMERIC.has(constraint)) {
    const n = /-?\d+(?:\.\d+)?/.exec(details);
    return n ? [constraint, Number(n[0])] : undefined;
  }
  if (constraint === 'type') {
    const t = /expected (?:type )?(\w+)/i.exec(details)?.[1]?.toLowerCase();
    return t && TYPES.has(t) ? ['type', t] : undefined;
  }
  if (constraint === 'format') {
    const f = /([\w-]+) format/i.exec(details)?.[1]?.toLowerCase() ?? /format:?\s*([\w-]+)/i.exec(details)?.[1]?.toLowerCase();
    return f && FORMATS[f] ? ['format', FORMATS[f]] : undefined;
  }
  if (constraint === 'enum') {
    const list = /one of:?\s*(.+)$/i.exec(details)?.[1];
    return list ? ['enum', list.split(',').map((s) => s.trim().replace(/^['"]|['"]$/g, '')).filter(Boolean)] : undefined;
  }
  if (constraint === 'uniqueItems') return ['uniqueItems', true];
  if (constraint === 'additionalProperties') return ['additionalProperties', false];
  return undefined;
}

/** One statement: where, which keyword (or undefined: read it from the words), and the words. */
interface Statement { path: Array<string | number>; constraint?: string; words: string; bounds: Json }

/** Messages by field (`{address: {zip: "…"}, items: [{index: 0, quantity: "…"}]}`) as statements. */
function byField(node: unknown, path: Array<string | number>, out: Statement[]): void {
  if (typeof node === 'string') {
    if (path.length) out.push({ path, words: node, bounds: {} });
  } else if (Array.isArray(node)) {
    for (const item of node.filter(isObject)) {
      const { index, ...rest } = item;
      byField(rest, typeof index === 'number' ? [...path, index] : path, out);
    }
  } else if (isObject(node)) {
    for (const [k, v] of Object.entries(node)) byField(v, [...path, k], out);
  }
}

/** The statements of an error's data (see the module comment). */
function statements(data: Json): Statement[] {
  const list = Array.isArray(data.errors) ? data.errors.filter(isObject) : isObject(data.errors) ? [] : [data];
  const out: Statement[] = [];
  for (const s of list) {
    const field = typeof s.fieldPath === 'string' ? s.fieldPath : typeof s.field === 'string' ? s.field : undefined;
    const words = [s.details, s.reason, s.message].find((w) => typeof w === 'string') as string | undefined;
    if (field === undefined || (typeof s.constraint !== 'string' && words === undefined)) continue;
    out.push({ path: fieldPathSegments(field), ...(typeof s.constraint === 'string' ? { constraint: s.constraint } : {}), words: words ?? '', bounds: s });
  }
  if (isObject(data.errors)) byField(data.errors, [], out);
  return out;
}

/** The value the call sends at `path`. */
function valueAt(params: unknown, path: ReadonlyArray<string | number>): unknown {
  let v = params;
  for (const seg of path) v = v !== null && typeof v === 'object' ? (v as Record<string | number, unknown>)[seg] : undefined;
  return v;
}

const LOWER = /\b(?:at least|minimum|min|no less than|greater than or equal to)\b/i;
const UPPER = /\b(?:at most|maximum|max|not exceed|no more than|less than or equal to)\b/i;

/** The keyword a reason worded without one states (see the module comment), or 'required'. */
export function wordedKeyword(words: string, value: unknown, bounds: Json = {}): [string, unknown] | 'required' | undefined {
  if (/\b(?:required|missing)\b/i.test(words)) return 'required';
  const typed = keywordOf('type', words);
  if (typed && /expected/i.test(words)) return typed;
  const named = /must be an? (string|integer|number|boolean|object|array)\b/i.exec(words)?.[1] ?? (typeof bounds.expected_type === 'string' ? bounds.expected_type : undefined);
  if (named && TYPES.has(named.toLowerCase())) return ['type', named.toLowerCase()];
  const format = keywordOf('format', words) ?? keywordOf('format', `${/valid ([\w-]+)/i.exec(words)?.[1] ?? ''} format`);
  if (format) return format;
  if (/one of/i.test(words)) return keywordOf('enum', words);
  const length = typeof value === 'string' ? 'Length' : Array.isArray(value) ? 'Items' : undefined;
  if (/not be empty|not be blank/i.test(words)) return length ? [`min${length}`, 1] : undefined;
  if (/non-negative/i.test(words)) return ['minimum', 0];
  if (/\bpositive\b/i.test(words)) return ['exclusiveMinimum', 0];
  const digits = /\b(\d+) digits\b/i.exec(words);
  if (digits && typeof value === 'string') return ['pattern', `^[0-9]{${digits[1]}}$`];
  // "between A and B": the side the value the call sends is on.
  const between = /between (-?\d+(?:\.\d+)?) and (-?\d+(?:\.\d+)?)/i.exec(words);
  if (between) {
    const [lo, hi] = [Number(between[1]), Number(between[2])];
    const size = typeof value === 'string' || Array.isArray(value) ? value.length : typeof value === 'number' ? value : undefined;
    if (size === undefined) return undefined;
    return size < lo ? [length ? `min${length}` : 'minimum', lo] : [length ? `max${length}` : 'maximum', hi];
  }
  const stated = /-?\d+(?:\.\d+)?/.exec(words);
  const n = stated ? Number(stated[0]) : typeof bounds.max_value === 'number' && UPPER.test(words) ? bounds.max_value : typeof bounds.min_value === 'number' && LOWER.test(words) ? bounds.min_value : undefined;
  if (n === undefined) return undefined;
  if (/\bless than\b/i.test(words) && !/or equal/i.test(words)) return length ? [`max${length}`, n - 1] : ['exclusiveMaximum', n];
  if (/\bgreater than\b/i.test(words) && !/or equal/i.test(words)) return length ? [`min${length}`, n + 1] : ['exclusiveMinimum', n];
  if (LOWER.test(words) || /exceeds? (?:the )?min|too short/i.test(words)) return [length ? `min${length}` : 'minimum', n];
  if (UPPER.test(words) || /exceeds?|too long/i.test(words)) return [length ? `max${length}` : 'maximum', n];
  return undefined;
}

/**
 * The params schema an expected -32602's data declares, or undefined when the data is not in the
 * validation format (or states nothing a schema can say).
 */
export function paramsSchemaFromConstraints(data: unknown, params?: unknown): Json | undefined {
  if (!isObject(data)) return undefined;
  const root: Json = { type: 'object' };
  let said = false;
  for (const s of statements(data)) {
    const { path } = s;
    if (!path.length) continue;
    const kw = s.constraint === undefined ? wordedKeyword(s.words, valueAt(params, path), s.bounds) : s.constraint === 'required' ? 'required' : keywordOf(s.constraint, s.words);
    if (kw === 'required') {
      const last = path[path.length - 1]!;
      if (typeof last !== 'string') continue;
      const parent = nodeAt(root, path.slice(0, -1));
      parent.type ??= 'object';
      parent.required = [...new Set([...((parent.required as string[] | undefined) ?? []), last])];
      said = true;
      continue;
    }
    if (!kw) continue;
    nodeAt(root, path)[kw[0]] = kw[1];
    said = true;
  }
  return said ? root : undefined;
}
