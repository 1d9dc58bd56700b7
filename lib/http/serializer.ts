/**
 * Response contracts: a route's response schema, compiled once when the route is built, both to
 * check what a handler answers and to serialise it.
 *
 * - Serialising follows Fastify's serializer (fast-json-stringify, compiled per schema): only the
 *   members a schema declares are written; undeclared ones never leave unless the schema allows them
 *   (`additionalProperties: true` or a schema, `patternProperties`). An object schema that declares no
 *   properties at all (`{ type: 'object' }`) is free-form and written whole (Fastify would write `{}`).
 * - fast-json-stringify coerces rather than validates (`'x'` for an integer becomes 0), so in strict mode
 *   the value is first checked by Ajv (compiled once, no coercion, no defaults): a wrong type or a
 *   missing required member is a violation, never a wrong answer. The check ignores
 *   `additionalProperties: false`: an undeclared member is dropped by the serialiser, not refused.
 * - A schema fast-json-stringify cannot compile falls back to JSON.stringify of the value's JSON view
 *   with Ajv's `removeAdditional` (members undeclared where `additionalProperties: false` are removed)
 *   and the same check.
 */
import { debuglog } from 'node:util';
import type { Ajv, ErrorObject, Options, ValidateFunction } from 'ajv';
import type * as AjvDraft07 from 'ajv';
import type * as AjvDraft2020 from 'ajv/dist/2020.js';
import type FastJsonStringify from 'fast-json-stringify';
import { lazyRequire } from './lazy-require.js';
import { withFormats } from './validation.js';
import { compileProblemSerializer } from './problem-json.js';
import { compileCheckedSerializer, type CheckedSerializer } from './checked-serializer.js';

const loadAjv = lazyRequire<typeof AjvDraft07>('ajv');
const loadAjv2020 = lazyRequire<typeof AjvDraft2020>('ajv/dist/2020.js');
// Loaded with the first route that has a response schema: an App without one never loads it.
const loadFjs = lazyRequire<typeof FastJsonStringify & { default?: typeof FastJsonStringify }>('fast-json-stringify');

const debug = debuglog('keel-ajv');
const LOGGER = { log: debug, warn: debug, error: debug };

/**
 * A response check never changes the value (no coercion, no defaults). Every answer goes through the
 * check that stops at the first error (FIRST_ERROR_OPTIONS: ≈ 600 instructions less per answer of 20
 * members than `allErrors`, issue 45); only a refused one is checked again with `allErrors`
 * (CHECK_OPTIONS), so the log line lists every wrong member at once.
 */
const CHECK_OPTIONS: Options = { allErrors: true, strict: false, coerceTypes: false, useDefaults: false, validateFormats: true, logger: LOGGER };
const FIRST_ERROR_OPTIONS: Options = { ...CHECK_OPTIONS, allErrors: false };
const STRIP_OPTIONS: Options = { ...CHECK_OPTIONS, removeAdditional: true };

const instances = new Map<string, Ajv>();
function ajvOf(schema: Record<string, unknown>, options: Options, name: string): Ajv {
  const draft = typeof schema.$schema === 'string' && schema.$schema.includes('/2020-12/') ? '2020' : '07';
  const key = `${draft}:${name}`;
  let ajv = instances.get(key);
  if (!ajv) {
    ajv = withFormats(draft === '2020' ? new (loadAjv2020().Ajv2020)(options) as unknown as Ajv : new (loadAjv().Ajv)(options));
    instances.set(key, ajv);
  }
  return ajv;
}

type Schema = Record<string, unknown>;

/** A deep copy of `schema` with `edit` applied to every subschema-like object (JSON values only). */
function rewrite(schema: unknown, edit: (s: Schema) => void): unknown {
  if (Array.isArray(schema)) return schema.map((s) => rewrite(s, edit));
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'enum' || k === 'const' || k === 'default' || k === 'examples' ? v : rewrite(v, edit);
  edit(out);
  return out;
}

/** The check's schema: `additionalProperties: false` removed (the serialiser drops those members instead). */
function checkSchema(schema: Schema): Schema {
  return rewrite(schema, (s) => {
    if (s.additionalProperties === false) delete s.additionalProperties;
  }) as Schema;
}

/** The serialiser's schema: an object schema declaring no members is free-form (written whole). */
function serializerSchema(schema: Schema): Schema {
  return rewrite(schema, (s) => {
    const isObject = s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object'));
    if (isObject && s.properties === undefined && s.patternProperties === undefined && s.additionalProperties === undefined
      && s.anyOf === undefined && s.oneOf === undefined && s.allOf === undefined && s.$ref === undefined && s.if === undefined) {
      s.additionalProperties = true;
    }
  }) as Schema;
}

/** One compiled response schema. */
export interface ResponseContract {
  /** The schema's errors for `value` (null: it satisfies the schema). Never changes `value`. */
  check(value: unknown): ErrorObject[] | null;
  /** The JSON text of `value` as the schema shapes it; throws when the value cannot take that shape. */
  serialize(value: unknown): string;
  /** false: fast-json-stringify could not take the schema; JSON.stringify with Ajv stripping serves it. */
  readonly compiled: boolean;
  /**
   * Check and write in one pass (lib/http/checked-serializer.ts): the JSON text of a plainly valid
   * value, else undefined (then check() and serialize() decide). Undefined when not asked for (a route
   * that does not check), for a schema outside what that pass takes, or one fast-json-stringify could
   * not compile.
   */
  readonly checked: CheckedSerializer | undefined;
}

/** The value as JSON.stringify sees it (toJSON applied: a Date is its ISO string). */
function jsonView(value: unknown): unknown {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : JSON.parse(text);
}

/**
 * Compile a response schema: checked and serialised as the module comment says; `onePass: false` (a route
 * that only serialises) skips the one-pass check-and-write. Throws only for a
 * schema Ajv itself refuses (route schemas were already compiled once at registration).
 */
export function compileResponseContract(schema: Schema, { onePass = true }: { onePass?: boolean } = {}): ResponseContract {
  // fast-json-stringify is loaded now: problem bodies use a compiled serialiser too (lib/http/problem-json.ts).
  compileProblemSerializer((s) => (loadFjs().default ?? loadFjs())(s as never) as (v: unknown) => string);
  const loose = checkSchema(schema);
  const quickAjv = ajvOf(schema, FIRST_ERROR_OPTIONS, 'quick');
  const quick: ValidateFunction = quickAjv.compile(loose);
  // Compiled now, not with the first refused answer: the lazy version measured the ≈ 600 gain away
  // (68.4k against 67.8k in one paired run; not understood).
  const full: ValidateFunction = ajvOf(schema, CHECK_OPTIONS, 'check').compile(loose);
  const check = (value: unknown): ErrorObject[] | null => {
    if (quick(value)) return null;
    // A Date, or an object with toJSON, is judged by what it becomes on the wire.
    const view = value !== null && typeof value === 'object' ? jsonView(value) : value;
    if (view !== value && quick(view)) return null;
    return full(view) ? [] : full.errors ? [...full.errors] : [];
  };
  let serialize: (value: unknown) => string;
  let compiled = true;
  try {
    const fjs = loadFjs();
    serialize = (fjs.default ?? fjs)(serializerSchema(schema) as never, { ajv: { strict: false, logger: LOGGER } as never }) as (v: unknown) => string;
  } catch (err) {
    debug('fast-json-stringify cannot take a response schema (%s); JSON.stringify serves it', (err as Error).message);
    compiled = false;
    const strip = ajvOf(schema, STRIP_OPTIONS, 'strip').compile(schema);
    serialize = (value) => {
      const view = jsonView(value);
      strip(view);
      return JSON.stringify(view);
    };
  }
  const checked = onePass && compiled ? compileCheckedSerializer(schema, quickAjv.formats) : undefined;
  return { check, serialize, compiled, checked };
}

