/**
 * A route's JSON Schemas, checked when the route is registered: each one against its draft's
 * meta-schema, then compiled (unresolvable `$ref`s), then every `default` it declares against the
 * schema it is the default of. A schema found wrong only when the first request arrives, or a
 * default that makes the handler receive a value its own type denies (`default: 'ten'` for an
 * integer), is a bug the user should see at start-up, with the route and the part named.
 */
import type { ErrorObject } from 'ajv';
import { AppError } from '../http/errors.js';
import { show, suggest } from '../records/define.js';
import { ajvFor } from '../http/validation.js';
import type { ParamSpec } from '../http/validation.js';

type Schema = Record<string, unknown>;

/** The name a parameter source has in route options (`parameters.cookies`, not the internal `cookie`). */
const PART_OF_SOURCE: Readonly<Record<ParamSpec['source'], string>> = { path: 'path', query: 'query', headers: 'headers', cookie: 'cookies' };

/** How deep `default`s are looked for in a body schema (properties / items nest this far). */
const MAX_DEFAULT_DEPTH = 32;

/** `/properties/title/type` → `properties.title.type` (JSON Pointer, RFC 6901 §4 unescaping). */
function dotted(pointer: string): string {
  return pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')).join('.');
}

function valueAt(root: unknown, pointer: string): unknown {
  let v = root;
  for (const k of pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/**
 * Ajv's meta-schema errors in words, one per place: `type: 'strng'` yields three errors at the same
 * pointer (not in the enum, not an array, anyOf failed); the enum one says what is allowed.
 */
export function describeSchemaErrors(schema: unknown, errors: readonly ErrorObject[]): string {
  const byPlace = new Map<string, ErrorObject[]>();
  for (const e of errors) byPlace.set(e.instancePath, [...(byPlace.get(e.instancePath) ?? []), e]);
  const lines: string[] = [];
  for (const [pointer, errs] of byPlace) {
    const where = pointer ? `at ${dotted(pointer)}` : 'at the top';
    const value = valueAt(schema, pointer);
    const e = errs.find((x) => x.keyword === 'enum') ?? errs.find((x) => x.keyword !== 'anyOf' && x.keyword !== 'oneOf') ?? errs[0]!;
    if (e.keyword === 'enum') {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues.map(String);
      const meant = typeof value === 'string' ? suggest(value, allowed) : undefined;
      lines.push(`${where}, ${show(value)} is not one of ${allowed.join(', ')}${meant ? ` (did you mean "${meant}"?)` : ''}`);
    } else {
      lines.push(`${where}, ${show(value)} ${e.message ?? 'is not valid'}`);
    }
  }
  return lines.join('; ');
}

/** The default of each `properties` / `items` member that has one, with the schema it belongs to. */
function* defaultsIn(schema: unknown, at: string, depth = 0): Generator<{ at: string; schema: Schema }> {
  if (depth > MAX_DEFAULT_DEPTH || schema === null || typeof schema !== 'object' || Array.isArray(schema)) return;
  const s = schema as Schema;
  if (depth > 0 && 'default' in s) yield { at, schema: s };
  if (s.properties && typeof s.properties === 'object') {
    for (const [k, sub] of Object.entries(s.properties as Schema)) yield* defaultsIn(sub, `${at}.${k}`, depth + 1);
  }
  if (s.items && typeof s.items === 'object' && !Array.isArray(s.items)) yield* defaultsIn(s.items, `${at}[]`, depth + 1);
}

/** A sub-schema that can be compiled on its own: no reference into the rest of the document, no `$id` of its own. */
function standalone(schema: Schema): boolean {
  const text = JSON.stringify(schema);
  return !text.includes('"$ref"') && !text.includes('"$id"') && !text.includes('"$dynamicRef"');
}

function checkDefault(route: string, part: string, schema: Schema, own: Schema): void {
  const ajv = ajvFor(own);
  const validate = ajv.compile(schema);
  // A copy: Ajv's useDefaults would otherwise fill nested defaults into the user's own default value.
  if (!validate(structuredClone(schema.default))) {
    const why = (validate.errors ?? []).map((e) => `${e.instancePath ? `${dotted(e.instancePath)} ` : ''}${e.message ?? 'is not valid'}`).join('; ');
    throw new AppError('Route', `Route ${route}: the default of ${part} (${show(schema.default)}) does not match its own schema: ${why}. Give a default of the declared type, or remove it.`);
  }
}

/**
 * Check one schema of a route (`part` says which: `body`, `query.limit`, `response`, …): an
 * AppError('Route') naming the route, the part and the problem in words.
 */
export function checkSchema(route: string, part: string, schema: unknown): void {
  if (typeof schema === 'boolean') return;
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    throw new AppError('Route', `Route ${route}: the ${part} schema must be a JSON Schema object, got ${show(schema)}.`);
  }
  const s = schema as Schema;
  const ajv = ajvFor(s);
  // validateSchema first: Ajv caches a schema object before checking it, so compile() alone would
  // leave an invalid schema cached for the next compile to use unchecked.
  if (!ajv.validateSchema(s)) {
    throw new AppError('Route', `Route ${route}: the ${part} schema is invalid: ${describeSchemaErrors(s, ajv.errors ?? [])}. Fix it to be valid JSON Schema (${s.$schema ? String(s.$schema) : 'draft-07'}).`);
  }
  try {
    ajv.compile(s);
  } catch (err) {
    throw new AppError('Route', `Route ${route}: the ${part} schema does not compile: ${(err as Error).message}.`, { cause: err });
  }
  for (const d of defaultsIn(s, part)) {
    if (standalone(d.schema)) checkDefault(route, d.at, d.schema, s);
  }
}

/** Every schema a route declares: parameters (each with its default), body, response, OpenAPI response schemas. */
export function checkRouteSchemas(
  route: string,
  parts: { params: readonly ParamSpec[]; body: unknown; response: unknown; responses?: Readonly<Record<string, { schema?: object }>> },
): void {
  for (const p of parts.params) {
    const part = `${PART_OF_SOURCE[p.source]}.${p.name}`;
    checkSchema(route, part, p.schema);
    // `default: null` is FastAPI's `= None`: the parameter is optional and absent means null.
    if ('default' in p.schema && p.schema.default !== null) checkDefault(route, part, p.schema, p.schema);
  }
  if (parts.body !== undefined) checkSchema(route, 'body', parts.body);
  if (parts.response !== undefined) checkSchema(route, 'response', parts.response);
  for (const [status, r] of Object.entries(parts.responses ?? {})) {
    if (r?.schema !== undefined) checkSchema(route, `openapi.responses.${status}`, r.schema);
  }
}
