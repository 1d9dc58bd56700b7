/**
 * Which wording the corpus expects for a parameter's constraint errors, read from how the case declares
 * the parameter (a rule over the declaration, the same for every keyword and for cases never seen):
 *
 * - declared as a bare JSON Schema with an explicit `required: true` and no language `annotation`
 *   (`{type: "string", minLength: 3, required: true}`): the generic items — `validation_error`, the
 *   limit and the value in `ctx`, no `input` ("String length must be at least 3", "Value must not
 *   exceed 100", "Invalid email format");
 * - otherwise (an `annotation: "str"` — a signature in a typed language, even with `required: true` —
 *   or no `required` key): the reference's Pydantic-like items (`string_too_short`, "String should have
 *   at least 3 characters", `input`, `ctx: {min_length}`).
 *
 * Every constraint error item on a parameter of the shared corpus follows this. The reference's own
 * source (spikard-core `validation/error_mapper.rs`) only has the second wording; keel has both
 * (a parameter's `error_style`, lib/http/validation-generic.ts), and its fixture app chooses by this rule.
 */
type Entry = Record<string, unknown>;

/** The sections whose values are parameters (files and form bodies have items of their own). */
const PARAMETER_SOURCES = new Set(['path', 'query', 'headers', 'cookies']);

/** The `error_style` the corpus's declaration of a parameter asks for. */
export function corpusErrorStyle(entry: unknown): 'generic' | 'reference' {
  const e = entry as Entry | null;
  return e !== null && typeof e === 'object' && e.required === true && !('annotation' in e) ? 'generic' : 'reference';
}

/** A case's `handler.parameters`, each entry given the `error_style` its declaration asks for. */
export function withCorpusErrorStyle(parameters: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(parameters).map(([source, map]) => {
    // A whole-object schema ({type: 'object', properties}) and non-object maps are left as written.
    if (!PARAMETER_SOURCES.has(source) || !map || typeof map !== 'object' || (map as Entry).type === 'object') return [source, map];
    return [source, Object.fromEntries(Object.entries(map as Entry).map(([name, entry]) => [name, corpusErrorStyle(entry) === 'generic' ? { ...(entry as Entry), error_style: 'generic' } : entry]))];
  }));
}
