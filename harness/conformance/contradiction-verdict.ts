/**
 * Whether a failure in a contradicted field is the corpus's fault or the implementation's.
 *
 * A case is "contradicted" only when the server's answer, in the field the two cases disagree on,
 * is the *other* case's expectation (in that case's style): no implementation can give both, and
 * this one gave the other. Any other answer (nonsense, a third style) is the implementation's
 * failure, whatever else is in the run: the other case's expectation is read from the whole corpus
 * the runner loaded, never from the results of the run.
 */
import { isDeepStrictEqual } from 'node:util';
import { OPTIONAL_ERROR_ITEM_KEYS, type ConformanceLevel } from './compare.js';
import type { CaseExpectedResponse, Contradiction } from './types.js';

/** What a server answered, as far as a verdict needs it. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[]>;
  body: unknown;
}

/** Path segments of a field (`expected_response.body.errors[0].msg` → `['body', 'errors', 0, 'msg']`). */
function segments(field: string): Array<string | number> {
  const rest = field.replace(/^expected_response\.?/, '');
  const out: Array<string | number> = [];
  for (const part of rest.split(/\.|(?=\[)/)) {
    if (part === '') continue;
    const i = /^\[(\d+)\]$/.exec(part);
    out.push(i ? Number(i[1]) : part);
  }
  return out;
}

function walk(v: unknown, path: ReadonlyArray<string | number>): unknown {
  for (const k of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

function header(headers: Record<string, unknown> | undefined, name: string): unknown {
  if (!headers) return undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : headers[key];
}

/** The value a response field names, in a case's expectation. */
export function expectedAt(expected: CaseExpectedResponse, field: string): unknown {
  const [head, ...rest] = segments(field);
  if (head === 'status_code') return expected.status_code;
  if (head === 'headers') return header(expected.headers, String(rest[0]));
  return walk(expected, [head!, ...rest]);
}

/** The value a response field names, in what the server answered. */
export function answeredAt(answer: Answer, field: string): unknown {
  const [head, ...rest] = segments(field);
  if (head === 'status_code') return answer.status;
  if (head === 'headers') {
    const v = header(answer.headers, String(rest[0]));
    return Array.isArray(v) ? v.join(', ') : v;
  }
  if (head === 'body') return walk(answer.body, rest);
  return undefined;
}

/**
 * A message's wording with the case-specific values taken out (numbers, quoted and back-quoted
 * text, the plural after a number), so "Input should be greater than 5" is worded as "Input should be
 * greater than 0" and "at least 2 items" as "at least 1 item".
 */
export function wording(s: string): string {
  // The noun after a number takes its plural from the number ("1 item", "2 items").
  return s.replace(/'[^']*'|"[^"]*"|`[^`]*`/g, '<q>').replace(/-?\d+(?:\.\d+)?/g, '<n>').replace(/(<n> \w+?)s\b/g, '$1');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * Whether `actual` is the other case's expectation `other`, this case's own expectation `own`
 * supplying the case-specific values (its `loc`, its input) wherever it has them:
 * - a value equal to the own expectation is fine (the cases do not disagree there);
 * - where only the other case has a value, the answer must have a value of the same JSON kind, and
 *   so must an `input` (it echoes what this case sent);
 * - the other case's markers (`<<absent>>`, `<<present>>`, `<<uuid>>`) mean what they mean in compare.ts;
 * - where both have one: objects may have no member neither has and must have the other's members
 *   (bar an error item's optional `input`/`ctx`; each member is then checked),
 *   arrays the length of one of them, strings the other's wording, numbers and booleans the other's value;
 *   when the two expectations differ in kind (`42.5` against `"foobar"`), the answer must have the other's kind.
 */
export function inStyleOf(actual: unknown, own: unknown, other: unknown, key?: string): boolean {
  if (own !== undefined && isDeepStrictEqual(actual, own)) return true;
  // The corpus's markers (compare.ts): a header or member that must be absent, present, a UUID.
  if (other === '<<absent>>') return actual === undefined;
  if (other === '<<present>>') return actual !== undefined;
  if (other === '<<uuid>>') return typeof actual === 'string' && UUID.test(actual);
  // An `input` this case does not expect is not graded for it (compare.ts): any is fine.
  if (key === 'input' && own === undefined && actual !== undefined) return true;
  if (other === undefined) return actual === undefined;
  if (actual === undefined) return false;
  if (kind(actual) !== kind(other)) return false;
  // `input` echoes what this case sent: only its JSON kind is a matter of style.
  if (own === undefined || kind(own) !== kind(other) || key === 'input') return true;
  if (typeof other === 'string') return wording(actual as string) === wording(other);
  if (Array.isArray(other)) {
    const a = actual as unknown[];
    const o = own as unknown[];
    if (a.length !== other.length && a.length !== o.length) return false;
    return a.every((v, i) => inStyleOf(v, o[i], other[i]));
  }
  if (other !== null && typeof other === 'object') {
    const a = actual as Record<string, unknown>;
    const o = own as Record<string, unknown>;
    const x = other as Record<string, unknown>;
    for (const k of new Set([...Object.keys(a), ...Object.keys(x)])) {
      // An error item's optional member left out: compare.ts does not require it of this case either.
      if (!(k in a) && OPTIONAL_ERROR_ITEM_KEYS.includes(k)) continue;
      // A member neither expectation has is no one's style (an optional one is allowed, as compare.ts allows it).
      if (!(k in o) && !(k in x)) {
        if (OPTIONAL_ERROR_ITEM_KEYS.includes(k)) continue;
        return false;
      }
      if (!inStyleOf(a[k], o[k], x[k], k)) return false;
    }
    return true;
  }
  return isDeepStrictEqual(actual, other);
}

/**
 * The verdict on a failure confined to a listed contradiction: `null` when the answer is the other
 * case's expectation (contradicted), else why it stays a failure.
 */
export function notExcusedBecause(entry: Contradiction, answer: Answer | undefined, own: CaseExpectedResponse, other: CaseExpectedResponse | undefined, level: ConformanceLevel = 'strict'): string | null {
  // The case's own request is what contradicts the other case: no answer can be checked against it.
  if (entry.field === 'request' || entry.field.startsWith('request.')) return null;
  if (!other) return `not excused: ${entry.conflicts_with} is not in the corpus loaded, so its expectation cannot be checked`;
  if (!answer) return 'not excused: no answer';
  const field = entry.field;
  // At --level lenient an error item is graded on loc and type only; so is the other case's.
  const graded = (v: unknown) => (level === 'lenient' && v !== null && typeof v === 'object' && !Array.isArray(v) && 'type' in v ? { loc: (v as Record<string, unknown>).loc, type: (v as Record<string, unknown>).type } : v);
  if (inStyleOf(graded(answeredAt(answer, field)), graded(expectedAt(own, field)), graded(expectedAt(other, entry.other_field ?? field)))) return null;
  return `not excused: the answer in ${field} matches neither this case's expectation nor ${entry.conflicts_with}'s`;
}
