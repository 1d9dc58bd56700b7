/**
 * A failed case's verdict under the corpus's contradictions (contradictions.ts): `contradicted`
 * when every difference lies in a contradicted field and the answer there is the conflicting
 * case's expectation; at `--level lenient`, `passed` when that is the other validation style of
 * the same kind of error.
 */
import type { ConformanceLevel, Mismatch } from './compare.js';
import { notExcusedBecause, type Answer } from './contradiction-verdict.js';
import { contradictionIndex, contradictionsFor, coveringEach } from './contradictions.js';
import { isWebSocketCase, type CaseExpectedResponse, type Contradiction, type LoadedCase } from './types.js';

/**
 * The parts of a case result (runner.ts's CaseResult) a verdict reads and sets; declared here so
 * this module does not import the runner that imports it.
 */
export interface CaseResult {
  id: string;
  status: 'passed' | 'failed' | 'contradicted' | 'skipped';
  mismatches: Mismatch[];
  error?: string;
  expected?: CaseExpectedResponse;
  actual?: Answer;
  contradiction?: Contradiction & { note?: string };
}

/**
 * Turn failures that lie only in fields the corpus contradicts into `contradicted`: every mismatch
 * is inside a contradicted field of the case (contradictions.ts: found by rule in `corpus`, or
 * listed), and the answer there is the conflicting case's expectation (see
 * contradiction-verdict.ts). The conflicting case's expectation is read from `corpus` (every case
 * the runner loaded, before any filter), so a verdict never depends on what else is in the run.
 * At `--level lenient` an answer in the other validation style of the same situation passes.
 */
export function applyContradictions(results: CaseResult[], corpus: ReadonlyMap<string, LoadedCase>, level: ConformanceLevel = 'strict'): void {
  for (const r of results) classify(r, corpus, level);
}

/** `null` when `entry` excuses the case's answer, else why not. */
function verdict(r: CaseResult, entry: Contradiction, corpus: ReadonlyMap<string, LoadedCase>, level: ConformanceLevel): string | null {
  const other = corpus.get(entry.conflicts_with);
  return notExcusedBecause(entry, r.actual, r.expected!, other && 'handler' in other && !isWebSocketCase(other) ? other.expected : undefined, level);
}

/** One case's status under the contradictions (see applyContradictions). */
export function classify(r: CaseResult, corpus: ReadonlyMap<string, LoadedCase>, level: ConformanceLevel): void {
  if (r.status !== 'failed' || r.error || !r.expected) return;
  const index = contradictionIndex(corpus);
  // One contradicted field holding every difference, or (several contradicted error items) each
  // difference in one of them; each entry used must excuse the answer.
  let used: Contradiction[] | undefined;
  let refused: (Contradiction & { note: string }) | undefined;
  for (const entry of contradictionsFor(r.id, r.mismatches, index)) {
    const why = verdict(r, entry, corpus, level);
    if (why === null) {
      used = [entry];
      break;
    }
    refused ??= { ...entry, note: why };
  }
  if (!used) {
    const each = coveringEach(r.id, r.mismatches, index);
    if (each) {
      const picked = each.map((entries) => entries.find((e) => verdict(r, e, corpus, level) === null));
      if (picked.every((e) => e !== undefined)) used = [...new Set(picked as Contradiction[])];
      else if (!refused) {
        const entry = each[picked.findIndex((e) => e === undefined)]![0]!;
        refused = { ...entry, note: verdict(r, entry, corpus, level)! };
      }
    }
  }
  if (!used) {
    if (refused) r.contradiction = refused;
    return;
  }
  r.contradiction = used[0]!;
  // --level lenient grades the kind of error, not its style: the other style of the same situation passes.
  if (level === 'lenient' && used.every((e) => e.rule === 'validation-style')) {
    r.status = 'passed';
    r.mismatches = [];
    r.contradiction = { ...used[0]!, note: `passed at --level lenient: the corpus's other style for the same kind of error (${used[0]!.conflicts_with})` };
    return;
  }
  r.status = 'contradicted';
}
