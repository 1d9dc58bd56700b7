/**
 * Request validation as docs/conformance.md words it (parameter text to typed values, JSON Schema
 * keywords, Pydantic-style error items), written with Ajv by an outside author: the worked example's
 * Fastify server (server.ts) and the Fastify-with-plugins implementation (../conformance-fastify/)
 * share it. Not keel's code.
 */
import type { FastifyRequest } from 'fastify';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

export type Json = Record<string, unknown>;
export interface Parameter { name: string; source: 'path' | 'query' | 'headers' | 'cookies' | 'files'; required: boolean; schema: Json; separator?: string; default?: unknown }
export interface ManifestCase { id: string; method: string; route: string; route_colon: string; parameters: Parameter[]; body: { required: boolean; schema: Json } | null; handler: Json; handler_response: { status: number; body?: unknown; headers?: Record<string, string>; error?: { detail?: string } } }
/**
 * Whose wording: `corpus` (default: the shared corpus's, docs/conformance.md "Validation error items:
 * the corpus's wording") or `page` (the shipped suite's: the page's "Validation: Spikard's rules" —
 * lower-case header names in loc, strict booleans, query/header/cookie inputs quoted as sent, formats
 * named, the validator's words for multipleOf).
 */
export type Wording = 'corpus' | 'page';

export interface Item { type: string; loc: Array<string | number>; msg: string; input?: unknown; ctx?: Json }

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false, verbose: true, logger: false }));
const LOC: Record<Parameter['source'], string> = { path: 'path', query: 'query', headers: 'headers', cookies: 'cookie', files: 'files' };
const FORMAT_NAMES: Record<string, string> = { email: 'email', ipv4: 'IPv4 address', ipv6: 'IPv6 address', uri: 'URI', date: 'date', 'date-time': 'datetime', hostname: 'hostname' };

const quoteList = (values: unknown[]) => {
  const q = values.map((v) => `'${String(v)}'`);
  return q.length > 1 ? `${q.slice(0, -1).join(', ')} or ${q.at(-1)}` : q.join('');
};
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** A text value converted to the schema's type, or the Pydantic-style item saying why it cannot be. */
function coerce(text: string, schema: Json, loc: Item['loc'], wording: Wording = 'corpus'): { value: unknown } | { error: Item } {
  if (wording === 'page' && schema.type === 'boolean') {
    const t = text.toLowerCase();
    if (t === 'true' || t === '1') return { value: true };
    if (t === 'false' || t === '0' || t === '') return { value: false };
    return { error: { type: 'bool_parsing', loc, msg: 'Input should be a valid boolean, unable to interpret input', input: text } };
  }
  switch (schema.type) {
    case 'integer':
      return /^[+-]?\d+$/.test(text) ? { value: Number(text) } : { error: { type: 'int_parsing', loc, msg: 'Input should be a valid integer, unable to parse string as an integer', input: text } };
    case 'number':
      return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text.trim()) ? { value: Number(text) } : { error: { type: 'float_parsing', loc, msg: 'Input should be a valid number, unable to parse string as a number', input: text } };
    case 'boolean': {
      const t = text.toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(t)) return { value: true };
      if (['false', '0', 'no', 'off', ''].includes(t)) return { value: false };
      return { error: { type: 'bool_parsing', loc, msg: 'Input should be a valid boolean, unable to interpret input', input: text } };
    }
    default:
      return { value: text };
  }
}

/** One Ajv error as the corpus writes it: Pydantic-style for what Pydantic has, its generic items otherwise. */
/** The page's items where they differ from the corpus's (see Wording); undefined: the corpus's item. */
function pageItem(e: ErrorObject, loc: Item['loc'], input: unknown): Item | undefined {
  const p = e.params as Json;
  if (e.keyword === 'multipleOf') return { type: 'validation_error', loc, msg: `${JSON.stringify(input)} is not a multiple of ${p.multipleOf}`, input };
  if (e.keyword === 'minItems') return { type: 'too_short', loc, msg: `List should have at least ${p.limit} item after validation`, input, ctx: { min_length: p.limit } };
  if (e.keyword === 'additionalProperties') return { type: 'validation_error', loc: [...loc, p.additionalProperty as string], msg: 'Additional properties are not allowed', input, ctx: { additional_properties: false, unexpected_field: p.additionalProperty } };
  if (e.keyword === 'format') {
    if (p.format === 'email') return { type: 'string_pattern_mismatch', loc, msg: 'value is not a valid email address', input };
    if (p.format === 'date') return { type: 'date_parsing', loc, msg: 'Input should be a valid date', input };
    if (p.format === 'ipv4') return { type: 'format_error', loc, msg: 'Input is not a valid IPv4 address', input };
  }
  return undefined;
}

function item(e: ErrorObject, base: Item['loc'], root: unknown, wording: Wording = 'corpus'): Item {
  if (wording === 'page') {
    const path = e.instancePath.split('/').slice(1).map((s) => (/^\d+$/.test(s) ? Number(s) : s));
    const input = path.reduce<unknown>((v, k) => (v as Json | undefined)?.[k as string], root);
    const own = pageItem(e, [...base, ...path], input);
    if (own) return own;
  }
  const path = e.instancePath.split('/').slice(1).map((s) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~')));
  const loc = [...base, ...path];
  const input = path.reduce<unknown>((v, k) => (v as Json | undefined)?.[k as string], root);
  const p = e.params as Json;
  const json = JSON.stringify;
  switch (e.keyword) {
    case 'required': return { type: 'missing', loc: [...loc, p.missingProperty as string], msg: 'Field required', input };
    case 'minLength': return { type: 'string_too_short', loc, msg: `String should have at least ${plural(p.limit as number, 'character')}`, input, ctx: { min_length: p.limit } };
    case 'maxLength': return { type: 'string_too_long', loc, msg: `String should have at most ${plural(p.limit as number, 'character')}`, input, ctx: { max_length: p.limit } };
    case 'pattern': return { type: 'string_pattern_mismatch', loc, msg: `String should match pattern '${p.pattern}'`, input, ctx: { pattern: p.pattern } };
    case 'minimum': return { type: 'greater_than_equal', loc, msg: `Input should be greater than or equal to ${p.limit}`, input, ctx: { ge: p.limit } };
    case 'maximum': return { type: 'less_than_equal', loc, msg: `Input should be less than or equal to ${p.limit}`, input, ctx: { le: p.limit } };
    case 'exclusiveMinimum': return { type: 'greater_than', loc, msg: `Input should be greater than ${p.limit}`, input, ctx: { gt: p.limit } };
    case 'exclusiveMaximum': return { type: 'less_than', loc, msg: `Input should be less than ${p.limit}`, input, ctx: { lt: p.limit } };
    case 'minItems': return { type: 'too_short', loc, msg: `List should have at least ${plural(p.limit as number, 'item')} after validation`, input, ctx: { min_length: p.limit } };
    case 'maxItems': return { type: 'too_long', loc, msg: `List should have at most ${plural(p.limit as number, 'item')} after validation`, input, ctx: { max_length: p.limit } };
    case 'enum': {
      const expected = quoteList(p.allowedValues as unknown[]);
      return { type: 'enum', loc, msg: `Input should be ${expected}`, input, ctx: { expected } };
    }
    case 'type': {
      const t = String(p.type);
      if (t === 'number') return { type: 'float_parsing', loc, msg: 'Input should be a valid number, unable to parse string as a number', input };
      if (t === 'integer') return { type: 'int_parsing', loc, msg: 'Input should be a valid integer, unable to parse string as an integer', input };
      return { type: `${t === 'array' ? 'list' : t === 'object' ? 'dict' : t === 'boolean' ? 'bool' : t}_type`, loc, msg: `Input should be a valid ${t === 'array' ? 'list' : t === 'object' ? 'dictionary' : t}`, input };
    }
    case 'format':
      if (p.format === 'uuid') return { type: 'uuid_parsing', loc, msg: 'Input should be a valid UUID', input };
      return { type: 'validation_error', loc, msg: `Invalid ${FORMAT_NAMES[p.format as string] ?? p.format} format`, ctx: { format: p.format, value: input } };
    case 'multipleOf': return { type: 'validation_error', loc, msg: `Value must be a multiple of ${p.multipleOf}`, ctx: { multiple_of: p.multipleOf, value: input } };
    case 'uniqueItems': return { type: 'validation_error', loc, msg: 'Array items must be unique', ctx: { unique_items: true, duplicate_value: (input as unknown[])[Math.max(p.i as number, p.j as number)], duplicate_index: Math.max(p.i as number, p.j as number) } };
    case 'oneOf': return { type: 'validation_error', loc, msg: `${json(input)} is ${p.passingSchemas ? 'valid under more than one' : 'not valid under any'} of the schemas listed in the 'oneOf' keyword`, input };
    case 'anyOf': return { type: 'validation_error', loc, msg: `${json(input)} is not valid under any of the schemas listed in the 'anyOf' keyword`, input };
    case 'not': return { type: 'validation_error', loc, msg: `${json(e.schema)} is not allowed for ${json(input)}`, input };
    case 'const': return { type: 'validation_error', loc, msg: `${json(p.allowedValue)} was expected`, input };
    case 'maxProperties': return { type: 'validation_error', loc, msg: `${json(input)} has more than ${p.limit} properties`, input };
    case 'minProperties': return { type: 'validation_error', loc, msg: `${json(input)} has less than ${p.limit} properties`, input };
    case 'dependencies': case 'dependentRequired': return { type: 'validation_error', loc, msg: `${json(p.missingProperty)} is a required property`, input };
    default: return { type: 'validation_error', loc, msg: e.message ?? e.keyword, input };
  }
}

/** Ajv reports a failed branch's errors too; keep the combinator's own error, as jsonschema does. */
function leaves(errors: ErrorObject[]): ErrorObject[] {
  const combinators = errors.filter((e) => ['oneOf', 'anyOf', 'not'].includes(e.keyword));
  return errors.filter((e) => !combinators.some((c) => c !== e && e.schemaPath.startsWith(c.schemaPath.replace(/\/(oneOf|anyOf|not)$/, `/${c.keyword}/`))));
}

export function cookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (header ?? '').split(';')) {
    const i = pair.indexOf('=');
    if (i > 0) out[pair.slice(0, i).trim()] = decodeURIComponent(pair.slice(i + 1).trim());
  }
  return out;
}

const compiled = new Map<string, ValidateFunction>();
function validator(schema: Json): ValidateFunction {
  const key = JSON.stringify(schema);
  let v = compiled.get(key);
  if (!v) compiled.set(key, (v = ajv.compile(schema)));
  return v;
}

/** Every validation error of a request against one case's parameters and body. */
export function validate(c: ManifestCase, req: FastifyRequest, wording: Wording = 'corpus'): Item[] {
  const items: Item[] = [];
  const url = new URL(req.url, 'http://x');
  const jar = cookies(req.headers.cookie);
  for (const p of c.parameters) {
    const loc = [LOC[p.source], wording === 'page' && p.source === 'headers' ? p.name.toLowerCase() : p.name];
    let raw: string[] = [];
    if (p.source === 'path') raw = [String((req.params as Record<string, string>)[p.name] ?? (req.params as Record<string, string>)['*'])];
    else if (p.source === 'query') raw = url.searchParams.getAll(p.name);
    else if (p.source === 'headers') raw = ([] as string[]).concat(req.headers[p.name.toLowerCase()] ?? []);
    else if (p.source === 'cookies' && p.name in jar) raw = [jar[p.name]!];
    if (raw.length === 0) {
      if (p.required) items.push({ type: 'missing', loc, msg: 'Field required', input: null });
      continue;
    }
    let value: unknown;
    if (p.schema.type === 'array') {
      const texts = p.separator ? raw.flatMap((r) => r.split(p.separator!)) : raw;
      const list: unknown[] = [];
      texts.forEach((t, i) => {
        const r = coerce(t, (p.schema.items as Json) ?? {}, [...loc, i], wording);
        if ('error' in r) items.push(r.error);
        else list.push(r.value);
      });
      value = list;
    } else {
      const r = coerce(raw.at(-1)!, p.schema, loc, wording);
      if ('error' in r) {
        items.push(r.error);
        continue;
      }
      value = r.value;
    }
    const check = validator(p.schema);
    // The page quotes query, header and cookie values as sent in constraint items (path values converted).
    const echoed = wording === 'page' && p.source !== 'path' && p.schema.type !== 'array' ? raw.at(-1) : value;
    if (!check(value)) items.push(...leaves(check.errors ?? []).map((e) => ({ ...item(e, loc, value, wording), ...(wording === 'page' && e.instancePath === '' && e.keyword !== 'required' ? { input: echoed } : {}) })));
  }
  if (c.body) {
    if (req.body === undefined || req.body === null) {
      if (c.body.required) items.push({ type: 'missing', loc: ['body'], msg: 'Field required', input: null });
    } else {
      const check = validator(c.body.schema);
      if (!check(req.body)) {
        const found = leaves(check.errors ?? []).map((e) => item(e, ['body'], req.body, wording));
        // The page (routes.md): body issues ordered by location.
        if (wording === 'page') found.sort((x, y) => x.loc.join('\u0000').localeCompare(y.loc.join('\u0000')));
        items.push(...found);
      }
    }
  }
  return items;
}

