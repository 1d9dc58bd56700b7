/**
 * The second wording of parameter constraint errors: `{type: 'validation_error', loc, msg, ctx}` with the
 * keyword's limit and the value in `ctx` and no `input` ("String length must be at least 3",
 * `ctx: {min_length: 3, actual_length: 2}`; "Value must not exceed 100", `ctx: {maximum: 100, value: 150}`).
 *
 * When it applies: a parameter whose entry says `error_style: 'generic'` (lib/http/validation.ts; the default
 * is `reference`). The reference's Rust error mapper (spikard-core `validation/error_mapper.rs`) words
 * every keyword it maps the Pydantic way and gives the others `validation_error` with its validator's
 * message: the generic wording is not in its source. It is the corpus's, chosen there by the shape of a
 * parameter's declaration (harness/conformance/error-style.ts says how keel's fixture app reads it). A
 * missing value (`missing`, "Field required") and text that does not convert to the declared type
 * (`int_parsing`, …) keep their items in either style.
 */
import type { ErrorObject } from 'ajv';
import type { ValidationIssue } from './validation-errors.js';

/** Format names as the generic messages spell them ("Invalid IPv4 address format"). */
const FORMAT_NAMES: Record<string, string> = { email: 'email', ipv4: 'IPv4 address', ipv6: 'IPv6 address', uri: 'URI', 'uri-reference': 'URI reference', url: 'URL', uuid: 'UUID', date: 'date', 'date-time': 'date-time', time: 'time', duration: 'duration', hostname: 'hostname' };

/** The item for a format the value does not have. */
export function genericFormatIssue(format: string, loc: (string | number)[], value: unknown): ValidationIssue {
  return { type: 'validation_error', loc, msg: `Invalid ${FORMAT_NAMES[format] ?? format} format`, ctx: { format, value } };
}

/**
 * The item for a pattern the value does not match. A credential header says what it holds: an
 * `Authorization` header whose pattern asks for the Bearer scheme, "Invalid Bearer token format"; a
 * header named as an API key (`X-API-Key`, `api_key`), "Invalid API key format".
 */
function patternMessage(loc: readonly (string | number)[], pattern: string): string {
  if (loc[0] === 'headers' && String(loc[1]).toLowerCase() === 'authorization' && /bearer/i.test(pattern)) return 'Invalid Bearer token format';
  if (loc[0] === 'headers' && /api[-_]?key/i.test(String(loc[1]))) return 'Invalid API key format';
  return 'String does not match pattern';
}

const items = (v: unknown) => (Array.isArray(v) ? v.length : 0);
const length = (v: unknown) => (typeof v === 'string' ? [...v].length : 0);

/** One generic item per constraint the value fails (Ajv errors of a parameter's schema), null for keywords it leaves to the Pydantic items. */
function generic(e: ErrorObject, loc: (string | number)[], value: unknown): ValidationIssue | null {
  const p = e.params as Record<string, unknown>;
  const item = (msg: string, ctx: Record<string, unknown>): ValidationIssue => ({ type: 'validation_error', loc, msg, ctx });
  switch (e.keyword) {
    case 'minLength':
      return item(`String length must be at least ${p.limit}`, { min_length: p.limit, actual_length: length(value) });
    case 'maxLength':
      return item(`String length must not exceed ${p.limit}`, { max_length: p.limit, actual_length: length(value) });
    case 'pattern':
      return item(patternMessage(loc, String(p.pattern)), { pattern: p.pattern, value });
    case 'minimum':
      return item(`Value must be at least ${p.limit}`, { minimum: p.limit, value });
    case 'maximum':
      return item(`Value must not exceed ${p.limit}`, { maximum: p.limit, value });
    case 'exclusiveMinimum':
      return item(`Value must be greater than ${p.limit}`, { exclusive_minimum: p.limit, value });
    case 'exclusiveMaximum':
      return item(`Value must be less than ${p.limit}`, { exclusive_maximum: p.limit, value });
    case 'multipleOf':
      return item(`Value must be a multiple of ${p.multipleOf}`, { multiple_of: p.multipleOf, value });
    case 'minItems':
      return item(`Array must contain at least ${p.limit} items`, { min_items: p.limit, actual_items: items(value) });
    case 'maxItems':
      return item(`Array must not contain more than ${p.limit} items`, { max_items: p.limit, actual_items: items(value) });
    case 'uniqueItems': {
      // Ajv names the two equal items (i and j): the duplicate is the later one.
      const i = Math.max(Number(p.i), Number(p.j));
      return item('Array items must be unique', { unique_items: true, duplicate_value: Array.isArray(value) ? value[i] : undefined, duplicate_index: i });
    }
    case 'enum': {
      const allowed = p.allowedValues as unknown[];
      return item(`Value must be one of: ${allowed.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}`, { enum: allowed, value });
    }
    case 'const':
      return item(`Value must be ${JSON.stringify(p.allowedValue)}`, { const: p.allowedValue, value });
    case 'format':
      return genericFormatIssue(String(p.format), loc, value);
    default:
      return null;
  }
}

/**
 * Push the generic item of each of a parameter's Ajv errors that has one (`value`: the converted value);
 * returns the errors left for the Pydantic items (a type error, an error inside a list item).
 */
export function appendGenericIssues(issues: ValidationIssue[], errors: readonly ErrorObject[], loc: readonly (string | number)[], value: unknown): ErrorObject[] {
  const rest: ErrorObject[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    const g = e.instancePath === '' ? generic(e, [...loc], value) : null;
    if (!g) rest.push(e);
    else if (!seen.has(g.msg)) {
      seen.add(g.msg);
      issues.push(g);
    }
  }
  return rest;
}
