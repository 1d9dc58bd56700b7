/**
 * keel against conformance cases, through keel's fixture app (harness/conformance/fixture-app.ts):
 * keel's own cases always, the shared corpus when `../shared/conformance` exists.
 *
 * Every case that does not pass is listed in test/expectations/conformance.json with the reason:
 * keel's own choices only. Cases the corpus contradicts (another case expects the opposite in the
 * same field) are excused for every implementation by harness/conformance/contradictions.json and
 * must not be listed here. The list only shrinks: a listed case that passes fails this test until
 * it is removed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fixtureTarget } from '../harness/conformance/fixture-app.js';
import { loadCases } from '../harness/conformance/loader.js';
import { formatFailures, formatTable, summaryLine } from '../harness/conformance/report.js';
import { runCases, type CaseResult, type RunReport } from '../harness/conformance/runner.js';

const path = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const OWN_CASES = path('./fixtures/conformance');
const SHARED_CORPUS = path('../../shared/conformance');
const EXPECTATIONS_FILE = 'test/expectations/conformance.json';
const expectations: Record<string, string> = JSON.parse(readFileSync(path('./expectations/conformance.json'), 'utf8'));

async function run(...dirs: string[]): Promise<RunReport> {
  return runCases(loadCases(dirs), { target: fixtureTarget, timeoutMs: 5000 });
}

/** One test per case that ran: unlisted cases must pass, listed ones must still fail. */
function caseTests(results: readonly CaseResult[]): void {
  const byCategory = new Map<string, CaseResult[]>();
  for (const r of results) {
    if (r.status === 'skipped') continue;
    if (r.status === 'contradicted') {
      // Excused for every implementation by harness/conformance/contradictions.json, never by this list.
      if (expectations[r.id] !== undefined) describe(`when ${r.id} is contradicted by the corpus`, () => it('should not be listed', () => assert.fail(`${r.id} is contradicted by the corpus (${r.contradiction?.conflicts_with}): remove it from ${EXPECTATIONS_FILE}`)));
      continue;
    }
    byCategory.set(r.category, [...(byCategory.get(r.category) ?? []), r]);
  }
  for (const [category, list] of [...byCategory].sort(([a], [b]) => a.localeCompare(b))) {
    describe(`when running ${category} cases`, () => {
      for (const r of list) {
        const reason = expectations[r.id];
        if (reason === undefined) {
          it(`should pass ${r.id}`, () => {
            if (r.status === 'failed') {
              assert.fail(`${formatFailures([r])}\nFix keel, or list "${r.id}" with a reason in ${EXPECTATIONS_FILE}.`);
            }
          });
        } else {
          it(`should still fail ${r.id} (listed: ${reason})`, () => {
            if (r.status === 'passed') assert.fail(`${r.id} passes now: remove it from the list in ${EXPECTATIONS_FILE}.`);
          });
        }
      }
    });
  }
}

function listedIdsExist(results: readonly CaseResult[], belongs: (id: string) => boolean): void {
  it('should list only cases that exist and are run', () => {
    const ran = new Set(results.filter((r) => r.status === 'passed' || r.status === 'failed').map((r) => r.id));
    const stale = Object.keys(expectations).filter((id) => belongs(id) && !ran.has(id));
    assert.deepEqual(stale, [], `These ids in ${EXPECTATIONS_FILE} match no case that runs; remove them.`);
  });
}

const isSharedId = (id: string) => id.startsWith('testing_data/') || id.startsWith('fixtures/');

describe("keel's own conformance cases", async () => {
  const report = await run(OWN_CASES);
  it('should load cases for every supported category', () => {
    assert.ok(report.categories.length >= 20, formatTable(report));
  });
  listedIdsExist(report.results, (id) => !isSharedId(id));
  caseTests(report.results);
});

const sharedPresent = existsSync(SHARED_CORPUS);
describe('the shared conformance corpus', { skip: sharedPresent ? false : `shared corpus not found at ${SHARED_CORPUS}: skipped` }, async () => {
  // Both layouts given separately, as another implementation's user passes them (ids keep the layout).
  const report = await run(`${SHARED_CORPUS}/testing_data`, `${SHARED_CORPUS}/fixtures`);
  it('should report the pass rate by category', (t) => {
    t.diagnostic(`\n${formatTable(report)}\n${summaryLine(report)}`);
    assert.ok(report.passed > 0);
  });
  listedIdsExist(report.results, isSharedId);
  caseTests(report.results);
});
