import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../test/helpers/conformance-cli.js';
import { contradictionsByRule } from './contradiction-rules.js';
import { CONTRADICTIONS } from './contradictions.js';
import { loadCases } from './loader.js';

/*
 * A corpus of our own (not the shared one's cases), written to a temp dir: for each rule a pair of
 * cases that contradict each other, under ids no list names. A server answers each case as the test
 * says (by X-Conformance-Case): its own expectation, the conflicting case's, or nonsense.
 */
const problem = (errors: object[]) => ({ status_code: 422, body: { type: 'about:blank', title: 'Request Validation Failed', status: 422, errors } });

const CASES: Record<string, object> = {
  // validation-style: one minLength situation worded in the corpus's two styles (a query and a body field).
  'testing_data/search/01_term_too_short': {
    handler: { route: '/search', method: 'GET', parameters: { query: { term: { type: 'string', minLength: 4, required: true } } } },
    request: { method: 'GET', path: '/search', query_params: { term: 'ab' } },
    expected_response: problem([{ type: 'validation_error', loc: ['query', 'term'], msg: 'String length must be at least 4', ctx: { min_length: 4, actual_length: 2 } }]),
  },
  'testing_data/users/02_name_too_short': {
    handler: { route: '/users', method: 'POST', body_schema: { type: 'object', properties: { name: { type: 'string', minLength: 2 } } } },
    request: { method: 'POST', path: '/users', body: { name: 'x' } },
    expected_response: problem([{ type: 'string_too_short', loc: ['body', 'name'], msg: 'String should have at least 2 characters', input: 'x', ctx: { min_length: 2 } }]),
  },
  // validation-input: one integer-parsing situation in the query whose input is echoed as a number and as text.
  'testing_data/paging/03_page_fraction': {
    handler: { route: '/paging', method: 'GET', parameters: { query: { page: { type: 'integer' } } } },
    request: { method: 'GET', path: '/paging?page=4.5' },
    expected_response: problem([{ type: 'int_parsing', loc: ['query', 'page'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 4.5 }]),
  },
  'testing_data/paging/04_size_word': {
    handler: { route: '/sizes', method: 'GET', parameters: { query: { size: { type: 'integer' } } } },
    request: { method: 'GET', path: '/sizes?size=ten' },
    expected_response: problem([{ type: 'int_parsing', loc: ['query', 'size'], msg: 'Input should be a valid integer, unable to parse string as an integer', input: 'ten' }]),
  },
  // same-request: one handler and one request, a 401 and a 200 expected.
  'testing_data/keys/05_key_refused': {
    handler: { route: '/vault', method: 'GET', middleware: { api_key_auth: { keys: ['k1'], header_name: 'X-API-Key' } } },
    request: { method: 'GET', path: '/vault', headers: { 'X-API-Key': 'k2' } },
    expected_response: { status_code: 401, body: { type: 'about:blank', title: 'Invalid API key', status: 401 } },
  },
  'testing_data/keys/06_key_accepted': {
    handler: { route: '/vault', method: 'GET', middleware: { api_key_auth: { keys: ['k1'], header_name: 'X-API-Key' } } },
    request: { method: 'GET', path: '/vault', headers: { 'x-api-key': 'k2' } },
    expected_response: { status_code: 200, body: { secret: 42 } },
  },
};

const NONSENSE = { status_code: 422, body: { errors: [{ type: 'bogus_type', loc: ['query', 'x'], msg: 'bogus words', input: null }] } };
const SAME_REQUEST_NONSENSE = { status_code: 500, body: { oops: true } };

/** What the server answers per case id (default: the case's own expectation). */
const answers = new Map<string, { status_code: number; body: unknown }>();
let server: Server;
let base: string;
let dir: string;

before(async () => {
  server = createServer((req, res) => {
    const id = String(req.headers['x-conformance-case']);
    const a = answers.get(id) ?? (CASES[id] as { expected_response: { status_code: number; body: unknown } }).expected_response;
    res.writeHead(a.status_code, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(a.body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'keel-rules-'));
  for (const [id, doc] of Object.entries(CASES)) {
    mkdirSync(join(dir, id, '..'), { recursive: true });
    writeFileSync(join(dir, `${id}.json`), JSON.stringify({ name: id, ...doc }));
  }
});
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await new Promise<void>((r) => server.close(() => r()));
});

/** Run the corpus (optionally filtered) at a level; the status of each case that ran, and the output. */
async function run(level: string, filter?: string): Promise<{ status: Record<string, string>; out: string; code: number }> {
  const json = join(dir, '..', `${dir.split('/').pop()}-report.json`);
  const r = await runCli(['--base-url', base, '--level', level, '--json', json, ...(filter ? ['--filter', filter] : []), dir]);
  const report = JSON.parse(readFileSync(json, 'utf8')) as { summary: { contradictions: unknown }; cases: Array<{ id: string; status: string }> };
  rmSync(json, { force: true });
  // The run's record says what the verdicts used: every pair's two entries, found by rule.
  assert.deepEqual(report.summary.contradictions, { found_by_rule: PAIRS.length, listed: 0 });
  return { status: Object.fromEntries(report.cases.map((c) => [c.id, c.status])), out: r.out, code: r.code };
}

const item = (id: string) => (CASES[id] as { expected_response: { body: { errors: Array<Record<string, unknown>> } } }).expected_response.body.errors[0]!;

/** Each pair: [case, conflicting case, the rule, the answer in the conflicting case's style for the case]. */
const PAIRS: Array<[string, string, string, () => object]> = [
  ['testing_data/search/01_term_too_short', 'testing_data/users/02_name_too_short', 'validation-style', () => problem([{ type: 'string_too_short', loc: ['query', 'term'], msg: 'String should have at least 4 characters', input: 'ab', ctx: { min_length: 4 } }])],
  ['testing_data/users/02_name_too_short', 'testing_data/search/01_term_too_short', 'validation-style', () => problem([{ type: 'validation_error', loc: ['body', 'name'], msg: 'String length must be at least 2', ctx: { min_length: 2, actual_length: 1 } }])],
  ['testing_data/paging/03_page_fraction', 'testing_data/paging/04_size_word', 'validation-input', () => problem([{ ...item('testing_data/paging/03_page_fraction'), input: '4.5' }])],
  ['testing_data/paging/04_size_word', 'testing_data/paging/03_page_fraction', 'validation-input', () => problem([{ ...item('testing_data/paging/04_size_word'), input: 10 }])],
  ['testing_data/keys/05_key_refused', 'testing_data/keys/06_key_accepted', 'same-request', () => ({ status_code: 200, body: { secret: 42 } })],
  ['testing_data/keys/06_key_accepted', 'testing_data/keys/05_key_refused', 'same-request', () => ({ status_code: 401, body: { type: 'about:blank', title: 'Invalid API key', status: 401 } })],
];

describe('contradictions found by rule', () => {
  it('should find each pair of the corpus by its rule, with no list naming them', () => {
    const found = contradictionsByRule(loadCases([dir]));
    for (const [id, other, rule] of PAIRS) {
      assert.ok(found.some((c) => c.case === id && c.conflicts_with === other && c.rule === rule), `${id} ← ${other} (${rule}): ${JSON.stringify(found.filter((c) => c.case === id))}`);
      assert.ok(!CONTRADICTIONS.some((c) => c.case === id));
    }
    assert.equal(found.length, PAIRS.length, JSON.stringify(found.map((c) => `${c.case} ${c.field} ${c.rule}`)));
  });

  for (const [id, other, rule, otherStyle] of PAIRS) {
    describe(`when ${id} (${rule}) is answered`, () => {
      const name = id.split('/').pop()!;
      for (const filter of [undefined, name]) {
        const where = filter ? `--filter ${filter}` : 'whole corpus';
        it(`should pass its own expectation and grade the conflicting case's answer contradicted (${where})`, async () => {
          answers.clear();
          assert.equal((await run('strict', filter)).status[id], 'passed');
          answers.set(id, otherStyle() as { status_code: number; body: unknown });
          const strict = await run('strict', filter);
          assert.equal(strict.status[id], 'contradicted', strict.out);
          assert.equal(strict.code, 0, strict.out);
          assert.match(strict.out, new RegExp(`~ ${id}: contradicted by the corpus \\(.* conflicts with ${other}; rule: ${rule}\\)`));
          // --level lenient accepts either style of one kind of validation error (and grades no input);
          // a status the corpus contradicts stays contradicted.
          const lenient = await run('lenient', filter);
          assert.equal(lenient.status[id], rule === 'same-request' ? 'contradicted' : 'passed', lenient.out);
        });
        it(`should grade a nonsense answer failed with its diff (${where})`, async () => {
          answers.clear();
          answers.set(id, (rule === 'same-request' ? SAME_REQUEST_NONSENSE : NONSENSE) as { status_code: number; body: unknown });
          for (const level of ['strict', 'lenient']) {
            const r = await run(level, filter);
            assert.equal(r.status[id], 'failed', r.out);
            assert.equal(r.code, 1);
            assert.match(r.out, new RegExp(`✗ ${id}`));
            assert.match(r.out, rule === 'same-request' ? /status\n {4}expected: (401|200)\n {4}actual: {3}500/ : /expected: .*\n {4}actual: {3}"bogus_type"|actual: {3}\["query","x"\]/);
          }
        });
      }
    });
  }

  describe('when a kind of validation error has one style in the corpus', () => {
    it('should find no contradiction for it (a rule needs two styles)', () => {
      const found = contradictionsByRule(loadCases([join(dir, 'testing_data', 'search')]));
      assert.deepEqual(found, []);
    });
  });
});
