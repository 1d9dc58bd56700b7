/**
 * Request validation, compiled once per route with Ajv.
 *
 * Path, query, header and cookie values arrive as strings; each is coerced to its schema type
 * first (so `?limit=10` satisfies `{type: integer}`), then checked. Errors use the shape of the
 * fixture corpus (Pydantic-style `{type, loc, msg, input, ctx}`), rendered as one 422 problem.
 */
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { HttpError } from './errors.js';
import { checkFiles, type FileParamSpec, type UploadFile } from './multipart.js';
import { coerceForm, coerceScalar, schemaType } from './coerce.js';
import { parseMediaType } from './content.js';
import { appendErrorsFromAjv } from './validation-errors.js';

// ajv-formats is CommonJS with a default export.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;

/**
 * The `email` format keel checks: the pattern the corpus's error items name (`string_pattern_mismatch`
 * with this `ctx.pattern`), so the error a client reads states the rule that was actually applied.
 */
export const EMAIL_PATTERN = '^[a-zA-Z0-9_.+-]+@[a-zA-Z0-9-]+\\.[a-zA-Z0-9-.]+$';

/**
 * `allErrors` so a client sees every problem at once; `verbose` so error items can quote the failing
 * sub-schema (`not`).
 */
const AJV_OPTIONS: Options = { allErrors: true, strict: false, coerceTypes: false, useDefaults: true, validateFormats: true, verbose: true };

function withFormats<T extends Ajv>(instance: T): T {
  addFormats(instance);
  instance.addFormat('email', new RegExp(EMAIL_PATTERN));
  return instance;
}

/** Draft-07 Ajv (the default): schemas compile once at build time. */
export const ajv: Ajv = withFormats(new Ajv(AJV_OPTIONS));
/** Draft 2020-12 Ajv, for schemas that declare `"$schema": "https://json-schema.org/draft/2020-12/schema"`. */
export const ajv2020: Ajv = withFormats(new Ajv2020(AJV_OPTIONS) as unknown as Ajv);

/** Compile with the Ajv of the draft the schema declares (2020-12, else draft-07); errors map the same way. */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction {
  const draft = typeof schema.$schema === 'string' ? schema.$schema : '';
  return (draft.includes('/2020-12/') ? ajv2020 : ajv).compile(schema);
}

export type ParamSource = 'path' | 'query' | 'headers' | 'cookie';
export const PARAM_SOURCES: readonly ParamSource[] = ['path', 'query', 'headers', 'cookie'];

export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

export interface ParamSpec {
  source: ParamSource;
  name: string;
  schema: Record<string, unknown>;
  required: boolean;
  /** Query arrays given as one delimited value (`?ids=1,2,3`). */
  separator?: string;
}

/** Keys of the fixture format's parameter entries that are not JSON Schema. */
const PARAM_META = new Set(['required', 'optional', 'annotation', 'separator', 'description', 'source', 'alias']);

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
    return { source, name, schema, required, ...(separator ? { separator } : {}) };
  });
}

const FORM_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data']);

/** Form fields arrive as text and are converted to the body schema's types; JSON bodies never are. */
function formBody(contentType: string | string[] | undefined): boolean {
  const media = parseMediaType(Array.isArray(contentType) ? contentType[0] : contentType);
  return media !== null && FORM_TYPES.has(media.type);
}

/** Order body issues by location, element by element (numbers numerically), as the corpus lists them. */
function byLoc(a: ValidationIssue, b: ValidationIssue): number {
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
interface CompiledParam extends ParamSpec {
  validate: ValidateFunction;
  isArray: boolean;
  itemSchema: Record<string, unknown>;
  hasDefault: boolean;
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

export type RequestValidator = (input: ValidationInput) => { params: ValidatedParams; body: unknown };

function rawValue(p: CompiledParam, input: ValidationInput): unknown {
  switch (p.source) {
    case 'path':
      return input.pathParams[p.name];
    case 'query':
      return input.query[p.name];
    case 'headers':
      return input.headers[p.name.toLowerCase()];
    case 'cookie':
      return input.cookies[p.name];
  }
}

/**
 * Compile a route's validator. Returns null when the route validates nothing (zero cost per request).
 * The validator throws one HttpError 422 carrying every issue.
 */
export function compileRequestValidator(
  params: ParamSpec[],
  bodySchema: Record<string, unknown> | undefined,
  bodyRequired = true,
  fileSpecs: readonly FileParamSpec[] = [],
): RequestValidator | null {
  if (params.length === 0 && !bodySchema && fileSpecs.length === 0) return null;
  const compiled: CompiledParam[] = params.map((p) => {
    const isArray = schemaType(p.schema) === 'array';
    const itemSchema = (isArray ? (p.schema.items as Record<string, unknown>) : p.schema) ?? {};
    return { ...p, validate: compileSchema(p.schema), isArray, itemSchema, hasDefault: 'default' in p.schema };
  });
  const validateBody = bodySchema ? compileSchema(bodySchema) : null;

  return function validateRequest(input) {
    const issues: ValidationIssue[] = [];
    const out: ValidatedParams = { path: {}, query: {}, headers: {}, cookies: {} };
    for (const p of compiled) {
      // Header names are case-insensitive (RFC 9110 §5.1): errors name them in lower case.
      const loc = [p.source, p.source === 'headers' ? p.name.toLowerCase() : p.name];
      const target = out[p.source === 'cookie' ? 'cookies' : p.source];
      let raw = rawValue(p, input);
      if (raw === undefined || (raw === '' && p.source !== 'query')) {
        if (p.hasDefault) target[p.name] = structuredClone(p.schema.default);
        else if (p.required) issues.push({ type: 'missing', loc, msg: 'Field required', input: null });
        continue;
      }
      let value: unknown;
      if (p.isArray) {
        let items = Array.isArray(raw) ? raw : [raw];
        if (p.separator) items = items.flatMap((s) => String(s).split(p.separator!));
        const coerced: unknown[] = [];
        let ok = true;
        items.forEach((s, i) => {
          const r = coerceScalar(String(s), p.itemSchema, [...loc, i]);
          if ('issue' in r) {
            issues.push(r.issue);
            ok = false;
          } else coerced.push(r.value);
        });
        if (!ok) continue;
        value = coerced;
      } else {
        if (Array.isArray(raw)) raw = raw[raw.length - 1];
        const r = coerceScalar(String(raw), p.schema, loc);
        if ('issue' in r) {
          issues.push(r.issue);
          continue;
        }
        value = r.value;
      }
      if (p.validate(value)) {
        target[p.name] = value;
        continue;
      }
      const first = issues.length;
      appendErrorsFromAjv(issues, p.validate.errors as ErrorObject[], loc, value);
      // A query value's constraint errors quote what the client sent (`"101"`), as the corpus does;
      // path values are quoted coerced.
      if (p.source === 'query' && !p.isArray && typeof raw === 'string') {
        for (let i = first; i < issues.length; i++) if (issues[i]!.loc.length === loc.length) issues[i]!.input = raw;
      }
    }
    const body = bodySchema && input.hasBody && formBody(input.headers['content-type']) ? coerceForm(input.body, bodySchema) : input.body;
    const files = input.files ?? {};
    if (fileSpecs.length) checkFiles(fileSpecs, files, issues);
    if (validateBody) {
      const withFiles = withUploads(input.hasBody ? body : undefined, files);
      if (withFiles === undefined) {
        if (bodyRequired) issues.push({ type: 'missing', loc: ['body'], msg: 'Field required', input: null });
      } else if (!validateBody(withFiles)) {
        const bodyIssues: ValidationIssue[] = [];
        appendErrorsFromAjv(bodyIssues, validateBody.errors as ErrorObject[], ['body'], withFiles);
        issues.push(...bodyIssues.sort(byLoc));
      } else if (withFiles !== body && body !== null && typeof body === 'object') {
        // Defaults Ajv filled in for form fields reach the handler's body; files stay in `files`.
        for (const k of Object.keys(withFiles as object)) if (!(k in files)) (body as Record<string, unknown>)[k] = (withFiles as Record<string, unknown>)[k];
      }
    }
    if (issues.length) throw validationError(issues);
    return { params: out, body };
  };
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

/** The 422 problem for a list of issues (spec: Errors, problem details). */
export function validationError(issues: ValidationIssue[]): HttpError {
  const n = issues.length;
  return new HttpError(422, `${n} validation error${n === 1 ? '' : 's'} in request`, {
    code: 'KEEL_VALIDATION_FAILED',
    extensions: { errors: issues },
  });
}

