/**
 * Route JSON Schemas → OpenAPI 3.1 Schema Objects (JSON Schema 2020-12, OpenAPI 3.1 §4.8.24).
 *
 * Route schemas are written for Ajv and may be draft-07: local `definitions` / `$defs` are hoisted
 * into `components.schemas` (their `$ref`s rewritten), OpenAPI 3.0's `nullable: true` becomes a
 * `"null"` type, and `$schema` / `$id` are dropped so the whole document keeps one dialect and one base URI.
 */

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Collects hoisted definitions under unique component names. */
export class SchemaComponents {
  readonly schemas: Record<string, unknown> = {};
  readonly #reserved: Set<string>;

  constructor(reserved: Iterable<string> = []) {
    this.#reserved = new Set(reserved);
  }

  /** Add a schema under `name` (or `name_2`, ... when another schema holds it); returns the name used. */
  add(name: string, schema: unknown): string {
    const base = name.replace(/[^A-Za-z0-9._-]/g, '_') || 'Schema';
    let candidate = base;
    for (let i = 2; this.#reserved.has(candidate) || (candidate in this.schemas && JSON.stringify(this.schemas[candidate]) !== JSON.stringify(schema)); i++) {
      candidate = `${base}_${i}`;
    }
    this.schemas[candidate] = schema;
    return candidate;
  }
}

/** Convert one route schema (a new object; the input is not modified). */
export function toOpenApiSchema(schema: unknown, components: SchemaComponents): unknown {
  if (!isObject(schema)) return schema;
  const defs: Record<string, unknown> = { ...(isObject(schema.definitions) ? schema.definitions : {}), ...(isObject(schema.$defs) ? schema.$defs : {}) };
  const renamed = new Map<string, string>();
  // Names are reserved first so definitions that refer to each other get the final names.
  const pending = Object.keys(defs).map((name) => {
    const target = components.add(name, {});
    renamed.set(name, target);
    return [name, target] as const;
  });
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (!isObject(node)) return node;
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === '$schema' || k === '$id' || k === 'definitions' || k === '$defs' || k === 'nullable') continue;
      if (k === '$ref' && typeof v === 'string') {
        const m = /^#\/(?:definitions|\$defs)\/(.+)$/.exec(v);
        const target = m ? renamed.get(decodeURIComponent(m[1]!).replace(/~1/g, '/').replace(/~0/g, '~')) : undefined;
        out.$ref = target ? `#/components/schemas/${target}` : v;
        continue;
      }
      out[k] = isObject(v) || Array.isArray(v) ? rewriteChild(k, v) : v;
    }
    if (node.nullable === true) return addNull(out);
    return out;
  };
  // Keywords whose value is a map of names to schemas, not a schema itself.
  const rewriteChild = (key: string, v: unknown): unknown => {
    if ((key === 'properties' || key === 'patternProperties' || key === 'dependentSchemas') && isObject(v)) {
      return Object.fromEntries(Object.entries(v).map(([name, s]) => [name, rewrite(s)]));
    }
    if (key === 'enum' || key === 'const' || key === 'examples' || key === 'default' || key === 'required') return v;
    return rewrite(v);
  };
  for (const [name, target] of pending) components.schemas[target] = rewrite(defs[name]);
  return rewrite(schema);
}

/** OpenAPI 3.0's `nullable: true` in 3.1 terms: `null` joins the type list (or the enum). */
function addNull(schema: Json): Json {
  if (typeof schema.type === 'string') schema.type = [schema.type, 'null'];
  else if (Array.isArray(schema.type) && !schema.type.includes('null')) schema.type = [...schema.type, 'null'];
  else if (schema.type === undefined && !schema.$ref) return schema;
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum = [...schema.enum, null];
  if (schema.$ref) return { anyOf: [{ $ref: schema.$ref }, { type: 'null' }] };
  return schema;
}

/** RFC 9457 problem details as a reusable schema, with keel's validation `errors` extension. */
export const PROBLEM_DETAILS_SCHEMA = Object.freeze({
  type: 'object',
  description: 'RFC 9457 problem details',
  required: ['type', 'title', 'status'],
  properties: {
    type: { type: 'string', format: 'uri-reference', description: 'Identifies the problem type' },
    title: { type: 'string', description: 'Short summary of the problem type' },
    status: { type: 'integer', minimum: 100, maximum: 599, description: 'HTTP status code' },
    detail: { type: 'string', description: 'Explanation specific to this occurrence' },
    instance: { type: 'string', format: 'uri-reference' },
    errors: {
      type: 'array',
      description: 'Validation failures (422 responses)',
      items: {
        type: 'object',
        required: ['type', 'loc', 'msg'],
        properties: {
          type: { type: 'string', description: 'Error kind, e.g. missing, int_parsing, string_too_short' },
          loc: { type: 'array', items: { type: ['string', 'integer'] }, description: 'Source (body, query, path, headers, cookie) then the path inside it' },
          msg: { type: 'string' },
          input: {},
          ctx: { type: 'object' },
        },
      },
    },
  },
  additionalProperties: true,
});
