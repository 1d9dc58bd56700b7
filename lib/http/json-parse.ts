/**
 * JSON request bodies and prototype poisoning.
 *
 * `JSON.parse('{"__proto__": {"admin": true}}')` gives an object with an *own* `__proto__` key: harmless
 * by itself, but the first `Object.assign`, spread-into-class, lodash `merge` or hand-written deep merge
 * downstream copies it through the `__proto__` setter and poisons a prototype. keel refuses such bodies
 * before any code sees them, as Fastify does, with secure-json-parse (`protoAction` / `constructorAction`).
 * secure-json-parse only walks the parsed value when the text contains one of the key names (escaped
 * forms such as `"\u005f_proto__"` included), so a clean body pays two regular-expression scans.
 */
import sjson from 'secure-json-parse';
import { HttpError } from './errors.js';

/** What to do with a poisoning key: `error` (400 problem), `remove` (drop the key), `ignore` (keep it). */
export const POISONING_ACTIONS = ['error', 'remove', 'ignore'] as const;
export type PoisoningAction = (typeof POISONING_ACTIONS)[number];

/** A JSON body with a `__proto__` key anywhere is refused with a 400 problem: 'error'. */
export const DEFAULT_ON_PROTO_POISONING: PoisoningAction = 'error';
/** A JSON body with a `constructor: {prototype: …}` key anywhere is refused with a 400 problem: 'error'. */
export const DEFAULT_ON_CONSTRUCTOR_POISONING: PoisoningAction = 'error';

/** secure-json-parse's options, one frozen object per combination. */
export interface JsonPoisoning {
  readonly protoAction: PoisoningAction;
  readonly constructorAction: PoisoningAction;
}

const combinations = new Map<string, JsonPoisoning>();

/** The (shared, frozen) options for a pair of actions. */
export function jsonPoisoning(protoAction: PoisoningAction = DEFAULT_ON_PROTO_POISONING, constructorAction: PoisoningAction = DEFAULT_ON_CONSTRUCTOR_POISONING): JsonPoisoning {
  const key = `${protoAction}/${constructorAction}`;
  let p = combinations.get(key);
  if (!p) combinations.set(key, (p = Object.freeze({ protoAction, constructorAction })));
  return p;
}

/** The options from a record's `on_proto_poisoning` / `on_constructor_poisoning` keys. */
export function jsonPoisoningOf(cfg: { on_proto_poisoning: PoisoningAction; on_constructor_poisoning: PoisoningAction }): JsonPoisoning {
  return jsonPoisoning(cfg.on_proto_poisoning, cfg.on_constructor_poisoning);
}

/** Both checks on, the keys refused: the defaults. */
export const DEFAULT_JSON_POISONING = jsonPoisoning();

/** secure-json-parse's message for either key (it has no error class or code). */
const FORBIDDEN_MESSAGE = 'Object contains forbidden prototype property';

/** The 400 problem for a body holding a poisoning key. */
export function poisonedJson(): HttpError {
  return new HttpError(400, 'JSON body contains a forbidden "__proto__" or "constructor.prototype" key', { code: 'KEEL_FORBIDDEN_JSON_KEY' });
}

/**
 * JSON.parse(text) with the poisoning check. Throws JSON.parse's SyntaxError for malformed text and
 * the 400 HttpError of {@link poisonedJson} for a refused key; with `remove`, the keys are deleted.
 */
export function parseJsonText(text: string, poisoning: JsonPoisoning = DEFAULT_JSON_POISONING): unknown {
  // secure-json-parse strips a leading BOM, which JSON.parse refuses (RFC 8259 §8.1 lets a parser do
  // either): the text goes to JSON.parse itself so a body gets one answer whatever the setting.
  if ((poisoning.protoAction === 'ignore' && poisoning.constructorAction === 'ignore') || text.charCodeAt(0) === 0xfeff) return JSON.parse(text);
  try {
    return sjson.parse(text, undefined, poisoning);
  } catch (err) {
    if ((err as Error).message === FORBIDDEN_MESSAGE) throw poisonedJson();
    throw err;
  }
}
