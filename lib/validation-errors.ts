/**
 * Ajv errors → Pydantic-style issues `{type, loc, msg, input, ctx}` (the fixture corpus's shape).
 */
import type { ErrorObject } from 'ajv';

/** One problem found in a request (spec: ValidationError `errors[]`); declared here so lib/coerce.ts needs no lib/validation.ts. */
export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/**
 * The `email` format keel checks (lib/validation.ts registers it with Ajv): the pattern the reference's
 * error items carry in `ctx.pattern` (`string_pattern_mismatch`), so the rule actually applied is stated.
 */
export const EMAIL_PATTERN = '^[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\\.[a-zA-Z0-9-.]+$';

/** Compact JSON, as the corpus quotes values inside messages (`{"host":"localhost"} has ...`). */
const json = (v: unknown): string => JSON.stringify(v) ?? 'null';

function pointerToPath(pointer: string): (string | number)[] {
  if (!pointer) return [];
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

function valueAt(root: unknown, path: (string | number)[]): unknown {
  let v: unknown = root;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

function quoteList(values: unknown[]): string {
  const q = values.map((v) => (typeof v === 'string' ? `'${v}'` : JSON.stringify(v)));
  return q.length <= 1 ? q.join('') : `${q.slice(0, -1).join(', ')} or ${q[q.length - 1]}`;
}

/**
 * Format failures name the format the schema asked for (Pydantic's words where it has the type), never
 * the regular expression a format is checked with: the client wrote `format: "email"`, not a pattern.
 * A format missing here reads "Input should be a valid <format>".
 */
const FORMAT_TYPES: Record<string, [string, string]> = {
  uuid: ['uuid_parsing', 'Input should be a valid UUID'],
  'date-time': ['datetime_parsing', 'Input should be a valid datetime'],
  date: ['date_parsing', 'Input should be a valid date'],
  time: ['time_parsing', 'Input should be a valid time'],
  uri: ['url_parsing', 'Input should be a valid URL'],
  'uri-reference': ['url_parsing', 'Input should be a valid URL or relative reference'],
  url: ['url_parsing', 'Input should be a valid URL'],
  duration: ['duration_parsing', 'Input should be a valid duration'],
  ipv4: ['ip_v4_address', 'Input is not a valid IPv4 address'],
  ipv6: ['ip_v6_address', 'Input is not a valid IPv6 address'],
  hostname: ['value_error', 'Input should be a valid hostname'],
  regex: ['value_error', 'Input should be a valid regular expression'],
  byte: ['value_error', 'Input should be valid base64'],
  'json-pointer': ['value_error', 'Input should be a valid JSON pointer'],
  'relative-json-pointer': ['value_error', 'Input should be a valid relative JSON pointer'],
  'uri-template': ['value_error', 'Input should be a valid URI template'],
  int32: ['value_error', 'Input should be a 32-bit integer'],
  int64: ['value_error', 'Input should be a 64-bit integer'],
  float: ['value_error', 'Input should be a valid float'],
  double: ['value_error', 'Input should be a valid double'],
  password: ['value_error', 'Input should be a valid password'],
  binary: ['value_error', 'Input should be binary data'],
};

/** Pydantic's wording for an invalid email address (EmailStr). */
const EMAIL_MESSAGE = 'value is not a valid email address';

const TYPE_MESSAGES: Record<string, [string, string]> = {
  string: ['string_type', 'Input should be a valid string'],
  integer: ['int_type', 'Input should be a valid integer'],
  number: ['float_type', 'Input should be a valid number'],
  boolean: ['bool_type', 'Input should be a valid boolean'],
  array: ['list_type', 'Input should be a valid list'],
  object: ['dict_type', 'Input should be a valid dictionary or object'],
  null: ['none_required', 'Input should be None'],
};

function one(e: ErrorObject, base: (string | number)[], root: unknown): ValidationIssue | null {
  const path = pointerToPath(e.instancePath);
  const loc = [...base, ...path];
  const input = path.length ? valueAt(root, path) : root;
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { type: 'missing', loc: [...loc, p.missingProperty as string], msg: 'Field required', input };
    case 'minLength':
      return { type: 'string_too_short', loc, msg: `String should have at least ${p.limit} character${p.limit === 1 ? '' : 's'}`, input, ctx: { min_length: p.limit } };
    case 'maxLength':
      return { type: 'string_too_long', loc, msg: `String should have at most ${p.limit} character${p.limit === 1 ? '' : 's'}`, input, ctx: { max_length: p.limit } };
    case 'pattern':
      return { type: 'string_pattern_mismatch', loc, msg: `String should match pattern '${p.pattern}'`, input, ctx: { pattern: p.pattern } };
    case 'minimum':
    case 'exclusiveMinimum':
    case 'maximum':
    case 'exclusiveMaximum': {
      const [type, words, key] = {
        minimum: ['greater_than_equal', 'greater than or equal to', 'ge'],
        exclusiveMinimum: ['greater_than', 'greater than', 'gt'],
        maximum: ['less_than_equal', 'less than or equal to', 'le'],
        exclusiveMaximum: ['less_than', 'less than', 'lt'],
      }[e.keyword]!;
      return { type, loc, msg: `Input should be ${words} ${p.limit}`, input, ctx: { [key]: p.limit } };
    }
    case 'multipleOf':
      return { type: 'multiple_of', loc, msg: `Input should be a multiple of ${p.multipleOf}`, input, ctx: { multiple_of: p.multipleOf } };
    case 'enum': {
      const expected = quoteList(p.allowedValues as unknown[]);
      return { type: 'enum', loc, msg: `Input should be ${expected}`, input, ctx: { expected } };
    }
    // Keywords with no Pydantic counterpart read as JSON Schema validators word them (the corpus's
    // `validation_error` items).
    case 'const':
      return { type: 'validation_error', loc, msg: `${json(p.allowedValue)} was expected`, input };
    case 'not':
      return { type: 'validation_error', loc, msg: `${json(e.schema)} is not allowed for ${json(input)}`, input };
    case 'minProperties':
      return { type: 'validation_error', loc, msg: `${json(input)} has less than ${p.limit} propert${p.limit === 1 ? 'y' : 'ies'}`, input };
    case 'maxProperties':
      return { type: 'validation_error', loc, msg: `${json(input)} has more than ${p.limit} propert${p.limit === 1 ? 'y' : 'ies'}`, input };
    case 'dependencies':
    case 'dependentRequired':
      return { type: 'validation_error', loc, msg: `${json(p.missingProperty)} is a required property`, input };
    case 'minItems':
      return { type: 'too_short', loc, msg: `List should have at least ${p.limit} item${p.limit === 1 ? '' : 's'} after validation`, input, ctx: { min_length: p.limit } };
    case 'maxItems':
      return { type: 'too_long', loc, msg: `List should have at most ${p.limit} item${p.limit === 1 ? '' : 's'} after validation`, input, ctx: { max_length: p.limit } };
    case 'uniqueItems':
      return { type: 'unique_items', loc, msg: 'List should have unique items', input };
    case 'additionalProperties':
      return {
        type: 'validation_error',
        loc: [...loc, p.additionalProperty as string],
        msg: 'Additional properties are not allowed',
        input,
        ctx: { additional_properties: false, unexpected_field: p.additionalProperty },
      };
    case 'format': {
      if (p.format === 'email') {
        // The type and ctx stay the reference's (`string_pattern_mismatch` with the pattern applied), so
        // clients that branch on `type` see what other implementations send; the message a person reads
        // names the format instead of quoting a regular expression they never wrote.
        return { type: 'string_pattern_mismatch', loc, msg: EMAIL_MESSAGE, input, ctx: { pattern: EMAIL_PATTERN } };
      }
      const [type, msg] = FORMAT_TYPES[p.format as string] ?? ['value_error', `Input should be a valid ${p.format}`];
      return { type, loc, msg, input };
    }
    case 'type': {
      const t = Array.isArray(p.type) ? (p.type as string[])[0]! : (p.type as string);
      // A string where a number was expected reads as a failed parse, as form/query clients send strings.
      if (typeof input === 'string' && (t === 'integer' || t === 'number')) {
        return t === 'integer'
          ? { type: 'int_parsing', loc, msg: 'Input should be a valid integer, unable to parse string as an integer', input }
          : { type: 'float_parsing', loc, msg: 'Input should be a valid number, unable to parse string as a number', input };
      }
      const [type, msg] = TYPE_MESSAGES[t] ?? ['type_error', `Input should be a valid ${t}`];
      return { type, loc, msg, input };
    }
    case 'if':
    case 'allOf':
      // Their sub-errors carry the detail; the umbrella entry adds nothing.
      return null;
    case 'anyOf':
      return { type: 'validation_error', loc, msg: `${json(input)} is not valid under any of the schemas listed in the 'anyOf' keyword`, input };
    case 'oneOf':
      return {
        type: 'validation_error',
        loc,
        msg: p.passingSchemas ? `${json(input)} is valid under more than one of the schemas listed in the 'oneOf' keyword` : `${json(input)} is not valid under any of the schemas listed in the 'oneOf' keyword`,
        input,
      };
    default:
      return { type: 'validation_error', loc, msg: e.message ?? `failed ${e.keyword}`, input };
  }
}

function isNullSchema(s: unknown): boolean {
  return typeof s === 'object' && s !== null && (s as Record<string, unknown>).type === 'null' && Object.keys(s).length === 1;
}

/** Append one issue per meaningful Ajv error (deduplicated by loc + type). */
export function appendErrorsFromAjv(out: ValidationIssue[], errors: ErrorObject[] | null | undefined, base: (string | number)[], root: unknown): void {
  const seen = new Set<string>();
  const list = errors ?? [];
  // A failed oneOf/anyOf is one error about the whole value: the branches' own errors (Ajv reports
  // them first) would list every alternative's complaints as if all applied.
  // Exception: a nullable value (`anyOf: [{...}, {type: 'null'}]`, OpenAPI 3.1 style) keeps the
  // real branch's precise errors and drops the umbrella and the null branch's.
  const umbrellas: string[] = [];
  const dropped = new Set<ErrorObject>();
  for (const e of list) {
    if (e.keyword !== 'oneOf' && e.keyword !== 'anyOf') continue;
    const branches = Array.isArray(e.schema) ? (e.schema as unknown[]) : [];
    const nulls = branches.flatMap((b, i) => (isNullSchema(b) ? [i] : []));
    if (e.keyword === 'anyOf' && nulls.length > 0 && branches.length - nulls.length === 1) {
      dropped.add(e);
      for (const i of nulls) umbrellas.push(`${e.schemaPath}/${i}/`);
    } else umbrellas.push(`${e.schemaPath}/`);
  }
  for (const e of list) {
    if (dropped.has(e) || umbrellas.some((u) => e.schemaPath.startsWith(u))) continue;
    const issue = one(e, base, root);
    if (!issue) continue;
    const key = `${issue.type}|${issue.loc.join('.')}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(issue);
  }
}

/** Order body issues by location, element by element (numbers numerically), as the corpus lists them. */
export function byLoc(a: ValidationIssue, b: ValidationIssue): number {
  const n = Math.min(a.loc.length, b.loc.length);
  for (let i = 0; i < n; i++) {
    const x = a.loc[i]!;
    const y = b.loc[i]!;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return a.loc.length - b.loc.length;
}
