/**
 * A small, dependency-free description language for keel's configuration records.
 *
 * Why not Ajv for records too? Records need things a JSON Schema validator does not give us in one
 * pass: snake_case *and* camelCase input, defaults that are frozen into the result, and error
 * messages that name the record, the key and the value and suggest the key the user meant. The same
 * description also emits a JSON Schema (see `toJsonSchema`) so editors and other implementations
 * can validate configuration files without keel.
 */
import { ConfigError } from '../http/errors.js';

export type FieldType =
  | { kind: 'string'; enum?: readonly string[]; minLength?: number; pattern?: RegExp; hint?: string }
  | { kind: 'integer'; min?: number; max?: number }
  | { kind: 'number'; min?: number; max?: number }
  | { kind: 'boolean' }
  | { kind: 'json' }
  | { kind: 'list'; of: FieldType; minItems?: number }
  | { kind: 'map'; of: FieldType }
  | { kind: 'record'; record: RecordDef<any> }
  | { kind: 'tagged'; tag: string; variants: Readonly<Record<string, RecordDef<any>>> };

export interface FieldSpec {
  type: FieldType;
  /** Value used when the key is absent. A function is called per parse (fresh lists/records). */
  default?: unknown;
  /** The key must be present (and not null unless nullable). */
  required?: boolean;
  /** `null` is a meaningful value (e.g. `max_body_size: null` = unlimited). */
  nullable?: boolean;
  /** One line for the JSON Schema `description`. */
  doc?: string;
}

export interface RecordOptions<T> {
  /** Input keys that are accepted and rewritten before parsing (e.g. `required_role` → `required_roles`). */
  rewrite?: (input: Record<string, unknown>, path: string) => Record<string, unknown>;
  /** Cross-field checks on the parsed (not yet frozen) value. Throw via `fail()`. */
  check?: (value: T, path: string) => void;
  /** Extra input keys documented in the JSON Schema (accepted by `rewrite`). */
  extraSchemaProperties?: Record<string, unknown>;
  doc?: string;
}

export interface RecordDef<T, I = unknown> {
  readonly name: string;
  /**
   * Type only (never set): what `parse` accepts, generated from the fields by `RecordInput`. Read it
   * with `InputOf<typeof X>`; `parse` itself takes `unknown` because configuration also comes from files.
   */
  readonly $input?: I;
  readonly fields: Readonly<Record<string, FieldSpec>>;
  /** Parse and validate `input` (snake_case or camelCase); fills defaults, returns a deep-frozen value. */
  parse(input: unknown, path?: string): Readonly<T>;
  /** The record with every default (throws if a field is required). */
  defaults(): Readonly<T>;
  /** JSON Schema (draft 2020-12) of the accepted input. */
  jsonSchema(): Record<string, unknown>;
}

/** `per_second` → `perSecond`. */
export function camelCase(snake: string): string {
  return snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `perSecond` → `per_second`. */
export function snakeCase(camel: string): string {
  return camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function levenshtein(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/**
 * The closest candidate within a small edit distance, compared in lower case both as given and in
 * snake_case (so `maxBodySise` finds `max_body_size`, and an enum value like `HS265` finds `HS256`).
 */
export function suggest(key: string, candidates: readonly string[]): string | undefined {
  const asGiven = key.toLowerCase();
  const asSnake = snakeCase(key).toLowerCase();
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const lc = c.toLowerCase();
    const d = Math.min(levenshtein(asGiven, lc), levenshtein(asSnake, lc));
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  if (best !== undefined && bestD <= Math.max(2, Math.floor(best.length / 3))) return best;
  // Otherwise a candidate that the key contains, or that contains the key, at a word boundary: the
  // spelling of another framework (`requests_per_second` for `per_second`, `header` for `header_name`).
  return candidates.find((c) => {
    const lc = c.toLowerCase();
    return lc.includes('_') || asSnake.includes('_') ? asSnake.endsWith(`_${lc}`) || asSnake.startsWith(`${lc}_`) || lc.startsWith(`${asSnake}_`) || lc.endsWith(`_${asSnake}`) : false;
  });
}

/** Quote a value for an error message without dumping huge structures. */
export function show(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
  try {
    const s = JSON.stringify(value);
    return s.length > 80 ? `${s.slice(0, 77)}...` : s;
  } catch {
    return String(value);
  }
}

function describe(t: FieldType): string {
  switch (t.kind) {
    case 'string':
      return t.enum ? `one of ${t.enum.map((e) => JSON.stringify(e)).join(', ')}` : t.hint ?? 'a string';
    case 'integer':
    case 'number': {
      const what = t.kind === 'integer' ? 'an integer' : 'a number';
      if (t.min !== undefined && t.max !== undefined) return `${what} from ${t.min} to ${t.max}`;
      if (t.min !== undefined) return `${what} >= ${t.min}`;
      return what;
    }
    case 'boolean':
      return 'true or false';
    case 'json':
      return 'any JSON value';
    case 'list':
      return `a list whose items are each ${describe(t.of)}`;
    case 'map':
      return 'an object';
    case 'record':
      return `a ${t.record.name} object`;
    case 'tagged':
      return `an object with "${t.tag}" one of ${Object.keys(t.variants).join(', ')}`;
  }
}

/** The ConfigError for a key a record does not have, with the key meant ("Did you mean") or the allowed keys. */
export function unknownKey(record: string, path: string, key: string, allowed: readonly string[], value: unknown): never {
  const s = suggest(key, allowed);
  const hint = s ? `Did you mean "${s}"?` : `Allowed keys: ${allowed.join(', ')}.`;
  throw new ConfigError(`Unknown key "${key}" in ${record}${path === record ? '' : ` at ${path}`}. ${hint}`, { record, path: `${path}.${key}`, key, value });
}

/** Raise a ConfigError for `path.key`. */
export function fail(record: string, path: string, key: string, value: unknown, expected: string, fix?: string): never {
  const where = key ? `${path}.${key}` : path;
  const message = `Invalid ${record} at ${where}: expected ${expected}, got ${show(value)}.${fix ? ` ${fix}` : ''}`;
  throw new ConfigError(message, { record, path: where, key, value });
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);
}

function parseValue(t: FieldType, value: unknown, record: string, path: string, key: string): unknown {
  const bad = (fix?: string): never => fail(record, path, key, value, describe(t), fix);
  switch (t.kind) {
    case 'string':
      if (typeof value !== 'string') bad();
      if (t.enum && !t.enum.includes(value as string)) {
        const s = suggest(value as string, t.enum);
        bad(s ? `Did you mean ${JSON.stringify(s)}?` : undefined);
      }
      if (t.minLength !== undefined && (value as string).length < t.minLength) bad(`It must not be empty.`);
      if (t.pattern && !t.pattern.test(value as string)) bad();
      return value;
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) bad();
      if ((t.min !== undefined && (value as number) < t.min) || (t.max !== undefined && (value as number) > t.max)) bad();
      return value;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) bad();
      if ((t.min !== undefined && (value as number) < t.min) || (t.max !== undefined && (value as number) > t.max)) bad();
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') bad();
      return value;
    case 'json':
      return value;
    case 'list': {
      if (!Array.isArray(value)) bad();
      const arr = value as unknown[];
      if (t.minItems !== undefined && arr.length < t.minItems) bad(`Give at least ${t.minItems} item(s).`);
      return arr.map((item, i) => parseValue(t.of, item, record, path, `${key}[${i}]`));
    }
    case 'map': {
      if (!isPlainObject(value)) bad();
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = parseValue(t.of, v, record, path, `${key}.${k}`);
      return out;
    }
    case 'record':
      // Checked here so the error names this record's key (e.g. `background_tasks: null`).
      if (!isPlainObject(value)) bad();
      return t.record.parse(value, `${path}.${key}`);
    case 'tagged': {
      if (!isPlainObject(value)) bad();
      const tag = (value as Record<string, unknown>)[t.tag];
      const variant = typeof tag === 'string' ? t.variants[tag] : undefined;
      if (!variant) {
        fail(record, path, `${key}.${t.tag}`, tag, `one of ${Object.keys(t.variants).map((v) => JSON.stringify(v)).join(', ')}`);
      }
      const { [t.tag]: _tag, ...rest } = value as Record<string, unknown>;
      return { [t.tag]: tag, ...(variant.parse(rest, `${path}.${key}`) as object) };
    }
  }
}

function deepFreeze<T>(v: T): T {
  // Functions (handlers, middleware in route definitions) and buffers are left as they are.
  if (v && typeof v === 'object' && !Object.isFrozen(v) && !ArrayBuffer.isView(v)) {
    for (const child of Object.values(v as object)) deepFreeze(child);
    Object.freeze(v);
  }
  return v;
}

function resolveDefault(spec: FieldSpec): unknown {
  const d = typeof spec.default === 'function' ? (spec.default as () => unknown)() : spec.default;
  return d === undefined ? undefined : structuredClone(d);
}

/**
 * Describe a record once; get a parser, its defaults, its JSON Schema and (through the curried form)
 * its TypeScript input type.
 *
 * Fields are written in snake_case (the spec's canonical form); the parser also accepts the
 * camelCase spelling of every key, but not both at once.
 *
 * `defineRecord<Out>()(name, fields)` infers the fields, so `InputOf<typeof X>` is generated from
 * the very description the parser runs on (the types cannot drift from the runtime check);
 * `Extra` adds input keys a `rewrite` accepts. `defineRecord<Out>(name, fields)` gives a record
 * whose input type is `unknown`.
 *
 * @example
 * const Limits = defineRecord<{ max_items: number }>()('Limits', { max_items: { type: t.integer(1), default: 10 } });
 * type LimitsInput = InputOf<typeof Limits>; // { max_items?: number; maxItems?: number }
 */
export function defineRecord<T, Extra = {}>(): <const F extends Record<string, FieldSpec>>(name: string, fields: F, options?: RecordOptions<T>) => RecordDef<T, RecordInput<F> & Extra>;
export function defineRecord<T>(name: string, fields: Record<string, FieldSpec>, options?: RecordOptions<T>): RecordDef<T>;
export function defineRecord<T>(...args: [] | [string, Record<string, FieldSpec>, RecordOptions<T>?]): unknown {
  if (args.length === 0) return (name: string, fields: Record<string, FieldSpec>, options?: RecordOptions<T>) => makeRecord<T>(name, fields, options);
  return makeRecord<T>(args[0], args[1], args[2]);
}

function makeRecord<T>(name: string, fields: Record<string, FieldSpec>, options: RecordOptions<T> = {}): RecordDef<T> {
  const keys = Object.keys(fields);
  const byCamel = new Map<string, string>();
  for (const k of keys) byCamel.set(camelCase(k), k);

  const def: RecordDef<T> = {
    name,
    fields,
    parse(input: unknown, path: string = name): Readonly<T> {
      if (input === undefined) input = {};
      if (!isPlainObject(input)) {
        fail(name, path, '', input, `an object with keys ${keys.join(', ')}`);
      }
      let obj = input as Record<string, unknown>;
      if (options.rewrite) obj = options.rewrite({ ...obj }, path);
      const seen = new Map<string, string>();
      const out: Record<string, unknown> = {};
      for (const [rawKey, value] of Object.entries(obj)) {
        const key = rawKey in fields ? rawKey : (byCamel.get(rawKey) ?? rawKey);
        if (!(key in fields)) unknownKey(name, path, rawKey, keys, value);
        if (seen.has(key)) {
          throw new ConfigError(`Key "${key}" of ${name} at ${path} is given twice (as "${seen.get(key)}" and "${rawKey}"). Keep one.`, { record: name, path: `${path}.${key}`, key, value });
        }
        seen.set(key, rawKey);
        const spec = fields[key]!;
        if (value === null && spec.nullable) out[key] = null;
        else if (value === undefined) continue;
        else out[key] = parseValue(spec.type, value, name, path, key);
      }
      for (const key of keys) {
        if (key in out) continue;
        const spec = fields[key]!;
        if (spec.required) fail(name, path, key, undefined, describe(spec.type), `"${key}" is required.`);
        const d = resolveDefault(spec);
        out[key] = d === undefined ? (spec.nullable ? null : undefined) : d;
        if (out[key] === undefined) delete out[key];
      }
      options.check?.(out as T, path);
      return deepFreeze(out) as Readonly<T>;
    },
    defaults(): Readonly<T> {
      return def.parse({});
    },
    jsonSchema(): Record<string, unknown> {
      return recordSchema(def, options);
    },
  };
  // Object.freeze keeps users from mutating a shared definition.
  return Object.freeze(def);
}

function typeSchema(t: FieldType): Record<string, unknown> {
  switch (t.kind) {
    case 'string':
      return { type: 'string', ...(t.enum ? { enum: [...t.enum] } : {}), ...(t.minLength ? { minLength: t.minLength } : {}), ...(t.pattern ? { pattern: t.pattern.source } : {}) };
    case 'integer':
    case 'number':
      return { type: t.kind, ...(t.min !== undefined ? { minimum: t.min } : {}), ...(t.max !== undefined ? { maximum: t.max } : {}) };
    case 'boolean':
      return { type: 'boolean' };
    case 'json':
      return {};
    case 'list':
      return { type: 'array', items: typeSchema(t.of), ...(t.minItems ? { minItems: t.minItems } : {}) };
    case 'map':
      return { type: 'object', additionalProperties: typeSchema(t.of) };
    case 'record':
      return { $ref: `#/$defs/${t.record.name}` };
    case 'tagged':
      // Each variant inline with its tag added: a `$ref` to the variant would carry its
      // `additionalProperties: false` and so reject the tag member itself.
      return {
        oneOf: Object.entries(t.variants).map(([tag, rec]) => {
          const { $schema: _s, $defs: _d, ...variant } = rec.jsonSchema();
          return {
            ...variant,
            properties: { [t.tag]: { const: tag }, ...(variant.properties as object) },
            required: [t.tag, ...((variant.required as string[] | undefined) ?? [])],
          };
        }),
      };
  }
}

function collectDefs(t: FieldType, defs: Record<string, unknown>): void {
  const add = (rec: RecordDef<any>) => {
    if (defs[rec.name]) return;
    const s = rec.jsonSchema();
    const inner = (s.$defs as Record<string, unknown>) ?? {};
    delete s.$defs;
    delete s.$schema;
    defs[rec.name] = s;
    Object.assign(defs, inner);
  };
  if (t.kind === 'record') add(t.record);
  else if (t.kind === 'tagged') {
    // Variants are inlined (typeSchema); only what they nest goes to $defs.
    for (const rec of Object.values(t.variants)) Object.assign(defs, (rec.jsonSchema().$defs as Record<string, unknown>) ?? {});
  }
  else if (t.kind === 'list' || t.kind === 'map') collectDefs(t.of, defs);
}

function recordSchema(def: RecordDef<any>, options: RecordOptions<any>): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const defs: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(def.fields)) {
    let s = typeSchema(spec.type);
    if (spec.nullable) s = { anyOf: [s, { type: 'null' }] };
    const d = resolveDefault(spec);
    properties[key] = { ...s, ...(spec.doc ? { description: spec.doc } : {}), ...(d !== undefined ? { default: d } : {}) };
    if (spec.required) required.push(key);
    collectDefs(spec.type, defs);
  }
  Object.assign(properties, options.extraSchemaProperties ?? {});
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: def.name,
    ...(options.doc ? { description: options.doc } : {}),
    type: 'object',
    properties,
    ...(required.length ? { required } : {}),
    additionalProperties: false,
    ...(Object.keys(defs).length ? { $defs: defs } : {}),
  };
}

type StringType = Extract<FieldType, { kind: 'string' }>;

/**
 * Field helpers keep record definitions short and uniform. Each returns its exact field type (an
 * enum's literal values, the nested record, the list's item type) so `RecordInput` can read it.
 */
export const t = {
  string: <const E extends readonly string[] = readonly string[]>(extra: Omit<StringType, 'kind' | 'enum'> & { enum?: E } = {}): { kind: 'string'; enum?: E } & Omit<StringType, 'kind' | 'enum'> =>
    ({ kind: 'string', ...extra }),
  integer: (min?: number, max?: number): { kind: 'integer'; min?: number; max?: number } => ({ kind: 'integer', min, max }),
  number: (min?: number, max?: number): { kind: 'number'; min?: number; max?: number } => ({ kind: 'number', min, max }),
  boolean: (): { kind: 'boolean' } => ({ kind: 'boolean' }),
  json: (): { kind: 'json' } => ({ kind: 'json' }),
  list: <const O extends FieldType>(of: O, minItems?: number): { kind: 'list'; of: O; minItems?: number } => ({ kind: 'list', of, minItems }),
  map: <const O extends FieldType>(of: O): { kind: 'map'; of: O } => ({ kind: 'map', of }),
  record: <R extends RecordDef<any, any>>(record: R): { kind: 'record'; record: R } => ({ kind: 'record', record }),
};

// ---------------------------------------------------------------- input types, generated from the fields

/** `per_second` → `perSecond` at the type level: the same rule as `camelCase()`. */
export type CamelCase<S extends string> = S extends `${infer H}_${infer R}` ? `${H}${Capitalize<CamelCase<R>>}` : S;

/** What a record's `parse` accepts (snake_case or camelCase keys), e.g. `InputOf<typeof ServerConfig>`. */
export type InputOf<R> = R extends { readonly $input?: infer I } ? Exclude<I, undefined> : never;

/** The input value of one field type: enums as literal unions, nested records as their input. */
export type FieldValue<F> =
  F extends { kind: 'string'; enum?: readonly (infer L)[] } ? L
  : F extends { kind: 'integer' | 'number' } ? number
  : F extends { kind: 'boolean' } ? boolean
  : F extends { kind: 'json' } ? unknown
  : F extends { kind: 'list'; of: infer O } ? readonly FieldValue<O>[]
  : F extends { kind: 'map'; of: infer O } ? Readonly<Record<string, FieldValue<O>>>
  : F extends { kind: 'record'; record: infer R } ? InputOf<R>
  : F extends { kind: 'tagged'; tag: infer G extends string; variants: infer V } ? { [K in keyof V & string]: { [P in G]: K } & InputOf<V[K]> }[keyof V & string]
  : never;

// `nullable: boolean` (a fields object written without `as const`) still admits null: the parser decides.
type SpecValue<S> = S extends { type: infer F } ? FieldValue<F> | (S extends { nullable: infer N } ? (true extends N ? null : never) : never) : never;
type RequiredKeys<F> = { [K in keyof F & string]: F[K] extends { required: true } ? K : never }[keyof F & string];
type OptionalKeys<F> = Exclude<keyof F & string, RequiredKeys<F>>;
type Flatten<T> = { [K in keyof T]: T[K] } & {};
type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
/** A required key: in snake_case or in camelCase, not both. */
type EitherSpelling<K extends string, V> = K extends CamelCase<K>
  ? { [P in K]: V }
  : ({ [P in K]: V } & { [P in CamelCase<K>]?: never }) | ({ [P in CamelCase<K>]: V } & { [P in K]?: never });
type RequiredInput<F> = UnionToIntersection<{ [K in RequiredKeys<F>]: { box: EitherSpelling<K, SpecValue<F[K]>> } }[RequiredKeys<F>]> extends { box: infer B } ? B : unknown;

/**
 * The input type of a record with fields `F`: every optional key in snake_case and camelCase,
 * required keys in one spelling, `null` where the field is nullable. Unknown keys are excess
 * properties, so a typo is a compile error as well as a start-up ConfigError.
 */
export type RecordInput<F> = Flatten<
  { [K in OptionalKeys<F>]?: SpecValue<F[K]> } & { [K in OptionalKeys<F> as CamelCase<K>]?: SpecValue<F[K]> }
> & RequiredInput<F>;
