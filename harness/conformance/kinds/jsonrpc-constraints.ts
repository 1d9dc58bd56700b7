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

/** The statements of an error's data: itself, or each of its `errors`. */
function statements(data: Json): Json[] {
  const list = Array.isArray(data.errors) ? data.errors.filter(isObject) : [data];
  return list.filter((s) => typeof s.fieldPath === 'string' && typeof s.constraint === 'string');
}

/**
 * The params schema an expected -32602's data declares, or undefined when the data is not in the
 * validation format (or states nothing a schema can say).
 */
export function paramsSchemaFromConstraints(data: unknown): Json | undefined {
  if (!isObject(data)) return undefined;
  const root: Json = { type: 'object' };
  let said = false;
  for (const s of statements(data)) {
    const path = fieldPathSegments(s.fieldPath as string);
    const constraint = s.constraint as string;
    const details = typeof s.details === 'string' ? s.details : '';
    if (!path.length) continue;
    if (constraint === 'required') {
      const last = path[path.length - 1]!;
      if (typeof last !== 'string') continue;
      const parent = nodeAt(root, path.slice(0, -1));
      parent.type ??= 'object';
      parent.required = [...new Set([...((parent.required as string[] | undefined) ?? []), last])];
      said = true;
      continue;
    }
    const kw = keywordOf(constraint, details);
    if (!kw) continue;
    nodeAt(root, path)[kw[0]] = kw[1];
    said = true;
  }
  return said ? root : undefined;
}
