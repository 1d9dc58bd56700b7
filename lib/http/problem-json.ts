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

/** How many problem heads (type, title, status) are kept: keel's own types are ~30; a user's beyond that are built per answer. */
export const PROBLEM_HEADS_KEPT = 64;

interface Head {
  readonly title: string;
  readonly status: number;
  /** `{"type":…,"title":…,"status":N`, as JSON.stringify writes it. */
  readonly text: string;
  /** The head is ASCII, so its length in UTF-16 units is its length in bytes. */
  readonly ascii: boolean;
}

const heads = new Map<string, Head>();

/** The cached head for a problem type, title and status (one per type: a different title or status replaces it). */
function headFor(type: string, title: string, status: number): Head {
  const cached = heads.get(type);
  if (cached !== undefined && cached.title === title && cached.status === status) return cached;
  const text = `{"type":${JSON.stringify(type)},"title":${JSON.stringify(title)},"status":${status}`;
  // eslint-disable-next-line no-control-regex -- ASCII is U+0000..U+007F
  const head: Head = { title, status, text, ascii: /^[\x00-\x7f]*$/.test(text) };
  if (cached !== undefined || heads.size < PROBLEM_HEADS_KEPT) heads.set(type, head);
  return head;
}

/** The last text standardProblemJson() wrote as ASCII (its byte length is its length), for problemJsonByteLength(). */
let lastAscii: string | undefined;

const ASCII = 0;
const NON_ASCII = 1;
const ESCAPED = 2;

/**
 * What JSON.stringify does with `s`: ESCAPED when it escapes something (a control character, a quote, a
 * backslash; a surrogate, which it may), else ASCII or NON_ASCII: written as it is between quotes.
 */
function scan(s: string): typeof ASCII | typeof NON_ASCII | typeof ESCAPED {
  let kind: typeof ASCII | typeof NON_ASCII = ASCII;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return ESCAPED;
    if (c > 0x7f) kind = NON_ASCII;
  }
  return kind;
}

/**
 * `s` as JSON.stringify writes it: between quotes as it is, unless scan() finds something to escape. Saves the
 * runtime call for the usual string (response members written by lib/http/checked-serializer.ts).
 */
export function jsonString(s: string): string {
  return scan(s) === ESCAPED ? JSON.stringify(s) : '"' + s + '"';
}

/** The standard members, in the order problem() adds them; the first three are always there. */
const STANDARD_ORDER = ['type', 'title', 'status', 'detail', 'instance'];

/**
 * True when `p`'s enumerable keys are type, title, status, then detail and instance if present, in that
 * order. Own keys come first in a for…in: an inherited detail or instance (which JSON.stringify leaves
 * out) can only follow the three, and is checked for.
 */
function standardOnly(p: Record<string, unknown>): boolean {
  let next = 0;
  for (const k in p) {
    const i = STANDARD_ORDER.indexOf(k, next);
    // An unknown or out-of-order key, or a required one left out: another shape.
    if (i < 0 || (i > next && next < 3) || (i >= 3 && !Object.hasOwn(p, k))) return false;
    next = i + 1;
  }
  return next >= 3;
}

/**
 * The JSON text of a problem of the standard members only (most refusals: a 404, a 405, a 413, a handler's
 * error), `{type, title, status, detail?, instance?}`: from a head made once per problem type, title and
 * status, then its detail and instance, the bytes JSON.stringify writes. The compiled serialiser escaped
 * the three fixed members again on every answer (bench problem: ~3,000 instructions per request,
 * bench/instructions.ts; issue 48); a hand-written writer because the head is worked out once, which no
 * serialiser of a whole object does. Undefined when a member is not of the standard type.
 */
export function standardProblemJson(type: unknown, title: unknown, status: unknown, detail: unknown, instance: unknown): string | undefined {
  if (typeof type !== 'string' || typeof title !== 'string' || !Number.isInteger(status) || (detail !== undefined && typeof detail !== 'string') || (instance !== undefined && typeof instance !== 'string')) return undefined;
  const head = headFor(type, title, status as number);
  let text = head.text;
  let ascii = head.ascii;
  if (detail !== undefined) {
    const kind = scan(detail);
    text += kind === ESCAPED ? `,"detail":${JSON.stringify(detail)}` : `,"detail":"${detail}"`;
    ascii &&= kind === ASCII;
  }
  if (instance !== undefined) {
    const kind = scan(instance);
    text += kind === ESCAPED ? `,"instance":${JSON.stringify(instance)}` : `,"instance":"${instance}"`;
    ascii &&= kind === ASCII;
  }
  text += '}';
  lastAscii = ascii ? text : undefined;
  return text;
}

/**
 * A problem object's JSON text. A problem listing validation `errors` is written by one JSON.stringify
 * call: the compiled serialiser hands each issue's `loc`, `input` and `ctx` (any JSON) to a
 * JSON.stringify call of its own, and three native calls per issue cost more than the one that
 * writes the whole problem (bench json-invalid, two issues: ~7,000 instructions less per request,
 * bench/instructions.ts; issue 48). All three ways write the same bytes.
 */
export function problemJson(p: Record<string, unknown>): string {
  if (p.errors === undefined && standardOnly(p)) {
    const text = standardProblemJson(p.type, p.title, p.status, p.detail, p.instance);
    if (text !== undefined) return text;
  }
  return compiled !== undefined && p.errors === undefined && fitsSchema(p) ? compiled(p) : JSON.stringify(p);
}

/**
 * `Buffer.byteLength(text)`, known without a walk over the text when problemJson() just wrote it from ASCII
 * parts (a text built by concatenation would be flattened to be measured: ~1,500 instructions per answer).
 */
export function problemJsonByteLength(text: string): number {
  return text === lastAscii ? text.length : Buffer.byteLength(text);
}
