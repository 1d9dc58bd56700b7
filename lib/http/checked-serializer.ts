/**
 * One pass that checks a response and writes it, for the schemas most APIs answer with: objects of
 * declared members (strings, numbers, integers, booleans, null, enums of those, `format`ted strings,
 * length and number bounds, nested objects, arrays of any of these) and `required`.
 *
 * Why keel writes this itself (issue 45): fast-json-stringify coerces rather than checks (`'x'` for an
 * integer becomes 0), so under `response_validation: 'strict'` every answer was walked twice — Ajv's
 * check, then fast-json-stringify's serialiser — and each date-time string was scanned twice, by its
 * format check and by the serialiser's escaping loop. Neither library offers a check that writes. Here a
 * value is read once: each member is checked as Ajv checks it and written as fast-json-stringify writes
 * it, and a date-time the check has accepted is known to need no escaping.
 *
 * The pass is conservative. It answers the JSON text only when the value is plainly valid; anything
 * else — a wrong or missing member, a Date outside 0000–9999, an object with `toJSON`, a string its
 * fast date-time scan does not vouch for — answers undefined, and the caller takes the checked path as
 * before (Ajv's check with every error listed, then fast-json-stringify), so a refusal, its log line
 * and every edge case stay theirs. A schema with any keyword outside the list below gets no pass at all.
 * Tests (lib/http/checked-serializer.test.ts) hold both promises on generated values: whatever the pass
 * writes, Ajv accepts and fast-json-stringify writes the same bytes.
 */
import { isPlainDateTime } from './date-time-format.js';
import { jsonString } from './problem-json.js';

/** The check-and-write of one schema: the JSON text, or undefined ("not plainly valid: take the checked path"). */
export type CheckedSerializer = (value: unknown) => string | undefined;

type Schema = Record<string, unknown>;
type FormatCheck = (value: string) => boolean;

/** Keywords that never change what is valid or what is written. */
const ANNOTATIONS = new Set(['title', 'description', '$comment', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$schema']);
const KEYWORDS: Record<string, ReadonlySet<string>> = {
  object: new Set(['type', 'properties', 'required', 'additionalProperties']),
  array: new Set(['type', 'items']),
  string: new Set(['type', 'enum', 'format', 'minLength', 'maxLength']),
  number: new Set(['type', 'enum', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']),
  integer: new Set(['type', 'enum', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']),
  boolean: new Set(['type', 'enum']),
  null: new Set(['type']),
};

/** Thrown while compiling: this schema gets no pass (the caller keeps the checked path). */
class Unsupported extends Error {}

/** The schema node's `type`, when the node is an object of that type's keywords and annotations only. */
function supportedType(schema: unknown): string {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) throw new Unsupported('schema');
  const type = (schema as Schema).type;
  if (typeof type !== 'string' || !KEYWORDS[type]) throw new Unsupported('type');
  for (const k of Object.keys(schema)) if (!KEYWORDS[type]!.has(k) && !ANNOTATIONS.has(k)) throw new Unsupported(k);
  return type;
}

/**
 * `minLength` ≤ length ≤ `maxLength` in code points, as Ajv counts them (its `ucs2length`: a surrogate pair is one,
 * a lone surrogate one). The UTF-16 length answers most strings without the count: code points ≤ units ≤ 2 × code points.
 */
function lengthWithin(s: string, min: number, max: number): boolean {
  const n = s.length;
  if (n < min) return false;
  if (n <= max && n >= 2 * min) return true;
  let points = 0;
  for (let i = 0; i < n; i++, points++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < n && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
  }
  return points >= min && points <= max;
}

/** A Date as fast-json-stringify writes it for `format: date-time` (toISOString(), for years 0–9999). */
function dateTime(d: Date): string | undefined {
  const t = d.getTime();
  // Outside 0000–9999 the ISO text is `+YYYYYY-…`, which the date-time check refuses: the checked path decides.
  return t >= -62167219200000 && t <= 253402300799999 ? '"' + d.toISOString() + '"' : undefined;
}

interface Context {
  /** Functions of the generated code, by name. */
  readonly scope: Map<string, unknown>;
  readonly formats: Record<string, unknown>;
  next: number;
  readonly code: string[];
}

function bind(ctx: Context, prefix: string, value: unknown): string {
  const name = `${prefix}${ctx.next++}`;
  ctx.scope.set(name, value);
  return name;
}

/** A format's check as a function, or Unsupported (an asynchronous or unknown format). */
function formatCheck(ctx: Context, name: unknown): FormatCheck {
  if (typeof name !== 'string') throw new Unsupported('format');
  const f = ctx.formats[name];
  const v = f && typeof f === 'object' && !(f instanceof RegExp) ? (f as { validate?: unknown; async?: unknown; type?: unknown }) : { validate: f };
  if ((v as { async?: unknown }).async || ((v as { type?: unknown }).type !== undefined && (v as { type?: unknown }).type !== 'string')) throw new Unsupported(`format ${name}`);
  if (v.validate instanceof RegExp) {
    const re = v.validate;
    return (s) => re.test(s);
  }
  if (typeof v.validate === 'function') return v.validate as FormatCheck;
  throw new Unsupported(`format ${name}`);
}

/**
 * Code that checks `x` against `schema` and appends its JSON to `out` (`${out} += …`), or returns
 * undefined from the enclosing function when it cannot vouch for the value.
 */
function emit(ctx: Context, schema: unknown, x: string, out: string): string {
  const type = supportedType(schema);
  const s = schema as Schema;
  // Bounds as Ajv reads them (draft 6 and later: exclusive bounds are numbers); the test is `return` when outside.
  let bounds = '';
  for (const [k, op] of [['minimum', '<'], ['maximum', '>'], ['exclusiveMinimum', '<='], ['exclusiveMaximum', '>=']] as const) {
    if (s[k] === undefined) continue;
    if (!Number.isFinite(s[k])) throw new Unsupported(k);
    bounds += `if (${x} ${op} ${JSON.stringify(s[k])}) return;\n`;
  }
  if (s.minLength !== undefined || s.maxLength !== undefined) {
    const min = s.minLength ?? 0;
    const max = s.maxLength ?? Infinity;
    if (!Number.isSafeInteger(min) || (max !== Infinity && !Number.isSafeInteger(max)) || (min as number) < 0) throw new Unsupported('length');
    bounds += `if (!lengthWithin(${x}, ${min}, ${max === Infinity ? 'Infinity' : max})) return;\n`;
  }
  if (s.enum !== undefined) {
    const ofType = (e: unknown) => (type === 'integer' ? Number.isInteger(e) : type === 'number' ? Number.isFinite(e) : typeof e === type);
    if (!Array.isArray(s.enum) || s.enum.length === 0 || !s.enum.every(ofType)) throw new Unsupported('enum');
    const test = s.enum.map((e) => `${x} === ${JSON.stringify(e)}`).join(' || ');
    // Each value is one of the enum's: its JSON is known when no member needs escaping.
    const plain = s.enum.every((e) => typeof e !== 'string' || JSON.stringify(e) === `"${e}"`);
    return `if (!(${test})) return;\n${bounds}${out} += ${type === 'string' && !plain ? `quote(${x})` : type === 'string' ? `'"' + ${x} + '"'` : `'' + ${x}`};\n`;
  }
  switch (type) {
    case 'string': {
      if (s.format === undefined) return `if (typeof ${x} !== 'string') return;\n${bounds}${out} += quote(${x});\n`;
      if (s.format === 'date-time') {
        // A date-time the scan vouches for is digits, '-', ':', 'T', '.', 'Z' and '+' only: nothing to escape.
        if (bounds) throw new Unsupported('length of a date-time'); // a Date's length is its ISO text's: left to the check
        return `if (typeof ${x} === 'string') { if (!isPlainDateTime(${x})) return; ${out} += '"' + ${x} + '"'; }\n`
          + `else if (${x} instanceof Date && Object.getPrototypeOf(${x}) === Date.prototype && !Object.hasOwn(${x}, 'toJSON')) { const d = dateTime(${x}); if (d === undefined) return; ${out} += d; }\n`
          + 'else return;\n';
      }
      const f = bind(ctx, 'format', formatCheck(ctx, s.format));
      return `if (typeof ${x} !== 'string' || !${f}(${x})) return;\n${bounds}${out} += quote(${x});\n`;
    }
    case 'integer': return `if (!Number.isInteger(${x})) return;\n${bounds}${out} += '' + ${x};\n`;
    case 'number': return `if (typeof ${x} !== 'number' || !Number.isFinite(${x})) return;\n${bounds}${out} += '' + ${x};\n`;
    case 'boolean': return `if (${x} === true) ${out} += 'true'; else if (${x} === false) ${out} += 'false'; else return;\n`;
    case 'null': return `if (${x} !== null) return;\n${out} += 'null';\n`;
    case 'array': {
      const f = compileNode(ctx, s.items);
      return `if (!Array.isArray(${x})) return;\n{ const n = ${x}.length; ${out} += '['; for (let i = 0; i < n; i++) { const e = ${f}(${x}[i]); if (e === undefined) return; ${out} += i === 0 ? e : ',' + e; } ${out} += ']'; }\n`;
    }
    default: { // object
      const f = compileObject(ctx, s);
      return `{ const o = ${f}(${x}); if (o === undefined) return; ${out} += o; }\n`;
    }
  }
}

/** An object schema's function: its declared members in the schema's order, as fast-json-stringify writes them. */
function compileObject(ctx: Context, s: Schema): string {
  const properties = s.properties;
  if (properties === null || typeof properties !== 'object' || Array.isArray(properties) || Object.keys(properties).length === 0) {
    throw new Unsupported('properties'); // a free-form object is written whole: the checked path serves it
  }
  if (s.additionalProperties !== undefined && s.additionalProperties !== false) throw new Unsupported('additionalProperties');
  const required = s.required === undefined ? [] : s.required;
  if (!Array.isArray(required) || required.some((r) => typeof r !== 'string' || !Object.hasOwn(properties, r))) throw new Unsupported('required');
  const name = `object${ctx.next++}`;
  // Required members first, each group in the schema's order: fast-json-stringify's order (a stable sort).
  const members = Object.entries(properties as Schema).sort(([a], [b]) => Number(required.includes(b)) - Number(required.includes(a)));
  // With a required member first, the opening brace goes with its name (one append less, as fast-json-stringify does).
  const opensWithFirst = members.length > 0 && required.includes(members[0]![0]);
  let body = `if (typeof v !== 'object' || v === null || Array.isArray(v) || typeof v.toJSON === 'function') return;\nlet json = ${opensWithFirst ? "''" : "'{'"};\n`;
  // Whether a member is certainly written before this one (then the comma is certain too).
  let written = false;
  members.forEach(([key, sub], i) => {
    if (key === '__proto__') throw new Unsupported('__proto__');
    const x = `m${i}`;
    const isRequired = required.includes(key);
    const label = JSON.stringify(JSON.stringify(key) + ':');
    const comma = i === 0 ? (opensWithFirst ? `'{' + ${label}` : label) : written ? `',' + ${label}` : `(json.length > 1 ? ',' + ${label} : ${label})`;
    body += `const ${x} = v[${JSON.stringify(key)}];\n`
      + `if (${x} !== undefined) {\njson += ${comma};\n${emit(ctx, sub, x, 'json')}}${isRequired ? ' else return;' : ''}\n`;
    if (isRequired) written = true;
  });
  body += `return json + '}';\n`;
  ctx.code.push(`function ${name}(v) {\n${body}}`);
  return name;
}

/** The function of any schema node: `(value) => JSON text | undefined`. */
function compileNode(ctx: Context, schema: unknown): string {
  if (supportedType(schema) === 'object') return compileObject(ctx, schema as Schema);
  const name = `node${ctx.next++}`;
  ctx.code.push(`function ${name}(v) {\nlet json = '';\n${emit(ctx, schema, 'v', 'json')}return json;\n}`);
  return name;
}

/**
 * The check-and-write of `schema`, or undefined when the schema uses anything outside the supported
 * list (the checked path serves it whole). `formats`: the checking Ajv's formats (`ajv.formats`), so a
 * format means here what it means to the check.
 */
export function compileCheckedSerializer(schema: Schema, formats: Record<string, unknown>): CheckedSerializer | undefined {
  const ctx: Context = { scope: new Map(), formats, next: 0, code: [] };
  let root: string;
  try {
    root = compileNode(ctx, schema);
  } catch (err) {
    if (err instanceof Unsupported) return undefined;
    throw err;
  }
  const names = ['quote', 'dateTime', 'isPlainDateTime', 'lengthWithin', ...ctx.scope.keys()];
  // `quote`: a string as JSON.stringify writes it, which is also what fast-json-stringify's escaping writes.
  const values = [jsonString, dateTime, isPlainDateTime, lengthWithin, ...ctx.scope.values()];
  // Generated from the schema's own keys and values only through JSON.stringify (no schema text is code).
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function(...names, `'use strict';\n${ctx.code.join('\n')}\nreturn ${root};`)(...values) as CheckedSerializer;
}
