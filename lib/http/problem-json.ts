/**
 * Problem bodies' JSON text. Once an App has a route with a response schema, fast-json-stringify is
 * loaded and the problem schema below is compiled with it (lib/http/serializer.ts calls
 * compileProblemSerializer()); until then, and in a process that never loads it (a keel factory under
 * Express), JSON.stringify writes them. Both write the same bytes: the members in the order keel
 * builds them, extensions as JSON.stringify writes them. This module imports nothing, so every
 * middleware can send problems without loading a serialiser (pay for what you use).
 */

/**
 * RFC 9457 §3.1's members, and keel's validation `errors` extension (lib/http/validation-errors.ts);
 * any other extension member is allowed. No `required`: fast-json-stringify writes required members
 * first, which would reorder them.
 */
export const PROBLEM_SCHEMA = {
  type: 'object',
  properties: {
    type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string' }, instance: { type: 'string' },
    errors: {
      type: 'array',
      // In the order lib/http/validation-errors.ts builds an issue (fast-json-stringify writes declared members first).
      items: { type: 'object', properties: { type: { type: 'string' }, loc: {}, msg: { type: 'string' }, input: {}, ctx: {} }, additionalProperties: true },
    },
  },
  additionalProperties: true,
} as const;

let compiled: ((p: unknown) => string) | undefined;

/** Compile the problem schema with `build` (fast-json-stringify), once per process. */
export function compileProblemSerializer(build: (schema: object) => (p: unknown) => string): void {
  compiled ??= build(PROBLEM_SCHEMA);
}

const isText = (v: unknown): boolean => v === undefined || typeof v === 'string';

/**
 * The compiled serialiser writes what the schema declares as declared: a problem whose members are
 * of other types (a numeric `detail`, `errors` that is not a list of issues) is left to JSON.stringify,
 * never coerced.
 */
function fitsSchema(p: Record<string, unknown>): boolean {
  if (!isText(p.type) || !isText(p.title) || !isText(p.detail) || !isText(p.instance) || !Number.isInteger(p.status)) return false;
  const errors = p.errors;
  if (errors === undefined) return true;
  if (!Array.isArray(errors)) return false;
  for (const e of errors) {
    if (e === null || typeof e !== 'object' || Array.isArray(e) || !isText((e as { type?: unknown }).type) || !isText((e as { msg?: unknown }).msg)) return false;
  }
  return true;
}

/**
 * A problem object's JSON text. A problem listing validation `errors` is written by one JSON.stringify
 * call: the compiled serialiser hands each issue's `loc`, `input` and `ctx` (any JSON) to a
 * JSON.stringify call of its own, and three native calls per issue cost more than the one that
 * writes the whole problem (bench json-invalid, two issues: ~7,000 instructions less per request,
 * bench/instructions.ts; issue 48). Both write the same bytes.
 */
export function problemJson(p: Record<string, unknown>): string {
  return compiled !== undefined && p.errors === undefined && fitsSchema(p) ? compiled(p) : JSON.stringify(p);
}
