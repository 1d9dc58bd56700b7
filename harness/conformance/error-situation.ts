/**
 * What a validation error item of a case is about, read from the case itself: the JSON Schema
 * keyword that the value the case sends at the item's `loc` fails, under the schema the handler
 * declares there. "The same kind of validation error" (contradiction-rules.ts) is the same keyword,
 * whatever the item says about it: two items worded in different styles (`string_too_short` /
 * "String should have at least 3 characters" and `validation_error` / "String length must be at
 * least 3") are recognised as the same situation because the schema and the request say so, not
 * because a list pairs their words. A case the runner has never seen is read the same way.
 *
 * - a value the request does not carry: `required`;
 * - parameter text that does not convert to the declared type (the conversion rules of
 *   docs/conformance.md), or a body value of another JSON type: `type:<declared type>`;
 * - else each constraint keyword of the schema at `loc` is checked alone (Ajv); exactly one failing
 *   is the situation (`format` with its name: `format:email`). None, or several, is no situation:
 *   no rule is drawn from an item the runner cannot read with certainty.
 */
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { PATH_PARAM_TYPES } from '../../lib/app/router.js';
import { buildRequest } from './client.js';
import type { ConformanceCase } from './types.js';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Schema members that annotate or structure, not constrain, the value at a location. */
const NOT_CONSTRAINTS = new Set(['type', 'properties', 'required', 'additionalProperties', 'patternProperties', 'description', 'title', 'default', 'examples', 'example', 'annotation', 'optional', 'error_style', 'separator', 'source', 'alias', '$schema', '$id', 'nullable', 'deprecated', 'readOnly', 'writeOnly']);

/** `loc[0]` → the handler's parameter section. */
const SECTIONS: Record<string, string> = { query: 'query', path: 'path', header: 'headers', headers: 'headers', cookie: 'cookies', cookies: 'cookies' };

const PLACEHOLDER = /^\{([A-Za-z_][A-Za-z0-9_]*)(?::([A-Za-z]+))?\}$/;
/** Header names compare case-insensitively, `_` standing for `-` (as the corpus's parameters do). */
const headerName = (n: string) => n.toLowerCase().replace(/_/g, '-');

let ajv: Ajv | undefined;
function validator(): Ajv {
  if (!ajv) {
    // Quiet: an unknown format is ignored (the keyword then fails nothing), not logged.
    ajv = new Ajv({ strict: false, allErrors: false, validateFormats: true, logger: false });
    addFormats(ajv);
  }
  return ajv;
}

/** Whether `value` satisfies `schema` (a schema Ajv cannot compile satisfies nothing we can judge: undefined). */
function satisfies(schema: Json, value: unknown): boolean | undefined {
  try {
    return validator().validate(schema, value) as boolean;
  } catch {
    return undefined;
  }
}

/** The parameter declared for `loc` (typed route placeholders included), or undefined. */
function parameterSchema(c: ConformanceCase, section: string, name: string): Json | undefined {
  const declared = (c.handler.parameters as Record<string, Record<string, Json>> | undefined)?.[section];
  if (declared) {
    const key = Object.keys(declared).find((k) => (section === 'headers' ? headerName(k) === headerName(name) : k === name));
    if (key !== undefined && isObject(declared[key])) return declared[key];
  }
  if (section === 'path') {
    for (const seg of c.handler.route.split('/')) {
      const m = PLACEHOLDER.exec(seg);
      if (m && m[1] === name && m[2]) return { ...((PATH_PARAM_TYPES as Record<string, Json>)[m[2]] ?? {}) };
    }
  }
  return undefined;
}

/** A local `$ref` (`#/definitions/x`, `#/$defs/x`) resolved against the root schema (a few hops at most). */
function deref(s: unknown, root: unknown): unknown {
  for (let hops = 0; hops < 8 && isObject(s) && typeof s.$ref === 'string' && s.$ref.startsWith('#/'); hops++) {
    let t: unknown = root;
    for (const part of s.$ref.slice(2).split('/')) t = isObject(t) ? t[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    s = t;
  }
  return s;
}

/** The member `k` of an object schema: its `properties`, those of its `allOf` parts, else `additionalProperties`. */
function member(s: Json, k: string, root: unknown): unknown {
  if (isObject(s.properties) && k in s.properties) return s.properties[k];
  for (const part of Array.isArray(s.allOf) ? s.allOf : []) {
    const p = deref(part, root);
    if (isObject(p) && isObject(p.properties) && k in p.properties) return p.properties[k];
  }
  return isObject(s.additionalProperties) ? s.additionalProperties : undefined;
}

/** The schema the handler declares at an error item's `loc`. */
export function schemaAt(c: ConformanceCase, loc: readonly unknown[]): Json | undefined {
  const [source, ...rest] = loc;
  if (source === 'body') {
    const root = c.handler.body_schema;
    let s: unknown = deref(root, root);
    for (const k of rest) {
      if (!isObject(s)) return undefined;
      const index = typeof k === 'number' || (typeof k === 'string' && /^\d+$/.test(k));
      s = deref(index && (s.type === 'array' || 'items' in s) ? s.items : member(s, String(k), root), root);
    }
    return isObject(s) ? s : undefined;
  }
  const section = SECTIONS[String(source)];
  if (!section || rest.length !== 1) return undefined;
  return parameterSchema(c, section, String(rest[0]));
}

/** Values of a path's placeholders, matched segment by segment (`{x:path}` takes the rest). */
function pathValues(route: string, path: string): Record<string, string> {
  const out: Record<string, string> = {};
  const want = route.split('/');
  const got = path.replace(/[?#].*$/, '').split('/');
  for (let i = 0; i < want.length; i++) {
    const m = PLACEHOLDER.exec(want[i]!);
    if (!m) continue;
    const raw = m[2] === 'path' ? got.slice(i).join('/') : got[i];
    if (raw === undefined) continue;
    try {
      out[m[1]!] = decodeURIComponent(raw);
    } catch {
      out[m[1]!] = raw;
    }
  }
  return out;
}

/** The value the case's request carries at `loc`: text (or texts) for parameters, JSON for a body. */
function sentAt(c: ConformanceCase, loc: readonly unknown[]): { present: boolean; value?: unknown } {
  const [source, ...rest] = loc;
  const name = String(rest[0]);
  const req = c.request;
  if (source === 'body') {
    let v: unknown = req.body !== undefined ? req.body : req.form_data !== undefined ? req.form_data : req.data;
    // A urlencoded body written as text (`"quantity=0"`) carries texts, as parameters do.
    if (typeof v === 'string' && /x-www-form-urlencoded/i.test(contentTypeOf(c))) v = formFields(v);
    for (const k of rest) {
      if (Array.isArray(v) && /^\d+$/.test(String(k))) v = v[Number(k)];
      else if (isObject(v) && String(k) in v) v = v[String(k)];
      else return { present: false };
    }
    return v === undefined ? { present: false } : { present: true, value: v };
  }
  if (source === 'query') {
    const wire = buildRequest(req);
    const q = wire.path.indexOf('?');
    const values = new URLSearchParams(q < 0 ? '' : wire.path.slice(q + 1)).getAll(name);
    return values.length ? { present: true, value: values } : { present: false };
  }
  if (source === 'path') {
    const v = pathValues(c.handler.route, req.path)[name];
    return v === undefined || v === '' ? { present: false } : { present: true, value: v };
  }
  if (source === 'headers' || source === 'header') {
    const key = Object.keys(req.headers ?? {}).find((k) => headerName(k) === headerName(name));
    return key === undefined ? { present: false } : { present: true, value: req.headers![key] };
  }
  if (source === 'cookie' || source === 'cookies') {
    if (req.cookies && name in req.cookies) return { present: true, value: req.cookies[name] };
    const header = Object.entries(req.headers ?? {}).find(([k]) => k.toLowerCase() === 'cookie')?.[1];
    const pair = header?.split(';').map((p) => p.trim()).find((p) => p.startsWith(`${name}=`));
    return pair === undefined ? { present: false } : { present: true, value: pair.slice(name.length + 1) };
  }
  return { present: false };
}

function contentTypeOf(c: ConformanceCase): string {
  const h = Object.entries(c.request.headers ?? {}).find(([k]) => k.toLowerCase() === 'content-type')?.[1];
  return String(h ?? c.request.content_type ?? c.handler.content_type ?? '');
}

/** `a=1&b=2&b=3&c[]=4` → `{a: '1', b: ['2', '3'], c: ['4']}` (`name[]` is the list form of `name`). */
function formFields(text: string): Json {
  const out: Json = {};
  for (const [key, v] of new URLSearchParams(text)) {
    const list = key.endsWith('[]');
    const k = list ? key.slice(0, -2) : key;
    out[k] = k in out ? ([] as unknown[]).concat(out[k], v) : list ? [v] : v;
  }
  return out;
}

/** Whether a body value at `loc` arrived as text to convert (a form field) rather than JSON. */
function isFormBody(c: ConformanceCase): boolean {
  return c.request.body === undefined || typeof c.request.body === 'string' ? /x-www-form-urlencoded|multipart\/form-data/i.test(contentTypeOf(c)) || c.request.form_data !== undefined || c.request.data !== undefined : false;
}

const NOT_CONVERTED = Symbol('not converted');

/** Parameter text → the declared type (docs/conformance.md, "Parameter text to typed values"). */
function convert(text: string, type: unknown): unknown {
  switch (type) {
    case 'integer':
      return /^[+-]?\d+$/.test(text) ? Number(text) : NOT_CONVERTED;
    case 'number':
      return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : NOT_CONVERTED;
    case 'boolean':
      return /^(true|1)$/i.test(text) ? true : /^(false|0|)$/i.test(text) ? false : NOT_CONVERTED;
    default:
      return text;
  }
}

/** The typed value of a parameter (a list for an array parameter), or NOT_CONVERTED. */
function parameterValue(schema: Json, sent: unknown): unknown {
  const texts = (Array.isArray(sent) ? sent : [sent]).map(String);
  if (schema.type === 'array') {
    const sep = typeof schema.separator === 'string' ? schema.separator : undefined;
    const items = sep && texts.length === 1 ? texts[0]!.split(sep) : texts;
    const itemType = isObject(schema.items) ? schema.items.type : undefined;
    const out = items.map((t) => convert(t, itemType));
    return out.includes(NOT_CONVERTED) ? NOT_CONVERTED : out;
  }
  // A single-valued parameter takes the first of repeated values.
  return convert(texts[0]!, schema.type);
}

/**
 * The situation of the error item at `loc` in case `c` (see the module comment), or undefined when
 * the case does not say it with certainty.
 */
export function situationOf(c: ConformanceCase, loc: unknown): string | undefined {
  if (!Array.isArray(loc) || loc.length === 0) return undefined;
  const schema = schemaAt(c, loc);
  if (!schema) return undefined;
  const sent = sentAt(c, loc);
  if (!sent.present) return 'required';
  const type = Array.isArray(schema.type) ? schema.type.join('|') : schema.type;
  let value = sent.value;
  if (loc[0] !== 'body' || (isFormBody(c) && (typeof value === 'string' || (Array.isArray(value) && value.every((v) => typeof v === 'string'))))) {
    value = parameterValue(schema, value);
    if (value === NOT_CONVERTED) return `type:${String(type)}`;
  } else if (type !== undefined && satisfies({ type: schema.type }, value) === false) {
    return `type:${String(type)}`;
  }
  const failing: string[] = [];
  for (const [keyword, arg] of Object.entries(schema)) {
    if (NOT_CONSTRAINTS.has(keyword)) continue;
    const ok = satisfies({ [keyword]: arg }, value);
    if (ok === undefined) return undefined;
    if (ok) continue;
    if (keyword === 'format') failing.push(`format:${String(arg)}`);
    // oneOf fails two ways that are worded apart: no subschema matches, or several do.
    else if (keyword === 'oneOf' && Array.isArray(arg)) failing.push(arg.some((sub) => isObject(sub) && satisfies(sub, value)) ? 'oneOf:several' : 'oneOf:none');
    else failing.push(keyword);
  }
  return failing.length === 1 ? failing[0] : undefined;
}
