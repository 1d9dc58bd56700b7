import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED_CORPUS } from '../../test/helpers/shared-corpus.js';
import { CONTRADICTIONS, contradictionFor, mismatchPrefix } from './contradictions.js';
import { loadCases } from './loader.js';
import { applyContradictions, summarise, type CaseResult } from './runner.js';
import { isRunnable, type ConformanceCase } from './types.js';

const result = (id: string, status: CaseResult['status'], mismatches: CaseResult['mismatches'] = []): CaseResult => ({ id, category: 'c', name: id, source: 's', status, mismatches, durationMs: 0 });
const entry = CONTRADICTIONS.find((c) => c.field === 'expected_response.body.errors[0]')!;

/** The value a field path (`expected_response.body.errors[0].msg`, `request.files`) names in a case. */
function at(c: ConformanceCase, field: string): unknown {
  const doc: Record<string, unknown> = { expected_response: c.expected, request: c.request };
  return field.split(/\.|(?=\[)/).reduce<unknown>((v, k) => {
    if (v === undefined || v === null) return undefined;
    const i = /^\[(\d+)\]$/.exec(k);
    return i ? (v as unknown[])[Number(i[1])] : (v as Record<string, unknown>)[k];
  }, doc);
}

describe('corpus contradictions', () => {
  describe('when a failure lies only in the contradicted field', () => {
    it('should report the case as contradicted by the corpus while the conflicting case passes or is not run', () => {
      const results = [result(entry.case, 'failed', [{ what: 'body $.errors[0].type', expected: 'validation_error', actual: 'string_too_short' }, { what: 'body $.errors[0].ctx.actual_length', expected: 2, actual: '<<missing>>' }]), result(entry.conflicts_with, 'passed')];
      applyContradictions(results);
      assert.equal(results[0]!.status, 'contradicted');
      assert.equal(results[0]!.contradiction!.conflicts_with, entry.conflicts_with);
      assert.deepEqual(summarise(results).contradicted, 1);
    });
  });

  describe('when the failure reaches beyond the field', () => {
    it('should keep the case failed', () => {
      const results = [result(entry.case, 'failed', [{ what: 'status', expected: 422, actual: 200 }, { what: 'body $.errors[0].type', expected: 'validation_error', actual: 'x' }])];
      applyContradictions(results);
      assert.equal(results[0]!.status, 'failed');
    });
  });

  describe('when the contradicted field is the status and the status differs', () => {
    it('should cover the body and headers that follow from the status', () => {
      const statusEntry = CONTRADICTIONS.find((c) => c.field === 'expected_response.status_code');
      assert.ok(statusEntry, 'contradictions.json lists at least one status contradiction');
      const body = { what: 'body $.title', expected: 'Forbidden', actual: '<<missing>>' };
      assert.equal(contradictionFor(statusEntry.case, [{ what: 'status', expected: 403, actual: 200 }, body]), statusEntry);
      assert.equal(contradictionFor(statusEntry.case, [body]), undefined, 'with the status right, a body difference is the implementation\'s');
    });
  });

  describe('when the conflicting case failed too', () => {
    it('should keep the case failed and say why it is not excused', () => {
      const results = [result(entry.case, 'failed', [{ what: 'body $.errors[0].msg', expected: 'a', actual: 'b' }]), result(entry.conflicts_with, 'failed', [{ what: 'body $.errors[0].msg', expected: 'c', actual: 'b' }])];
      applyContradictions(results);
      assert.equal(results[0]!.status, 'failed');
      assert.match(results[0]!.contradiction!.note!, /failed too/);
    });
  });

  describe('when reading field paths', () => {
    it('should map them to the differences they cover', () => {
      assert.equal(mismatchPrefix('expected_response.body.errors[0].msg'), 'body $.errors[0].msg');
      assert.equal(mismatchPrefix('expected_response.status_code'), 'status');
      assert.equal(mismatchPrefix('expected_response.headers.Content-Type'), 'header content-type');
      assert.equal(mismatchPrefix('request.files'), null);
      assert.throws(() => mismatchPrefix('body.errors'), /not a path into a case/);
      assert.equal(contradictionFor(entry.case, [{ what: 'body $.errors[0]x', expected: 1, actual: 2 }]), undefined, 'a prefix covers whole path segments only');
    });
  });

  describe('when the data file is checked against the shared corpus', { skip: existsSync(SHARED_CORPUS) ? false : `shared corpus not found at ${SHARED_CORPUS}: skipped` }, () => {
    it('should name two existing cases and a field present in the case, once per case and field', () => {
      const byId = new Map(loadCases([join(SHARED_CORPUS, 'testing_data'), join(SHARED_CORPUS, 'fixtures')]).filter(isRunnable).map((c) => [c.id, c as ConformanceCase]));
      const problems: string[] = [];
      const seen = new Set<string>();
      for (const c of CONTRADICTIONS) {
        if (!byId.has(c.case)) problems.push(`${c.case}: no such runnable case`);
        if (!byId.has(c.conflicts_with)) problems.push(`${c.case}: conflicts_with ${c.conflicts_with}: no such runnable case`);
        if (c.case === c.conflicts_with) problems.push(`${c.case}: conflicts with itself`);
        if (!c.reason.trim()) problems.push(`${c.case}: no reason`);
        mismatchPrefix(c.field);
        const own = byId.get(c.case);
        // A request field the case lacks is the contradiction itself (e.g. request.files absent).
        if (own && !c.field.startsWith('request.') && at(own, c.field) === undefined) problems.push(`${c.case}: ${c.field} is not in the case`);
        if (seen.has(`${c.case} ${c.field}`)) problems.push(`${c.case}: ${c.field} listed twice`);
        seen.add(`${c.case} ${c.field}`);
      }
      assert.deepEqual(problems, []);
    });
  });
});
