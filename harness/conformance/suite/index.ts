/**
 * keel's own conformance suite, shipped with the runner: `keel-conformance` with no corpus path runs
 * these cases (against `--exec`, `--base-url` or keel's fixture app). They are written by keel from
 * the specification and keel's documented answers (docs/conformance.md), built from compact tables
 * when the suite loads; each is a concrete request with its expected answer, in the corpus's case
 * format (`suiteDocuments()` gives them as corpus documents, `--list` and `--json` show them).
 */
import { toCase } from '../loader.js';
import type { LoadedCase } from '../types.js';
import { authCases } from './auth.js';
import type { SuiteCase } from './build.js';
import { corsCases } from './cors.js';
import { limitCases } from './limits.js';
import { miscCases } from './misc.js';
import { paramCases } from './params.js';
import { routingCases } from './routing.js';
import { sessionDocuments, type SessionDocument } from './sessions.js';
import { standingOf } from './standing.js';
import { validationCases } from './validation.js';

/** Id prefix of the shipped cases: `keel/<category>/<NN_name>`. */
export const SUITE_PREFIX = 'keel/';

export { REQUIREMENTS, standingOf, type Requirement, type Standing } from './standing.js';

/** The suite's cases as corpus documents in run order. */
export function suiteDocuments(): Array<SuiteCase | SessionDocument> {
  return [...routingCases(), ...paramCases(), ...validationCases(), ...limitCases(), ...corsCases(), ...authCases(), ...miscCases(), ...sessionDocuments()];
}

/** The shipped suite, loaded as the runner loads any corpus (ids `keel/<category>/<NN_name>`). */
export function loadSuite(): LoadedCase[] {
  return suiteDocuments().map((d) => {
    const c = toCase(d, { id: `${SUITE_PREFIX}${d.category}/${d.name}`, category: d.category, source: `keel-conformance suite: ${d.category}/${d.name}` });
    // Every shipped case says why it exists and on whose word (suite/standing.ts).
    return { ...c, description: d.description, ...standingOf(d) };
  });
}
