import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED_CORPUS } from '../../test/helpers/shared-corpus.js';
import { CONTRADICTIONS, contradictionFor, mismatchPrefix } from './contradictions.js';
import { contradictionsByRule, foundByRule } from './contradiction-rules.js';
import { loadCases } from './loader.js';
import { inStyleOf, wording } from './contradiction-verdict.js';
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

/** A failed result for `id` whose answer was `errors[0] = item` (the failure lies in errors[0]). */
function failedWith(id: string, own: Record<string, unknown>, item: Record<string, unknown>): CaseResult {
  return {
    ...result(id, 'failed', [{ what: 'body $.errors[0].type', expected: own.type, actual: item.type }]),
    expected: { status_code: 422, body: { errors: [own] } },
    actual: { status: 422, headers: {}, body: { errors: [item] } },
  };
}

/** A case of its own (not from the corpus) expecting `errors[0] = item`, under the id `id`. */
const caseExpecting = (id: string, item: Record<string, unknown>): ConformanceCase => ({
  id, category: 'c', name: id, source: 's', handler: { route: '/x', method: 'GET' }, request: { method: 'GET', path: '/x' },
  expected: { status_code: 422, body: { errors: [item] } }, extra: {},
});

describe('corpus contradictions', () => {
  // This case's style, and the conflicting case's (another parameter, another limit: the values differ too).
  const own = { type: 'validation_error', loc: ['query', 'term'], msg: 'String length must be at least 3', ctx: { min_length: 3, actual_length: 2 } };
  const others = { type: 'string_too_short', loc: ['query', 'name'], msg: 'String should have at least 5 characters', input: 'abcd', ctx: { min_length: 5 } };
  const corpus = new Map([[entry.conflicts_with, caseExpecting(entry.conflicts_with, others)]]);

  describe('when the answer in the contradicted field is the conflicting case\'s expectation', () => {
    it('should report the case as contradicted by the corpus', () => {
      const answer = { type: 'string_too_short', loc: ['query', 'term'], msg: 'String should have at least 3 characters', input: 'ab', ctx: { min_length: 3 } };
      const results = [failedWith(entry.case, own, answer)];
      applyContradictions(results, corpus);
      assert.equal(results[0]!.status, 'contradicted');
      assert.equal(results[0]!.contradiction!.conflicts_with, entry.conflicts_with);
      assert.deepEqual(summarise(results).contradicted, 1);
    });
  });

  describe('when the answer in the contradicted field is neither expectation', () => {
    it('should keep the case failed, saying why it is not excused', () => {
      for (const answer of [
        { type: 'bogus_type', loc: ['query', 'term'], msg: 'bogus words', input: 'ab', ctx: { min_length: 3 } },
        { type: 'string_too_short', loc: ['query', 'term'], msg: 'bogus words', input: 'ab', ctx: { min_length: 3 } },
        { type: 'string_too_short', loc: ['query', 'term'], msg: 'String should have at least 3 characters', input: 'ab', ctx: { min_length: 3 }, extra: 1 },
      ]) {
        const results = [failedWith(entry.case, own, answer)];
        applyContradictions(results, corpus);
        assert.equal(results[0]!.status, 'failed', JSON.stringify(answer));
        assert.match(results[0]!.contradiction!.note!, /matches neither/);
      }
    });

    it('should keep it failed when the conflicting case is not in the corpus loaded', () => {
      const results = [failedWith(entry.case, own, { ...others, loc: ['query', 'term'] })];
      applyContradictions(results, new Map());
      assert.equal(results[0]!.status, 'failed');
      assert.match(results[0]!.contradiction!.note!, /not in the corpus loaded/);
    });
  });

  describe('when the failure reaches beyond the field', () => {
    it('should keep the case failed', () => {
      const results = [{ ...failedWith(entry.case, own, others), mismatches: [{ what: 'status', expected: 422, actual: 200 }, { what: 'body $.errors[0].type', expected: 'validation_error', actual: 'x' }] }];
      applyContradictions(results, corpus);
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

  describe('when comparing an answer with the other case\'s expectation', () => {
    it('should take the case-specific values out of the wording only', () => {
      assert.equal(wording('Input should be greater than 10'), wording('Input should be greater than 0'));
      assert.equal(wording("String should match pattern '^a$'"), wording("String should match pattern '^[0-9]+$'"));
      assert.equal(wording('List should have at least 2 items after validation'), wording('List should have at least 1 item after validation'));
      assert.notEqual(wording('Value must be greater than 0'), wording('Input should be greater than 0'));
    });
    it('should require the other case\'s kind where the two expectations differ in kind', () => {
      assert.equal(inStyleOf('42.5', 42.5, 'foobar'), true);
      assert.equal(inStyleOf(true, 42.5, 'foobar'), false);
      assert.equal(inStyleOf(42.5, 42.5, 'foobar'), true, 'its own expectation is never contradicted');
      assert.equal(inStyleOf({ type: 't', input: 'ab' }, { type: 't', input: '' }, { type: 't', input: 'longer' }), true, 'an input echoes this case\'s request');
      assert.equal(inStyleOf(undefined, 'gzip', '<<absent>>'), true);
      assert.equal(inStyleOf('br', 'gzip', '<<absent>>'), false);
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

    it('should keep only entries no rule finds (the list shrinks as rules grow)', () => {
      const all = loadCases([join(SHARED_CORPUS, 'testing_data'), join(SHARED_CORPUS, 'fixtures')]);
      const found = contradictionsByRule(all);
      const corpus = new Map(all.map((c) => [c.id, c]));
      const foundAgain = CONTRADICTIONS.filter((c) => foundByRule(c, found, corpus)).map((c) => `${c.case} ${c.field}: found by rule ${foundByRule(c, found, corpus)!.rule}, remove it from contradictions.json`);
      assert.deepEqual(foundAgain, []);
      // The rules find what the list used to say: the corpus's two validation styles among them.
      assert.ok(found.some((c) => c.case === 'testing_data/query_params/50_integer_gt_constraint_failure' && c.rule === 'validation-style'));
      assert.ok(found.some((c) => c.case === 'fixtures/json_bodies/47_maxproperties_validation_failure' && c.rule === 'same-request'));
      assert.ok(found.some((c) => c.case === 'testing_data/query_params/06_required_int_float_value' && c.rule === 'validation-input'));
    });
  });
});
