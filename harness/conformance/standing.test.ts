/**
 * Each shipped case says why it exists and on whose word (suite/standing.ts), everywhere a case is
 * shown: --json, --list, the CLI's failure blocks, the HTML report; --require selects by standing;
 * repeated --filter is a union.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../test/helpers/conformance-cli.js';
import { loadSuite, REQUIREMENTS, standingOf } from './suite/index.js';
import { conformanceMeaning, MEANING_END, MEANING_START } from './suite/meaning.js';

describe('the shipped suite\'s standings', () => {
  it('should give every case a description and a requirement with its basis', () => {
    for (const c of loadSuite()) {
      assert.ok(c.description && c.description.length > 10, `${c.id} has a description`);
      assert.ok(c.requirement && REQUIREMENTS.includes(c.requirement), `${c.id} has a requirement`);
      assert.ok(c.basis && c.basis.length > 15, `${c.id} says why`);
      if (c.requirement === 'required') assert.match(c.basis!, /RFC \d+|specification|Fetch|JSON Schema|GraphQL/, `${c.id}: a required case cites its source`);
      if (c.requirement === 'reference') assert.match(c.basis!, /reference/, `${c.id}: a reference case names the reference`);
    }
  });

  it('should mark the choices docs/conformance.md lists as keel\'s (by rule, from what the case sends and expects)', () => {
    const by = new Map(loadSuite().map((c) => [c.id, c.requirement]));
    // `*` with credentials, exact method names, problem bodies on refused preflights, validated request ids.
    for (const id of ['keel/cors/27_wildcard_with_credentials', 'keel/cors/13_preflight_method_refused_put', 'keel/cors/07_preflight_origin_refused_7', 'keel/request_id/07_replaced_7', 'keel/auth/27_api_key_in_query_not_read']) {
      assert.equal(by.get(id), 'keel', id);
    }
    assert.equal(by.get('keel/routing/21_head_on_post_route'), 'required', 'Allow on a 405 is RFC 9110 §15.5.6');
  });

  it('should be what docs/conformance.md\'s "What conformance means" says (generated from the same data)', () => {
    const doc = readFileSync(new URL('../../docs/conformance.md', import.meta.url), 'utf8');
    const start = doc.indexOf(MEANING_START);
    const end = doc.indexOf(MEANING_END);
    assert.ok(start >= 0 && end > start, 'the page has the generated section');
    // On a mismatch, paste conformanceMeaning() (npx tsx -e) between the markers.
    assert.equal(doc.slice(start, end + MEANING_END.length), conformanceMeaning());
  });

  it('should refuse a category it has no rule for (a new table must say its standing)', () => {
    assert.throws(() => standingOf({ category: 'new_thing', name: '01_x', description: 'x', handler: { route: '/', method: 'GET' }, request: { method: 'GET', path: '/' }, expected_response: { status_code: 200 } }), /no standing rule for category "new_thing"/);
  });
});

describe('keel-conformance and the standings', () => {
  let dir: string;
  let server: Server;
  let base: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keel-standing-'));
    // A server that knows nothing: every case it gets fails with a 418.
    server = createServer((_req, res) => res.writeHead(418, { 'content-type': 'text/plain' }).end('teapot'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('should run the union of repeated --filter options (both categories in one run)', async () => {
    const json = join(dir, 'union.json');
    const r = await runCli(['--base-url', base, '--filter', 'keel/routing/', '--filter', 'keel/cors/', '--quiet', '--exit-zero', '--json', json]);
    assert.equal(r.code, 0, r.err);
    const report = JSON.parse(readFileSync(json, 'utf8'));
    assert.deepEqual([...new Set(report.cases.map((c: { category: string }) => c.category))].sort(), ['cors', 'routing']);
    assert.equal(report.cases.length, loadSuite().filter((c) => c.id.startsWith('keel/routing/') || c.id.startsWith('keel/cors/')).length);
    assert.deepEqual(report.summary.filter, ['keel/routing/', 'keel/cors/']);
  });

  it('should exit 2 naming a repeated filter that matches nothing, even when another one matches', async () => {
    const r = await runCli(['--list', '--filter', 'keel/routing/', '--filter', 'keel/nothing/']);
    assert.equal(r.code, 2);
    assert.match(r.err, /--filter "keel\/nothing\/" matches no case/);
  });

  it('should give every case its description and requirement in --json, and count each standing apart', async () => {
    const json = join(dir, 'all.json');
    const r = await runCli(['--base-url', base, '--filter', 'keel/', '--quiet', '--no-diffs', '--exit-zero', '--json', json]);
    assert.equal(r.code, 0, r.err);
    const report = JSON.parse(readFileSync(json, 'utf8'));
    assert.equal(report.cases.length, loadSuite().length);
    for (const c of report.cases) {
      assert.ok(typeof c.description === 'string' && c.description, `${c.id} description`);
      assert.ok(REQUIREMENTS.includes(c.requirement) && typeof c.basis === 'string', `${c.id} requirement`);
    }
    const counts = report.summary.by_requirement;
    const sum = REQUIREMENTS.reduce((n, st) => n + counts[st].passed + counts[st].failed + counts[st].skipped + counts[st].contradicted, 0);
    assert.equal(sum, report.cases.length);
    assert.match(r.out, /^by standing: required \d+\/\d+ passed, reference \d+\/\d+ passed, keel \d+\/\d+ passed/m);
  });

  it('should show why a case exists and its standing under each failure, and in --list', async () => {
    const r = await runCli(['--base-url', base, '--filter', 'keel/cors/27_']);
    assert.equal(r.code, 1);
    assert.match(r.out, /✗ keel\/cors\/27_wildcard_with_credentials .*\n {2}source: .*\n {2}why: `\*` with credentials answers `\*` without Allow-Credentials.*\n {2}standing: keel — .*browser refuses the pair/);
    const list = await runCli(['--list', '--filter', 'keel/routing/21_']);
    assert.match(list.out, /^ {2}keel\/routing\/21_head_on_post_route .*\n {6}HEAD on a POST-only path.*\n {6}\[required\] RFC 9110 §15\.5\.6/m);
  });

  it('should run only what every implementation must pass with --require required', async () => {
    const json = join(dir, 'required.json');
    const r = await runCli(['--base-url', base, '--require', 'required', '--quiet', '--no-diffs', '--exit-zero', '--json', json]);
    assert.equal(r.code, 0, r.err);
    const cases = JSON.parse(readFileSync(json, 'utf8')).cases as Array<{ requirement: string }>;
    assert.equal(cases.length, loadSuite().filter((c) => c.requirement === 'required').length);
    assert.ok(cases.every((c) => c.requirement === 'required'));
    const wider = await runCli(['--list', '--require', 'reference']);
    assert.doesNotMatch(wider.out, /\[keel\]/);
    assert.match(wider.out, /\[reference\]/);
    const bad = await runCli(['--list', '--require', 'must']);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--require must be one of required, reference, keel/);
  });

  it('should show the description and the standing of each failure in the HTML report, with a table per standing', async () => {
    const html = join(dir, 'report.html');
    await runCli(['--base-url', base, '--filter', 'keel/routing/2', '--quiet', '--exit-zero', '--report', html]);
    const page = readFileSync(html, 'utf8');
    assert.match(page, /<p class="why">HEAD on a POST-only path is a 405 naming the allowed method\.<\/p><p class="standing"><span class="tag st-required">required<\/span> RFC 9110 §15\.5\.6/);
    assert.match(page, /<table class="sum st">.*<span class="tag st-required">required<\/span><\/td><td class="n">0<\/td>/s);
  });
});
