/**
 * Request validation, compiled once per route with Ajv.
 *
 * Path, query, header and cookie values arrive as strings; each is coerced to its schema type
 * first (so `?limit=10` satisfies `{type: integer}`), then checked. Errors use the shape of the
 * fixture corpus (Pydantic-style `{type, loc, msg, input, ctx}`), rendered as one 422 problem.
 */
import { debuglog } from 'node:util';
import type { Ajv, ErrorObject, Options, ValidateFunction } from 'ajv';
import type * as AjvDraft07 from 'ajv';
import type * as AjvDraft2020 from 'ajv/dist/2020.js';
import type addFormatsModule from 'ajv-formats';
import { lazyRequire } from './lazy-require.js';
import { fastDateTime } from './date-time-format.js';
import type { ValidationIssue } from './validation-errors.js';
import { HttpError } from './errors.js';
import { problemFor, type ProblemDetails } from './problem.js';
import { checkFiles, type FileParamSpec, type UploadFile } from './multipart.js';
import { coercionIssue, formCoercer, scalarCoercer, schemaType, UNCONVERTIBLE, type Coercer } from './coerce.js';
import { jsonDepthExceeds, MAX_JSON_DEPTH, parseMediaType } from './content.js';
import { appendErrorsFromAjv, byLoc, EMAIL_PATTERN } from './validation-errors.js';
import { appendGenericIssues, genericFormatIssue } from './validation-generic.js';

// Loaded with the first schema a route declares: an App without schemas never loads Ajv (lib/http/lazy-require.ts).
const loadAjv = lazyRequire<typeof AjvDraft07>('ajv');
const loadAjv2020 = lazyRequire<typeof AjvDraft2020>('ajv/dist/2020.js');
const loadFormats = lazyRequire<typeof addFormatsModule>('ajv-formats');

export { EMAIL_PATTERN };

/**
 * Ajv's notices (an unknown format ignored, …) go to `NODE_DEBUG=keel-ajv`, never to the console:
 * they would otherwise land in the middle of a conformance report or an app's output.
 */
const ajvDebug = debuglog('keel-ajv');
const AJV_LOGGER = { log: ajvDebug, warn: ajvDebug, error: ajvDebug };
/**
 * `allErrors` so a client sees every problem at once; `verbose` so error items can quote the failing
 * sub-schema (`not`).
 */
const AJV_OPTIONS: Options = { allErrors: true, strict: false, coerceTypes: false, useDefaults: true, validateFormats: true, verbose: true, logger: AJV_LOGGER };

/** `format: decimal` (OpenAPI's and Python's `Decimal` as text, e.g. `"19.99"`): a signed decimal number, exponent allowed. */
export const DECIMAL_PATTERN = '^[+-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?$';

export function withFormats<T extends Ajv>(instance: T): T {
  // ajv-formats is CommonJS with a default export.
  const formats = loadFormats() as unknown as { default?: (ajv: Ajv) => Ajv } & ((ajv: Ajv) => Ajv);
  (formats.default ?? formats)(instance);
  // The same answers as ajv-formats' date-time, without its regexp split for the usual shape (date-time-format.ts).
  const dateTime = instance.formats['date-time'] as { validate: (s: string) => boolean; compare?: (a: string, b: string) => number | undefined };
  instance.addFormat('date-time', { type: 'string', validate: fastDateTime(dateTime.validate), compare: dateTime.compare });
  instance.addFormat('email', new RegExp(EMAIL_PATTERN));
  instance.addFormat('decimal', { type: 'string', validate: new RegExp(DECIMAL_PATTERN) });
  return instance;
}

let draft07: Ajv | undefined;
let draft2020: Ajv | undefined;

/**
 * The Ajv of the draft a schema declares (2020-12, else draft-07); errors map the same way. One Ajv
 * per draft, created with the first schema of that draft.
 */
export function ajvFor(schema: Record<string, unknown>): Ajv {
  const draft = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (draft.includes('/2020-12/')) {
    return (draft2020 ??= withFormats(new (loadAjv2020().Ajv2020)(AJV_OPTIONS) as unknown as Ajv));
  }
  return (draft07 ??= withFormats(new (loadAjv().Ajv)(AJV_OPTIONS)));
}

/**
 * Compile with the Ajv of the draft the schema declares. Schemas compile once: a route's are first
 * compiled when it is registered (lib/app/schema-check.ts), and Ajv hands back the same function for the
 * same schema object when the router is built.
 */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  return ajvFor(schema).compile(schema);
}

export type ParamSource = 'path' | 'query' | 'headers' | 'cookie';
export const PARAM_SOURCES: readonly ParamSource[] = ['path', 'query', 'headers', 'cookie'];

export type { ValidationIssue };

export interface ParamSpec {
  source: ParamSource;
  name: string;
  schema: Record<string, unknown>;
  required: boolean;
  /** Query arrays given as one delimited value (`?ids=1,2,3`). */
  separator?: string;
  /** Constraint errors in the generic wording (lib/http/validation-generic.ts): the entry's `error_style: 'generic'`. */
  genericErrors?: boolean;
}

/** Keys of the fixture format's parameter entries that are not JSON Schema. */
const PARAM_META = new Set(['required', 'optional', 'annotation', 'separator', 'description', 'source', 'alias', 'error_style']);

/**
 * A parameter's `error_style`: how its constraint errors are worded. `reference` (DEFAULT_ERROR_STYLE):
 * the reference's Pydantic-like items (`string_too_short`, "String should have at least 3 characters",
 * `input`, `ctx: {min_length}`); `generic`: `validation_error` items with the limit and the value in
 * `ctx` and no `input` ("String length must be at least 3", `ctx: {min_length, actual_length}`), see
 * lib/http/validation-generic.ts.
 */
export const ERROR_STYLES = ['reference', 'generic'] as const;
export const DEFAULT_ERROR_STYLE = 'reference';

/** Split a fixture-style `{name: {type, required, ...}}` map into ParamSpecs. */
export function paramSpecs(source: ParamSource, map: Record<string, Record<string, unknown>> | undefined): ParamSpec[] {
  if (!map) return [];
  // A whole-object JSON Schema ({type: 'object', properties, required: [...]}) is accepted too.
  if ((map as Record<string, unknown>).type === 'object' && typeof map.properties === 'object') {
    const obj = map as unknown as { properties: Record<string, Record<string, unknown>>; required?: string[] };
    return Object.entries(obj.properties).map(([name, schema]) => ({ source, name, schema, required: obj.required?.includes(name) ?? false }));
  }
  return Object.entries(map).map(([name, entry]) => {
    const schema: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(entry ?? {})) if (!PARAM_META.has(k)) schema[k] = v;
    // FastAPI semantics (the corpus's): required unless the entry says `optional: true` or
    // `required: false`, or has a `default`. Path parameters are always required.
    const optional = entry?.optional === true || entry?.required === false || (entry !== null && typeof entry === 'object' && 'default' in entry);
    const required = source === 'path' || !optional;
    const separator = typeof entry?.separator === 'string' ? entry.separator : undefined;
    const style = entry?.error_style ?? DEFAULT_ERROR_STYLE;
    if (!(ERROR_STYLES as readonly unknown[]).includes(style)) throw new Error(`parameters.${source === 'cookie' ? 'cookies' : source}.${name}.error_style must be one of ${ERROR_STYLES.map((x) => `"${x}"`).join(', ')}, got ${JSON.stringify(style)}`);
    const genericErrors = style === 'generic';
    return { source, name, schema, required, ...(separator ? { separator } : {}), ...(genericErrors ? { genericErrors } : {}) };
  });
}

const FORM_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data']);

/** Form fields arrive as text and are converted to the body schema's types; JSON bodies never are. */
function formBody(contentType: string | string[] | undefined): boolean {
  const media = parseMediaType(Array.isArray(contentType) ? contentType[0] : contentType);
  return media !== null && FORM_TYPES.has(media.type);
}

export interface ValidationInput {
  pathParams: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  cookies: Record<string, string>;
  body: unknown;
  hasBody: boolean;
  /** Uploaded files (multipart), by field name. */
  files?: Record<string, UploadFile | UploadFile[]>;
}

export interface ValidatedParams {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  cookies: Record<string, unknown>;
}

/**
 * A route's compiled validator: the validated values, or the issues that refuse the request. Issues are
 * returned, not thrown: a 422 on a route without on_error hooks is written from them (validationProblem)
 * without building an Error nobody sees or unwinding a throw (issue 48); validationError() makes the
 * HttpError where one is handed on.
 */
export type RequestValidator = (input: ValidationInput) => { params: ValidatedParams; body: unknown } | ValidationFailure;

/** The issues of the first stage that had any (see compileRequestValidator). */
export class ValidationFailure {
  constructor(readonly issues: ValidationIssue[]) {}
}

/** Everything about one parameter that does not depend on the request, worked out when the route is built. */
interface CompiledParam {
  name: string;
  required: boolean;
  separator: string | undefined;
  /** Where its value is read: `input[from][key]` (header names in lower case, `_` read as `-`). */
  from: 'pathParams' | 'query' | 'headers' | 'cookies';
  key: string;
  /**
   * The name is also an Object.prototype member (`constructor`, `toString`, `__proto__`): only an own
   * value counts, or an absent `?toString` would read as "function toString() { [native code] }".
   * Decided here, so other names pay nothing per request.
   */
  inheritedName: boolean;
  /** Where its validated value goes in ValidatedParams. */
  into: keyof ValidatedParams;
  /** Its location in issues; copied into each issue, so no issue shares it. */
  loc: readonly (string | number)[];
  /** A blank value counts as absent (path values only: a blank query, header or cookie value is a value). */
  blankIsMissing: boolean;
  /**
   * Constraint errors quote the text the client sent (`"101"`), as the reference does for query, header
   * and cookie values; path values are quoted converted (`2`), as the corpus expects.
   */
  quoteRaw: boolean;
  isArray: boolean;
  /** Text → the scalar type (of the items, for a list). */
  coerce: Coercer;
  /** Constraint errors in the generic wording (ParamSpec.genericErrors). */
  genericErrors: boolean;
  /** The schema `coerce` converts to, for its issue. */
  coerceSchema: Record<string, unknown>;
  /**
   * The check of a format the reference applies while reading the text (uuid, date, date-time, time,
   * duration), so a value that breaks it is a reading failure like `int_parsing`; null for others.
   */
  readFormat: { validate: ValidateFunction; issue: (text: string, loc: (string | number)[]) => ValidationIssue } | null;
  validate: ValidateFunction;
  hasDefault: boolean;
  defaultValue: unknown;
  /** An object or list default is cloned per request, so no handler can change the next one's. */
  cloneDefault: boolean;
}

const INPUT_FIELD = { path: 'pathParams', query: 'query', headers: 'headers', cookie: 'cookies' } as const;
const NO_FILES: Record<string, UploadFile | UploadFile[]> = Object.freeze({}) as Record<string, never>;

/** Formats checked while a parameter's text is read, and the item a value that breaks one gets. */
const READ_FORMATS: Record<string, [type: string, msg: string]> = {
  uuid: ['uuid_parsing', 'Input should be a valid UUID'],
  date: ['date_parsing', 'Input should be a valid date'],
  'date-time': ['datetime_parsing', 'Input should be a valid datetime'],
  time: ['time_parsing', 'Input should be a valid time'],
  duration: ['duration_parsing', 'Input should be a valid duration'],
};

function readFormat(schema: Record<string, unknown>, genericErrors: boolean): CompiledParam['readFormat'] {
  const format = schema.format;
  if (typeof format !== 'string' || !Object.hasOwn(READ_FORMATS, format)) return null;
  const [type, msg] = READ_FORMATS[format]!;
  const issue = genericErrors ? (text: string, loc: (string | number)[]) => genericFormatIssue(format, loc, text) : (text: string, loc: (string | number)[]) => ({ type, loc, msg, input: text });
  return { validate: compileSchema({ type: 'string', format }), issue };
}

/**
 * The header a parameter names, as the reference reads it: case-insensitive (RFC 9110 §5.1), so in
 * lower case, and with `_` standing for `-` (`x_request_id` reads `X-Request-Id`).
 */
export function headerKey(name: string): string {
  return name.replace(/_/g, '-').toLowerCase();
}

function compileParam(p: ParamSpec): CompiledParam {
  const isArray = schemaType(p.schema) === 'array';
  const coerceSchema = (isArray ? (p.schema.items as Record<string, unknown>) : p.schema) ?? {};
  const key = p.source === 'headers' ? headerKey(p.name) : p.name;
  const hasDefault = 'default' in p.schema;
  const defaultValue = p.schema.default;
  return {
    name: p.name,
    required: p.required,
    separator: p.separator,
    from: INPUT_FIELD[p.source],
    key,
    inheritedName: key in Object.prototype,
    into: p.source === 'cookie' ? 'cookies' : p.source,
    loc: Object.freeze([p.source, key]),
    blankIsMissing: p.source === 'path',
    quoteRaw: p.source !== 'path' && !isArray,
    isArray,
    coerce: scalarCoercer(coerceSchema),
    coerceSchema,
    genericErrors: p.genericErrors === true,
    readFormat: readFormat(coerceSchema, p.genericErrors === true),
    validate: compileSchema(p.schema),
    hasDefault,
    defaultValue,
    cloneDefault: hasDefault && defaultValue !== null && typeof defaultValue === 'object',
  };
}

/** Text → the parameter's scalar type, or UNCONVERTIBLE after pushing the issue (reported at `loc`). */
function readText(p: CompiledParam, text: string, loc: readonly (string | number)[], issues: ValidationIssue[]): unknown {
  // An issue gets a copy of the location: the parameter's own is shared by every request.
  if (p.readFormat && !p.readFormat.validate(text)) {
    issues.push(p.readFormat.issue(text, [...loc]));
    return UNCONVERTIBLE;
  }
  const v = p.coerce(text);
  if (v === UNCONVERTIBLE) issues.push(coercionIssue(text, p.coerceSchema, [...loc]));
  return v;
}

/**
 * A list parameter's items, converted; issues for those that do not convert (at the parameter's
 * location, as the reference reports them: no item index). Undefined when any failed.
 */
function coerceItems(p: CompiledParam, raw: unknown, issues: ValidationIssue[]): unknown[] | undefined {
  const sent = Array.isArray(raw) ? raw : [raw];
  let items: unknown[] = sent;
  const listed = p.from === 'query' && typeof raw === 'string' ? jsonList(raw) : undefined;
  if (listed) {
    // `?ids=[1,2]`: the reference's query reader takes a bracketed value as a JSON list. Its text items
    // are read like any other; numbers, booleans and null are checked by the schema as they are.
    const out: unknown[] = [];
    let ok = true;
    for (const item of listed) {
      if (typeof item !== 'string') out.push(item);
      else {
        const v = readText(p, item, p.loc, issues);
        if (v === UNCONVERTIBLE) ok = false;
        else out.push(v);
      }
    }
    return ok ? out : undefined;
  }
  if (p.separator) {
    items = [];
    for (const s of sent) for (const part of String(s).split(p.separator)) items.push(part);
  }
  const out: unknown[] = [];
  let ok = true;
  for (let i = 0; i < items.length; i++) {
    const v = readText(p, String(items[i]), p.loc, issues);
    if (v === UNCONVERTIBLE) ok = false;
    else out.push(v);
  }
  return ok ? out : undefined;
}

/**
 * A query value written as a JSON list (`[1,2]`, or with single quotes `['a','b']`), else undefined.
 * A list nested deeper than JSON bodies may be (MAX_JSON_DEPTH) is read as text.
 */
function jsonList(text: string): unknown[] | undefined {
  if (text.length < 2 || text.charCodeAt(0) !== 0x5b || text.charCodeAt(text.length - 1) !== 0x5d) return undefined;
  if (jsonDepthExceeds(Buffer.from(text), MAX_JSON_DEPTH)) return undefined;
  for (const candidate of [text, text.replace(/'/g, '"')]) {
    try {
      const v: unknown = JSON.parse(candidate);
      return Array.isArray(v) ? v : undefined;
    } catch {
      // not JSON as written: try the single-quoted form, then read the value as text
    }
  }
  return undefined;
}

/** What `readParam` returns for a parameter with nothing to check (absent, defaulted or unreadable). */
const NOTHING: unique symbol = Symbol('keel.nothing');

/**
 * Read one parameter: its default or its converted value, or the issue that it is missing or cannot be
 * read. Returns the value left to check against the schema, with the text it was read from.
 */
function readParam(p: CompiledParam, input: ValidationInput, out: ValidatedParams, issues: ValidationIssue[]): { value: unknown; raw: unknown } | typeof NOTHING {
  const source = input[p.from] as Record<string, unknown>;
  let raw = p.inheritedName && !Object.hasOwn(source, p.key) ? undefined : source[p.key];
  if (raw === undefined || (raw === '' && p.blankIsMissing)) {
    if (p.hasDefault) out[p.into][p.name] = p.cloneDefault ? structuredClone(p.defaultValue) : p.defaultValue;
    else if (p.required) issues.push({ type: 'missing', loc: [...p.loc], msg: 'Field required', input: null });
    return NOTHING;
  }
  if (p.isArray) {
    const value = coerceItems(p, raw, issues);
    return value === undefined ? NOTHING : { value, raw };
  }
  // A repeated query key: the reference reads the first value (a header sent twice arrives joined).
  if (Array.isArray(raw)) raw = raw[0];
  const value = readText(p, String(raw), p.loc, issues);
  return value === UNCONVERTIBLE ? NOTHING : { value, raw };
}

/** Check a read parameter against its schema: its value goes into `out`, its problems into `issues`. */
function checkParam(p: CompiledParam, value: unknown, raw: unknown, out: ValidatedParams, issues: ValidationIssue[]): void {
  if (p.validate(value)) {
    out[p.into][p.name] = value;
    return;
  }
  const first = issues.length;
  const errors = p.genericErrors ? appendGenericIssues(issues, p.validate.errors as ErrorObject[], p.loc, value) : (p.validate.errors as ErrorObject[]);
  const pydantic = issues.length;
  appendErrorsFromAjv(issues, errors, [...p.loc], value, true);
  if (p.quoteRaw && typeof raw === 'string') {
    for (let i = p.genericErrors ? pydantic : first; i < issues.length; i++) issues[i]!.input = raw;
  }
}

/** Parameters in the order the reference checks and reports them: by name (its parameter schema's key order). */
function byName(a: CompiledParam, b: CompiledParam): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * Compile a route's validator. Returns null when the route validates nothing (zero cost per request).
 * The validator throws one HttpError 422 carrying the issues of the first stage that has any, as the
 * reference reports them: the body (and its files) first; then the parameters, each read (missing,
 * not convertible, not of its read format) before any is checked against its schema.
 */
export function compileRequestValidator(
  params: ParamSpec[],
  bodySchema: Record<string, unknown> | undefined,
  bodyRequired = true,
  fileSpecs: readonly FileParamSpec[] = [],
): RequestValidator | null {
  if (params.length === 0 && !bodySchema && fileSpecs.length === 0) return null;
  const compiled = params.map(compileParam).sort(byName);
  const validateBody = bodySchema ? compileSchema(bodySchema) : null;
  const coerceFormBody = bodySchema ? formCoercer(bodySchema) : null;
  // Ajv fills `default`s into the value it validates (useDefaults): an error item's `input` must show what the
  // client sent, so a schema with defaults validates against a copy kept aside for the error path.
  const bodyDefaults = bodySchema ? hasDefaults(bodySchema) : false;

  return function validateRequest(input) {
    const issues: ValidationIssue[] = [];
    const body = coerceFormBody && input.hasBody && formBody(input.headers['content-type']) ? coerceFormBody(input.body) : input.body;
    const files = input.files ?? NO_FILES;
    if (fileSpecs.length) checkFiles(fileSpecs, files, issues);
    if (validateBody) {
      const withFiles = withUploads(input.hasBody ? body : undefined, files);
      const sent = bodyDefaults && withFiles !== null && typeof withFiles === 'object' ? structuredClone(withFiles) : withFiles;
      if (withFiles === undefined) {
        if (bodyRequired) issues.push({ type: 'missing', loc: ['body'], msg: 'Field required', input: null });
      } else if (!validateBody(withFiles)) {
        const bodyIssues: ValidationIssue[] = [];
        appendErrorsFromAjv(bodyIssues, validateBody.errors as ErrorObject[], ['body'], sent);
        issues.push(...bodyIssues.sort(byLoc));
      } else if (withFiles !== body && body !== null && typeof body === 'object') {
        // Defaults Ajv filled in for form fields reach the handler's body; files stay in `files`.
        for (const k of Object.keys(withFiles as object)) if (!(k in files)) (body as Record<string, unknown>)[k] = (withFiles as Record<string, unknown>)[k];
      }
    }
    if (issues.length) return new ValidationFailure(issues);

    const out: ValidatedParams = { path: {}, query: {}, headers: {}, cookies: {} };
    if (compiled.length) {
      const read: ({ value: unknown; raw: unknown } | typeof NOTHING)[] = new Array(compiled.length);
      for (let i = 0; i < compiled.length; i++) read[i] = readParam(compiled[i]!, input, out, issues);
      if (issues.length) return new ValidationFailure(issues);
      for (let i = 0; i < compiled.length; i++) {
        const r = read[i]!;
        if (r !== NOTHING) checkParam(compiled[i]!, r.value, r.raw, out, issues);
      }
      if (issues.length) return new ValidationFailure(issues);
    }
    return { params: out, body };
  };
}

/** True when a `default` keyword appears anywhere in `schema` (Ajv would write it into the validated value). */
function hasDefaults(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(hasDefaults);
  if (schema === null || typeof schema !== 'object') return false;
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'default' || hasDefaults(v)) return true;
  }
  return false;
}

/**
 * The body as the body schema sees it: multipart fields plus each uploaded file as a binary string
 * (its bytes, latin1), so OpenAPI's `{type: 'string', format: 'binary'}` describes a file and
 * `maxLength` bounds its size in bytes. `undefined` when there is no body at all.
 */
function withUploads(body: unknown, files: Record<string, UploadFile | UploadFile[]>): unknown {
  const names = Object.keys(files);
  if (names.length === 0) return body;
  const merged: Record<string, unknown> = body !== null && typeof body === 'object' && !Buffer.isBuffer(body) ? { ...(body as object) } : {};
  const asString = (f: UploadFile) => f.asBytes().toString('latin1');
  for (const k of names) {
    const f = files[k]!;
    merged[k] = Array.isArray(f) ? f.map(asString) : asString(f);
  }
  return merged;
}

const validationDetail = (n: number): string => `${n} validation error${n === 1 ? '' : 's'} in request`;

/** The 422 error for a list of issues (spec: Errors, problem details), for on_error hooks and next(err). */
export function validationError(issues: ValidationIssue[]): HttpError {
  return new HttpError(422, validationDetail(issues.length), {
    code: 'KEEL_VALIDATION_FAILED',
    extensions: { errors: issues },
  });
}

/** The problem validationError(issues) answers with, built without the error (the same members, the same bytes). */
export function validationProblem(issues: ValidationIssue[]): ProblemDetails {
  return problemFor('KEEL_VALIDATION_FAILED', validationDetail(issues.length), { errors: issues });
}

