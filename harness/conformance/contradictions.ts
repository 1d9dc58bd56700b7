/**
 * Known contradictions of the shared corpus (harness/conformance/contradictions.json): a case whose
 * expected answer in one field cannot be met together with another case's. No implementation can
 * pass both, so a failure confined to that field is reported as "contradicted by the corpus", for
 * keel and for every other implementation, instead of as the implementation's failure.
 *
 * An entry names the case, the case it conflicts with and the field (a path into the case:
 * `expected_response.body.errors[0].msg`, `expected_response.status_code`,
 * `expected_response.headers.<name>`, or `request.<...>` when the case's request itself is what
 * contradicts the other case, in which case any difference is excused). `expected_response.status_code`
 * covers the body and headers too when the status is among the differences.
 */
import data from './contradictions.json' with { type: 'json' };
import type { Mismatch } from './compare.js';
import { contradictionsByRule } from './contradiction-rules.js';
import type { Contradiction, LoadedCase } from './types.js';

export type { Contradiction } from './types.js';

export const CONTRADICTIONS: readonly Contradiction[] = Object.freeze((data as { contradictions: Contradiction[] }).contradictions.map((c) => Object.freeze({ ...c })));

/** Entries by case id. */
export type ContradictionIndex = ReadonlyMap<string, readonly Contradiction[]>;

function indexOf(entries: Iterable<Contradiction>): Map<string, Contradiction[]> {
  const byCase = new Map<string, Contradiction[]>();
  for (const c of entries) byCase.set(c.case, [...(byCase.get(c.case) ?? []), c]);
  return byCase;
}

const listed = indexOf(CONTRADICTIONS);
const indexes = new WeakMap<object, ContradictionIndex>();

/**
 * The contradictions of a corpus: those its own cases show by rule (contradiction-rules.ts) and the
 * listed ones (contradictions.json). Computed once per corpus object.
 */
export function contradictionIndex(corpus: ReadonlyMap<string, LoadedCase> | readonly LoadedCase[]): ContradictionIndex {
  let index = indexes.get(corpus);
  if (!index) {
    index = indexOf([...contradictionsByRule(Array.isArray(corpus) ? corpus : (corpus as ReadonlyMap<string, LoadedCase>).values()), ...CONTRADICTIONS]);
    indexes.set(corpus, index);
  }
  return index;
}

/** The mismatch `what` prefix a field path covers; `null` = every mismatch (a request field). */
export function mismatchPrefix(field: string): string | null {
  if (field.startsWith('request.') || field === 'request') return null;
  if (field === 'expected_response.status_code') return 'status';
  const header = /^expected_response\.headers\.(.+)$/.exec(field);
  if (header) return `header ${header[1]!.toLowerCase()}`;
  const cookie = /^expected_response\.cookies\.(.+)$/.exec(field);
  if (cookie) return `cookie ${cookie[1]}`;
  if (field === 'expected_response.body') return 'body';
  const body = /^expected_response\.body((?:\.|\[).+)$/.exec(field);
  if (body) return `body $${body[1]}`;
  throw new Error(`contradictions.json: field ${JSON.stringify(field)} is not a path into a case (expected_response.… or request.…)`);
}

function covers(prefix: string | null, what: string): boolean {
  if (prefix === null) return true;
  if (what === prefix) return true;
  if (!what.startsWith(prefix)) return false;
  const next = what[prefix.length];
  return prefix === 'body' ? next === ' ' : next === '.' || next === '[';
}

/** The contradiction that covers every mismatch of a failed case, if one is listed (or in `index`). */
export function contradictionFor(id: string, mismatches: readonly Mismatch[], index: ContradictionIndex = listed): Contradiction | undefined {
  return contradictionsFor(id, mismatches, index)[0];
}

/**
 * Every contradiction of the case that covers all its mismatches, in index order. A contradicted
 * status covers the whole answer when the status is what differs: the other status's body and
 * headers (a 200's payload, a 403's problem) follow from it.
 */
export function contradictionsFor(id: string, mismatches: readonly Mismatch[], index: ContradictionIndex = listed): Contradiction[] {
  if (mismatches.length === 0) return [];
  return (index.get(id) ?? []).filter((c) => {
    const prefix = mismatchPrefix(c.field);
    if (prefix === 'status' && mismatches.some((m) => m.what === 'status')) return true;
    return mismatches.every((m) => covers(prefix, m.what));
  });
}

/**
 * For each mismatch, the contradictions of the case that cover it (a case with several contradicted
 * error items: each difference lies in one of them); undefined when some mismatch has none.
 */
export function coveringEach(id: string, mismatches: readonly Mismatch[], index: ContradictionIndex = listed): Contradiction[][] | undefined {
  const entries = index.get(id) ?? [];
  const out = mismatches.map((m) => entries.filter((c) => covers(mismatchPrefix(c.field), m.what)));
  return mismatches.length && out.every((list) => list.length) ? out : undefined;
}
