/**
 * Ajv errors → Pydantic-style issues `{type, loc, msg, input, ctx}` (the fixture corpus's shape).
 */
import type { ErrorObject } from 'ajv';

/** One problem found in a request (spec: ValidationError `errors[]`); declared here so lib/http/coerce.ts needs no lib/http/validation.ts. */
export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/**
 * The `email` format keel checks (lib/http/validation.ts registers it with Ajv): the pattern the reference's
 * error items carry in `ctx.pattern` (`string_pattern_mismatch`), so the rule actually applied is stated.
 */
export const EMAIL_PATTERN = '^[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\\.[a-zA-Z0-9-.]+$';

/** Compact JSON, as the corpus quotes values inside messages (`{"host":"localhost"} has ...`). */
const json = (v: unknown): string => JSON.stringify(v) ?? 'null';

/**
 * A JSON pointer's segments, decoded. Every segment stays a string, array indices included
 * (`['body', 'tags', '2']`): the reference's `loc` is a list of strings.
 */
function pointerToPath(pointer: string): string[] {
  if (!pointer) return [];
  // By hand rather than split/slice/map and two regular-expression replaces per segment: this runs
  // for every error of every refused request, and most segments have no `~` escape.
  const out: string[] = [];
  let start = 1;
  for (;;) {
    const end = pointer.indexOf('/', start);
    const s = end < 0 ? pointer.slice(start) : pointer.slice(start, end);
    out.push(s.includes('~') ? s.replace(/~1/g, '/').replace(/~0/g, '~') : s);
    if (end < 0) return out;
    start = end + 1;
  }
}

function valueAt(root: unknown, path: string[]): unknown {
  let v: unknown = root;
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[k];
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
 * The type is the reference's: uuid, date and date-time have their own, every other format is a
 * `format_error`. A format missing here reads "Input should be a valid <format>".
 */
const FORMAT_TYPES: Record<string, [string, string]> = {
  uuid: ['uuid_parsing', 'Input should be a valid UUID'],
  'date-time': ['datetime_parsing', 'Input should be a valid datetime'],
  date: ['date_parsing', 'Input should be a valid date'],
  time: ['format_error', 'Input should be a valid time'],
  uri: ['format_error', 'Input should be a valid URL'],
  'uri-reference': ['format_error', 'Input should be a valid URL or relative reference'],
  url: ['format_error', 'Input should be a valid URL'],
  duration: ['format_error', 'Input should be a valid duration'],
  ipv4: ['format_error', 'Input is not a valid IPv4 address'],
  ipv6: ['format_error', 'Input is not a valid IPv6 address'],
  hostname: ['format_error', 'Input should be a valid hostname'],
  regex: ['format_error', 'Input should be a valid regular expression'],
  byte: ['format_error', 'Input should be valid base64'],
  'json-pointer': ['format_error', 'Input should be a valid JSON pointer'],
  'relative-json-pointer': ['format_error', 'Input should be a valid relative JSON pointer'],
  'uri-template': ['format_error', 'Input should be a valid URI template'],
  int32: ['format_error', 'Input should be a 32-bit integer'],
  int64: ['format_error', 'Input should be a 64-bit integer'],
  float: ['format_error', 'Input should be a valid float'],
  double: ['format_error', 'Input should be a valid double'],
  password: ['format_error', 'Input should be a valid password'],
  binary: ['format_error', 'Input should be binary data'],
};

/** Pydantic's wording for an invalid email address (EmailStr). */
const EMAIL_MESSAGE = 'value is not a valid email address';

/**
 * A value of the wrong JSON type, by the type the schema declares (the reference's items: a parse
 * failure for integer, number and boolean whatever was sent, `type_error` for object, array, null).
 */
const TYPE_MESSAGES: Record<string, [string, string]> = {
  string: ['string_type', 'Input should be a valid string'],
  integer: ['int_parsing', 'Input should be a valid integer, unable to parse string as an integer'],
  number: ['float_parsing', 'Input should be a valid number, unable to parse string as a number'],
  boolean: ['bool_parsing', 'Input should be a valid boolean'],
};

const NUMERIC_BOUNDS = {
  minimum: ['greater_than_equal', 'greater than or equal to', 'ge', 'minimum'],
  exclusiveMinimum: ['greater_than', 'greater than', 'gt', 'minimum'],
  maximum: ['less_than_equal', 'less than or equal to', 'le', 'maximum'],
  exclusiveMaximum: ['less_than', 'less than', 'lt', 'maximum'],
} as const;

/**
 * Whether the reference finds the failed keyword where it looks for it: it reads a limit (and a
 * declared type) from the schema at `/properties/<each location segment>/<keyword>`, so only for a
 * property reached through `properties` alone (not an array item, not the body itself, not inside
 * `anyOf`/`$ref`). Where it does not, its item words the failure without the limit and has no ctx.
 * A parameter's schema is itself such a property (`paramRoot`).
 */
function limitFound(e: ErrorObject, keyword: string, paramRoot: boolean): boolean {
  if (!paramRoot && !e.instancePath) return false;
  // `#` + `/properties/<segment>` per segment of the instance path + `/<keyword>`.
  return e.schemaPath === `#${e.instancePath.replaceAll('/', '/properties/')}/${keyword}`;
}

/** The type a `type` error expected (the first non-null one of a list). */
function expectedType(t: unknown): string {
  const list = Array.isArray(t) ? (t as string[]) : String(t).split(',');
  return list.find((x) => x !== 'null') ?? list[0] ?? 'unknown';
}

function one(e: ErrorObject, base: (string | number)[], root: unknown, paramRoot: boolean): ValidationIssue | null {
  const path = pointerToPath(e.instancePath);
  const loc = [...base, ...path];
  const input = path.length ? valueAt(root, path) : root;
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { type: 'missing', loc: [...loc, p.missingProperty as string], msg: 'Field required', input };
    // The reference always writes "characters" (1 included).
    case 'minLength':
      return limitFound(e, 'minLength', paramRoot)
        ? { type: 'string_too_short', loc, msg: `String should have at least ${p.limit} characters`, input, ctx: { min_length: p.limit } }
        : { type: 'string_too_short', loc, msg: 'String is too short', input };
    case 'maxLength':
      return limitFound(e, 'maxLength', paramRoot)
        ? { type: 'string_too_long', loc, msg: `String should have at most ${p.limit} characters`, input, ctx: { max_length: p.limit } }
        : { type: 'string_too_long', loc, msg: 'String is too long', input };
    case 'pattern':
      return limitFound(e, 'pattern', paramRoot)
        ? { type: 'string_pattern_mismatch', loc, msg: `String should match pattern '${p.pattern}'`, input, ctx: { pattern: p.pattern } }
        : { type: 'string_pattern_mismatch', loc, msg: 'String does not match expected pattern', input };
    case 'minimum':
    case 'exclusiveMinimum':
    case 'maximum':
    case 'exclusiveMaximum': {
      const [type, words, key, bound] = NUMERIC_BOUNDS[e.keyword];
      // The reference reads the limit as a 64-bit integer: a fractional one (0.01) is not named.
      if (limitFound(e, e.keyword, paramRoot) && Number.isInteger(p.limit)) return { type, loc, msg: `Input should be ${words} ${p.limit}`, input, ctx: { [key]: p.limit } };
      return { type, loc, msg: `Input should be ${words} the ${bound}`, input };
    }
    case 'enum': {
      const values = p.allowedValues as unknown[];
      if (!limitFound(e, 'enum', paramRoot)) return { type: 'enum', loc, msg: 'Input should be one of the allowed values', input };
      // The reference lists the string values only: with none, it names no value. (With a mix, the list
      // of its strings alone would misstate what is allowed, so every value is listed.)
      if (!values.some((v) => typeof v === 'string')) return { type: 'enum', loc, msg: 'Input should be one of the allowed values', input, ctx: { expected: 'allowed values' } };
      const expected = quoteList(values);
      return { type: 'enum', loc, msg: `Input should be ${expected}`, input, ctx: { expected } };
    }
    // Keywords the reference has no item of its own for read as its JSON Schema validator words them
    // (the corpus's `validation_error` items).
    case 'multipleOf':
      return { type: 'validation_error', loc, msg: `${json(input)} is not a multiple of ${p.multipleOf}`, input };
    case 'uniqueItems':
      return { type: 'validation_error', loc, msg: `${json(input)} has non-unique elements`, input };
    case 'contains':
      return { type: 'validation_error', loc, msg: `None of ${json(input)} are valid under the given schema`, input };
    case 'false schema':
      return { type: 'validation_error', loc, msg: `False schema does not allow ${json(input)}`, input };
    case 'additionalItems':
    case 'items': {
      if (typeof p.limit !== 'number' || !Array.isArray(input)) return { type: 'validation_error', loc, msg: e.message ?? `failed ${e.keyword}`, input };
      const extras = input.slice(p.limit);
      return { type: 'validation_error', loc, msg: `Additional items are not allowed (${extras.map(json).join(', ')} ${extras.length === 1 ? 'was' : 'were'} unexpected)`, input };
    }
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
    // The reference's words: "item" after any minimum, "items" after any maximum. Its ctx names the
    // schema's limit (where it cannot find it, it would claim 1; keel names the real one).
    case 'minItems':
      return { type: 'too_short', loc, msg: `List should have at least ${p.limit} item after validation`, input, ctx: { min_length: p.limit } };
    case 'maxItems':
      return { type: 'too_long', loc, msg: `List should have at most ${p.limit} items after validation`, input, ctx: { max_length: p.limit } };
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
      const [type, msg] = FORMAT_TYPES[p.format as string] ?? ['format_error', `Input should be a valid ${p.format}`];
      return { type, loc, msg, input };
    }
    case 'type': {
      const t = expectedType(p.type);
      // The reference reads the declared type from the schema (see limitFound); where it finds none (an
      // array item, a list of types, the body itself) its item is a `type_error` that names no type
      // ("a valid unknown"): keel's names the type the schema asks for.
      const declared = limitFound(e, 'type', paramRoot) && typeof (e.parentSchema as Record<string, unknown> | undefined)?.type === 'string';
      const [type, msg] = (declared ? TYPE_MESSAGES[t] : undefined) ?? ['type_error', `Input should be a valid ${t}`];
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

/**
 * Append one issue per meaningful Ajv error (deduplicated by loc + type). `paramRoot`: the schema is a
 * parameter's, which the reference looks limits up in as a property of its parameter schema.
 */
export function appendErrorsFromAjv(out: ValidationIssue[], errors: ErrorObject[] | null | undefined, base: (string | number)[], root: unknown, paramRoot = false): void {
  const seen = new Set<string>();
  const list = errors ?? [];
  // A failed oneOf/anyOf is one error about the whole value, as the reference's validator reports it
  // (a nullable `anyOf: [{...}, {type: 'null'}]` included): the branches' own errors (Ajv reports them
  // first) would list every alternative's complaints as if all applied.
  const umbrellas: string[] = [];
  // The reference's validator reports the properties an object may not have as one error, which names
  // the first of them (in name order); Ajv reports each.
  const firstExtra = new Map<string, string>();
  const unevaluated = new Map<string, string[]>();
  for (const e of list) {
    if (e.keyword === 'additionalProperties') {
      const name = (e.params as { additionalProperty: string }).additionalProperty;
      const key = `${e.instancePath}|${e.schemaPath}`;
      const current = firstExtra.get(key);
      if (current === undefined || name < current) firstExtra.set(key, name);
      continue;
    }
    if (e.keyword === 'unevaluatedProperties') {
      const key = `${e.instancePath}|${e.schemaPath}`;
      const names = unevaluated.get(key) ?? [];
      names.push((e.params as { unevaluatedProperty: string }).unevaluatedProperty);
      unevaluated.set(key, names);
      continue;
    }
    if (e.keyword === 'oneOf' || e.keyword === 'anyOf') umbrellas.push(`${e.schemaPath}/`);
  }
  for (const e of list) {
    if (umbrellas.some((u) => e.schemaPath.startsWith(u))) continue;
    let issue: ValidationIssue | null;
    if (e.keyword === 'additionalProperties') {
      if ((e.params as { additionalProperty: string }).additionalProperty !== firstExtra.get(`${e.instancePath}|${e.schemaPath}`)) continue;
      issue = one(e, base, root, paramRoot);
    } else if (e.keyword === 'unevaluatedProperties') {
      const key = `${e.instancePath}|${e.schemaPath}`;
      const names = unevaluated.get(key);
      if (!names) continue;
      unevaluated.delete(key);
      const path = pointerToPath(e.instancePath);
      const quoted = names.sort().map((n) => `'${n}'`).join(', ');
      issue = {
        type: 'validation_error',
        loc: [...base, ...path],
        msg: `Unevaluated properties are not allowed (${quoted} ${names.length === 1 ? 'was' : 'were'} unexpected)`,
        input: path.length ? valueAt(root, path) : root,
      };
    } else issue = one(e, base, root, paramRoot);
    if (!issue) continue;
    const key = `${issue.type}|${issue.loc.join('.')}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(issue);
  }
}

const INDEX = /^\d+$/;

/**
 * Order body issues by location, element by element, as the corpus lists them: names in code-unit
 * order, array indices (all-digit segments) by number.
 */
export function byLoc(a: ValidationIssue, b: ValidationIssue): number {
  const n = Math.min(a.loc.length, b.loc.length);
  for (let i = 0; i < n; i++) {
    const x = String(a.loc[i]!);
    const y = String(b.loc[i]!);
    if (x === y) continue;
    if (INDEX.test(x) && INDEX.test(y)) return Number(x) - Number(y);
    return x < y ? -1 : 1;
  }
  return a.loc.length - b.loc.length;
}
