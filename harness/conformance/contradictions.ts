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

export interface Contradiction {
  /** The case id (canonical: `testing_data/<category>/<stem>` or `fixtures/<category>/<id>`). */
  case: string;
  /** The case whose expectation this one contradicts. */
  conflicts_with: string;
  /** The contradicted field, as a path into the case document. */
  field: string;
  /** What differs, in words. */
  reason: string;
}

export const CONTRADICTIONS: readonly Contradiction[] = Object.freeze((data as { contradictions: Contradiction[] }).contradictions.map((c) => Object.freeze({ ...c })));

const byCase = new Map<string, Contradiction[]>();
for (const c of CONTRADICTIONS) byCase.set(c.case, [...(byCase.get(c.case) ?? []), c]);

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

/** The contradiction that covers every mismatch of a failed case, if one is listed. */
export function contradictionFor(id: string, mismatches: readonly Mismatch[]): Contradiction | undefined {
  if (mismatches.length === 0) return undefined;
  for (const c of byCase.get(id) ?? []) {
    const prefix = mismatchPrefix(c.field);
    // A contradicted status covers the whole answer when the status is what differs: the other
    // status's body and headers (a 200's payload, a 403's problem) follow from it.
    if (prefix === 'status' && mismatches.some((m) => m.what === 'status')) return c;
    if (mismatches.every((m) => covers(prefix, m.what))) return c;
  }
  return undefined;
}
