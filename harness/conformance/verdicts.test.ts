import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../test/helpers/conformance-cli.js';
import { contradictionsByRule } from './contradiction-rules.js';
import { CONTRADICTIONS } from './contradictions.js';
import { loadCases } from './loader.js';

/*
 * Two cases of our own under the ids of two shared cases (an exclusiveMinimum error item worded in
 * the corpus's two styles, which a rule pairs), and a server whose answer for the first is chosen per test: the other
 * case's style (contradicted), or nonsense (failed, whether or not the other case is in the run).
 */
const GT = 'testing_data/query_params/50_integer_gt_constraint_failure';
const OTHER = 'testing_data/validation_errors/05_numeric_constraint_gt_violation';

const gtCase = {
  name: 'limit must be greater than 0',
  handler: { route: '/limit', method: 'GET', parameters: { query: { limit: { type: 'integer', exclusiveMinimum: 0, required: true } } } },
  request: { method: 'GET', path: '/limit', query_params: { limit: 0 } },
  expected_response: { status_code: 422, body: { errors: [{ type: 'validation_error', loc: ['query', 'limit'], msg: 'Value must be greater than 0', ctx: { exclusive_minimum: 0, value: 0 } }] } },
};
const otherCase = {
  name: 'price must be greater than 10',
  handler: { route: '/price', method: 'GET', parameters: { query: { price: { type: 'number', exclusiveMinimum: 10, required: true } } } },
  request: { method: 'GET', path: '/price', query_params: { price: 10 } },
  expected_response: { status_code: 422, body: { errors: [{ type: 'greater_than', loc: ['query', 'price'], msg: 'Input should be greater than 10', input: '10', ctx: { gt: 10 } }] } },
};

const ANSWERS: Record<string, object> = {
  'other-style': { type: 'greater_than', loc: ['query', 'limit'], msg: 'Input should be greater than 0', input: '0', ctx: { gt: 0 } },
  nonsense: { type: 'bogus_type', loc: ['query', 'limit'], msg: 'bogus words', input: '0', ctx: { gt: 0 } },
};

let server: Server;
let base: string;
let dir: string;
let answer = 'other-style';

before(async () => {
  server = createServer((req, res) => {
    const item = req.url!.startsWith('/limit') ? ANSWERS[answer] : otherCase.expected_response.body.errors[0];
    res.writeHead(422, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ errors: [item] }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'keel-verdicts-'));
  for (const [id, doc] of [[GT, gtCase], [OTHER, otherCase]] as const) {
    mkdirSync(join(dir, id, '..'), { recursive: true });
    writeFileSync(join(dir, `${id}.json`), JSON.stringify(doc));
  }
});
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await new Promise<void>((r) => server.close(() => r()));
});

describe('contradicted verdicts', () => {
  it('should pair the two cases by rule, not by a list (the premise of these tests)', () => {
    assert.ok(contradictionsByRule(loadCases([dir])).some((c) => c.case === GT && c.conflicts_with === OTHER && c.field === 'expected_response.body.errors[0]' && c.rule === 'validation-style'));
    assert.ok(!CONTRADICTIONS.some((c) => c.case === GT), 'contradictions.json keeps only what no rule finds');
  });

  describe('when the server answers in the conflicting case\'s style', () => {
    for (const filter of [undefined, '50_integer_gt']) {
      it(`should grade the case contradicted (${filter ? `--filter ${filter}` : 'whole corpus'})`, async () => {
        answer = 'other-style';
        const r = await runCli(['--base-url', base, ...(filter ? ['--filter', filter] : []), dir]);
        assert.equal(r.code, 0, r.out);
        assert.match(r.out, new RegExp(`~ ${GT}: contradicted by the corpus`));
      });
    }
  });

  describe('when only the case\'s category folder is given', () => {
    it('should still read the conflicting case from the corpus the folder lies in', async () => {
      answer = 'other-style';
      const r = await runCli(['--base-url', base, join(dir, 'testing_data/query_params')]);
      assert.equal(r.code, 0, r.out);
      assert.equal(r.last, '0 passed, 0 failed, 1 contradicted by the corpus');
      answer = 'nonsense';
      const bad = await runCli(['--base-url', base, join(dir, 'testing_data/query_params')]);
      assert.equal(bad.code, 1, bad.out);
    });
  });

  describe('when the server\'s validation error item is nonsense', () => {
    for (const level of ['strict', 'lenient']) {
      for (const filter of [undefined, '50_integer_gt']) {
        it(`should grade it failed with its diff, whatever the filter (${level}, ${filter ? `--filter ${filter}` : 'whole corpus'})`, async () => {
          answer = 'nonsense';
          const r = await runCli(['--base-url', base, '--level', level, ...(filter ? ['--filter', filter] : []), dir]);
          assert.equal(r.code, 1, r.out);
          assert.match(r.out, new RegExp(`✗ ${GT}`));
          assert.match(r.out, /body \$\.errors\[0\]\.type\n {4}expected: "validation_error"\n {4}actual: {3}"bogus_type"/);
          assert.match(r.out, /not excused: the answer in expected_response\.body\.errors\[0\] matches neither/);
          assert.doesNotMatch(r.out, /contradicted by the corpus/);
        });
      }
    }
  });
});
