/**
 * Strings to schema types: path, query, header and cookie values, and form fields (urlencoded or
 * multipart), arrive as text; each is converted to its schema's type before validation, so
 * `?limit=10` and `age=30` satisfy `{type: 'integer'}`. JSON bodies are never converted.
 */
import type { ValidationIssue } from './validation-errors.js';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from './content.js';

export function schemaType(schema: Record<string, unknown>): string | undefined {
  const t = schema.type;
  if (Array.isArray(t)) return t.find((x) => x !== 'null') as string | undefined;
  return typeof t === 'string' ? t : undefined;
}

/**
 * Integer text as the reference reads it (Rust's `str::parse::<i64>`): an optional sign and ASCII
 * digits, nothing around them (no blanks, no `1.0`, no `1e3`), within the 64-bit range.
 */
const INT = /^[+-]?\d+$/;

/** Whether integer text (INT) is within the 64-bit range, compared as text: no big-number parsing of long input. */
function withinI64(raw: string): boolean {
  const negative = raw.charCodeAt(0) === 0x2d;
  let i = negative || raw.charCodeAt(0) === 0x2b ? 1 : 0;
  while (i < raw.length - 1 && raw.charCodeAt(i) === 0x30) i++;
  const digits = raw.length - i;
  if (digits !== 19) return digits < 19;
  return raw.slice(i) <= (negative ? '9223372036854775808' : '9223372036854775807');
}
/**
 * Number text as the reference reads it (Rust's `str::parse::<f64>`): decimal digits with an optional
 * sign, point and exponent; no blanks, no `0x…`/`0b…`, no `_`. (`inf` and `nan` parse there too, but
 * become JSON null and fail as "not a number" all the same, so they are left out here.)
 */
const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Number text that is not integer text (`42.5`, `1e3`) as its number; anything else as sent. */
function numberOr(raw: string): unknown {
  return !INT.test(raw) && NUMERIC.test(raw) && Number.isFinite(Number(raw)) ? Number(raw) : raw;
}

/**
 * Boolean text in a path, query, header or cookie value, as the reference reads it: `true`/`false`
 * in any case, `1`/`0`, and a blank value as false. Nothing else (`yes`, `on`, ` true`) is a boolean.
 */
function parseBoolean(raw: string): boolean | typeof UNCONVERTIBLE {
  if (raw === '1') return true;
  if (raw === '0' || raw === '') return false;
  const lower = raw.length === 4 || raw.length === 5 ? raw.toLowerCase() : '';
  return lower === 'true' ? true : lower === 'false' ? false : UNCONVERTIBLE;
}

/** What a coercer returns for text that does not convert (a sentinel, so success allocates nothing). */
export const UNCONVERTIBLE: unique symbol = Symbol('keel.unconvertible');

/** Text → one scalar type, or UNCONVERTIBLE. */
export type Coercer = (raw: string) => unknown;

/** Integer text this short is read by shortInteger(): at most 15 digits, exact as a double. */
const SHORT_INTEGER = 15;

/**
 * INT text of up to SHORT_INTEGER characters as its number (Number()'s, -0 included), else UNCONVERTIBLE:
 * one loop over the characters, where the regular expression and Number() cost ~700 instructions per
 * parameter (a path id on every request; issue 48).
 */
function shortInteger(raw: string): number | typeof UNCONVERTIBLE {
  let i = 0;
  let negative = false;
  const first = raw.charCodeAt(0);
  if (first === 0x2d || first === 0x2b) {
    if (raw.length === 1) return UNCONVERTIBLE;
    negative = first === 0x2d;
    i = 1;
  }
  let v = 0;
  for (; i < raw.length; i++) {
    const d = raw.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return UNCONVERTIBLE;
    v = v * 10 + d;
  }
  return negative ? -v : v;
}

const toInteger: Coercer = (raw) => {
  if (raw.length > 0 && raw.length <= SHORT_INTEGER) return shortInteger(raw);
  if (!INT.test(raw)) return UNCONVERTIBLE;
  // Past 15 digits the text may leave the 64-bit range the reference parses into.
  if (raw.length > 15 && !withinI64(raw)) return UNCONVERTIBLE;
  return Number(raw);
};
const toNumber: Coercer = (raw) => {
  if (!NUMERIC.test(raw)) return UNCONVERTIBLE;
  const n = Number(raw);
  return Number.isFinite(n) ? n : UNCONVERTIBLE;
};
const toBoolean: Coercer = parseBoolean;
/** JSON text (an object or null parameter); nested deeper than a JSON body may be (MAX_JSON_DEPTH), it is refused. */
const toJson: Coercer = (raw) => {
  if (jsonDepthExceeds(Buffer.from(raw), MAX_JSON_DEPTH)) return UNCONVERTIBLE;
  try {
    return JSON.parse(raw);
  } catch {
    return UNCONVERTIBLE;
  }
};
const asText: Coercer = (raw) => raw;

/**
 * The converter for `schema`'s scalar type, chosen once per parameter when a route is built (the
 * per-request work is then one call, with no result object).
 */
export function scalarCoercer(schema: Record<string, unknown>): Coercer {
  switch (schemaType(schema)) {
    case 'integer':
      return toInteger;
    case 'number':
      return toNumber;
    case 'boolean':
      return toBoolean;
    case 'object':
    case 'null':
      return toJson;
    default:
      return asText;
  }
}

/** The issue for text that `scalarCoercer(schema)` could not convert. */
export function coercionIssue(raw: string, schema: Record<string, unknown>, loc: (string | number)[]): ValidationIssue {
  switch (schemaType(schema)) {
    case 'integer':
      // A number that is not whole (`42.5`) is reported as the number it is (the corpus's rule).
      return { type: 'int_parsing', loc, msg: 'Input should be a valid integer, unable to parse string as an integer', input: numberOr(raw) };
    case 'number':
      return { type: 'float_parsing', loc, msg: 'Input should be a valid number, unable to parse string as a number', input: raw };
    case 'boolean':
      return { type: 'bool_parsing', loc, msg: 'Input should be a valid boolean, unable to interpret input', input: raw };
    default:
      return { type: 'json_invalid', loc, msg: 'Input should be valid JSON', input: raw };
  }
}

/** Coerce one string to `schema`'s scalar type; returns an issue instead when it cannot. */
export function coerceScalar(raw: string, schema: Record<string, unknown>, loc: (string | number)[]): { value: unknown } | { issue: ValidationIssue } {
  const value = scalarCoercer(schema)(raw);
  return value === UNCONVERTIBLE ? { issue: coercionIssue(raw, schema, loc) } : { value };
}

type Schema = Record<string, unknown>;

/** The branch that describes a non-null value of a nullable `anyOf`/`oneOf`, else the schema itself. */
function nonNull(schema: Schema): Schema {
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (!Array.isArray(branches)) continue;
    const real = branches.filter((b) => !(b && typeof b === 'object' && (b as Schema).type === 'null'));
    if (real.length === 1 && typeof real[0] === 'object') return real[0] as Schema;
  }
  return schema;
}

/**
 * Form field text → a scalar, as the reference's form reading gives it. Number text is a number even
 * where an integer is expected (`42.5` fails as the number 42.5, `1e3` is the integer 1000). A
 * boolean is `true`/`false` in any case or `1`/`0`, and `on`/`off`: `on` is what an HTML checkbox
 * without a `value` sends when ticked (HTML, the input element's checkbox state), so a plain form
 * posts it; the reference would refuse it. A blank field is not a boolean (in a query string it reads
 * as false).
 */
const FORM_SCALARS: Record<'integer' | 'number' | 'boolean', Coercer> = {
  integer: (raw) => {
    const n = toInteger(raw);
    return n === UNCONVERTIBLE ? toNumber(raw) : n;
  },
  number: toNumber,
  boolean: (raw) => {
    if (raw === '') return UNCONVERTIBLE;
    const lower = raw.length === 2 || raw.length === 3 ? raw.toLowerCase() : '';
    return lower === 'on' ? true : lower === 'off' ? false : parseBoolean(raw);
  },
};

/** Converts a form value (a field, a list of them, or the whole body) to its schema's types. */
export type FormCoercer = (value: unknown) => unknown;

const asSent: FormCoercer = (value) => value;

/**
 * The converter of form values for `schema`, built once per route: numbers, integers and booleans
 * from their text (FORM_SCALARS), a single value where a list is expected to a one-item list, nested objects by
 * their `properties` (in place), an empty field to null where null is allowed. A value that does not
 * convert is left as sent, so validation reports it (`int_parsing` with the text as input).
 */
export function formCoercer(schema: Schema | undefined): FormCoercer {
  if (!schema || typeof schema !== 'object') return asSent;
  const s = nonNull(schema);
  // An empty form field (an HTML input left blank) is "no value" where the schema allows null.
  const nullable = s !== schema || (Array.isArray(schema.type) && schema.type.includes('null')) || schema.nullable === true;
  const convert = typedCoercer(s);
  return nullable ? (value) => (value === '' ? null : convert(value)) : convert;
}

function typedCoercer(s: Schema): FormCoercer {
  const type = schemaType(s);
  if (type === 'array') {
    const itemSchema = s.items as Schema | undefined;
    const item = itemSchema && typeof itemSchema === 'object' && !Array.isArray(itemSchema) ? formCoercer(itemSchema) : undefined;
    return (value) => {
      if (value === undefined) return value;
      const items = Array.isArray(value) ? value : [value];
      return item ? items.map((v) => item(v)) : items;
    };
  }
  if (type === 'object' || (type === undefined && typeof s.properties === 'object')) {
    const props = new Map(Object.entries((s.properties ?? {}) as Record<string, Schema>).map(([k, p]) => [k, formCoercer(p)]));
    return (value) => {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
      const obj = value as Record<string, unknown>;
      for (const k of Object.keys(obj)) {
        const convert = props.get(k);
        if (convert) obj[k] = convert(obj[k]);
      }
      return obj;
    };
  }
  if (type !== 'integer' && type !== 'number' && type !== 'boolean') return asSent;
  const convert = FORM_SCALARS[type];
  return (value) => {
    if (typeof value !== 'string') return value;
    const converted = convert(value);
    return converted === UNCONVERTIBLE ? value : converted;
  };
}
