import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../test/helpers/conformance-cli.js';

/** A tiny server implementing two routes of the cases below. */
let server: Server;
let base: string;
let dir: string;

const ok = {
  name: 'hello',
  handler: { route: '/hello', method: 'GET' },
  request: { method: 'GET', path: '/hello' },
  expected_response: { status_code: 200, body: { hello: 'world' }, headers: { 'X-Request-ID': '<<uuid>>' } },
};
const wrong = {
  name: 'missing route answers 404 with problem details',
  handler: { route: '/missing', method: 'GET' },
  request: { method: 'GET', path: '/missing' },
  expected_response: { status_code: 404, body: { type: 'https://example.com/errors/not-found', title: 'Resource Not Found', status: 404 } },
};

before(async () => {
  server = createServer((req, res) => {
    if (req.method === 'TRACE') {
      res.writeHead(501, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ method: req.method }));
    } else if (req.url === '/hello') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'X-Request-ID': '0b7e3f4c-9d2a-4e1b-8c3d-5f6a7b8c9d0e' });
      res.end(JSON.stringify({ hello: 'world' }));
    } else {
      res.writeHead(404, { 'Content-Type': 'text/html' });
      res.end('<h1>Not Found</h1>');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'keel-cli-'));
  mkdirSync(join(dir, 'pass/basics'), { recursive: true });
  mkdirSync(join(dir, 'mixed/basics'), { recursive: true });
  mkdirSync(join(dir, 'mixed/graphql'), { recursive: true });
  writeFileSync(join(dir, 'pass/basics/01_hello.json'), JSON.stringify(ok));
  writeFileSync(join(dir, 'mixed/basics/01_hello.json'), JSON.stringify(ok));
  writeFileSync(join(dir, 'mixed/basics/02_missing.json'), JSON.stringify(wrong));
  writeFileSync(join(dir, 'mixed/graphql/01_query.json'), JSON.stringify({ operation_type: 'query', endpoint: '/graphql' }));
});
after(async () => {
  rmSync(dir, { recursive: true, force: true });
  await new Promise<void>((r) => server.close(() => r()));
});


describe('keel-conformance CLI', () => {
  describe('when every case passes', () => {
    it('should exit 0 and end with the summary line', async () => {
      const r = await runCli(['--base-url', base, join(dir, 'pass')]);
      assert.equal(r.code, 0, r.out);
      assert.equal(r.last, '1 passed, 0 failed');
    });

    it('should run a case the corpus skips for Node implementations (TRACE) against another implementation, sending TRACE', async () => {
      const traceDir = join(dir, 'trace/status_codes');
      mkdirSync(traceDir, { recursive: true });
      writeFileSync(join(traceDir, '01_trace.json'), JSON.stringify({
        name: 'TRACE is not implemented',
        skip: { languages: ['node'], reason: 'TRACE not supported by fetch in Node.js' },
        handler: { route: '/trace', method: 'TRACE' },
        request: { method: 'TRACE', path: '/trace' },
        expected_response: { status_code: 501, body: { method: 'TRACE' } },
      }));
      const r = await runCli(['--base-url', base, join(dir, 'trace')]);
      assert.equal(r.code, 0, r.out);
      assert.equal(r.last, '1 passed, 0 failed');
      const manifest = await runCli(['--manifest', '-', join(dir, 'trace')]);
      assert.equal(JSON.parse(manifest.out).cases.length, 1, 'the manifest for another implementation lists it');
    });

    it('should exit 2 on a bad --port-range, or one given without --exec', async () => {
      const bad = await runCli(['--exec', 'serve {case_file} {port}', '--port-range', '5000-4000', join(dir, 'pass')]);
      assert.equal(bad.code, 2);
      assert.match(bad.err, /--port-range: the first port must not be above the last, got "5000-4000"/);
      const alone = await runCli(['--base-url', base, '--port-range', '4000-5000', join(dir, 'pass')]);
      assert.equal(alone.code, 2);
      assert.match(alone.err, /give it with --exec/);
    });

    it('should exit 2 naming the filter when it matches no case (a typo in a CI filter must not pass)', async () => {
      const r = await runCli(['--base-url', base, '--filter', 'nothing_matches', join(dir, 'mixed')]);
      assert.equal(r.code, 2, r.out);
      assert.match(r.err, /--filter "nothing_matches" matches no case/);
      assert.doesNotMatch(r.out, /passed/);
    });
  });

  describe('when a case fails and another is out of scope', () => {
    it('should exit 1, print the diff, the table and "N passed, M failed, K skipped"', async () => {
      const r = await runCli(['--base-url', base, join(dir, 'mixed')]);
      assert.equal(r.code, 1);
      assert.equal(r.last, '1 passed, 1 failed, 1 skipped');
      assert.match(r.out, /✗ basics\/02_missing/);
      assert.match(r.out, /body \(response body is not JSON\)\n {4}expected: \{"type":"https:\/\/example.com\/errors\/not-found"/);
      assert.match(r.out, /actual: {3}"<h1>Not Found<\/h1>"/);
      assert.match(r.out, /^basics\s+1\s+1\s+0\s+0\s+50\.0%$/m);
      assert.match(r.out, /^graphql\s+0\s+0\s+0\s+1\s+-$/m);
    });

    it('should write JSON and JUnit reports', async () => {
      const json = join(dir, 'r.json');
      const junit = join(dir, 'r.xml');
      await runCli(['--quiet', '--base-url', base, '--json', json, '--junit', junit, join(dir, 'mixed')]);
      const report = JSON.parse(readFileSync(json, 'utf8'));
      const { wall_time_ms: wall, runner_version: version, ...summary } = report.summary;
      assert.deepEqual(summary, { passed: 1, failed: 1, contradicted: 0, skipped: 1, corpus: [join(dir, 'mixed')], level: 'strict', target: 'base-url', cases_loaded: 3, cases_selected: 3, contradictions: { found_by_rule: 0, listed: 0 } });
      assert.ok(Number.isInteger(wall) && wall >= 0, `wall_time_ms ${wall}`);
      assert.equal(version, JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version);
      assert.deepEqual(report.cases.map((c: { id: string; status: string }) => [c.id, c.status]), [
        ['basics/01_hello', 'passed'],
        ['basics/02_missing', 'failed'],
        ['graphql/01_query', 'skipped'],
      ]);
      const failed = report.cases.find((c: { id: string }) => c.id === 'basics/02_missing');
      assert.deepEqual(failed.request, { method: 'GET', path: '/missing', headers: [['X-Conformance-Case', 'basics/02_missing']] });
      assert.deepEqual(failed.expected, { status: 404, body: wrong.expected_response.body });
      assert.equal(failed.actual.status, 404);
      assert.equal(failed.actual.body, '<h1>Not Found</h1>');
      assert.equal(failed.actual.headers['content-type'], 'text/html');
      assert.equal(report.cases[0].request, undefined, 'passed cases stay short');
      const xml = readFileSync(junit, 'utf8');
      assert.match(xml, /<testsuites name="keel-conformance" tests="3" failures="1" skipped="1"/);
      assert.match(xml, /<testcase classname="basics" name="basics\/02_missing" time="[\d.]+">\n\s+<failure message="body">/);
      assert.match(xml, /<skipped message="GraphQL document/);
    });

    it('should leave out diffs and exit 0 for a report', async () => {
      const r = await runCli(['--quiet', '--no-diffs', '--exit-zero', '--base-url', base, join(dir, 'mixed')]);
      assert.equal(r.code, 0);
      assert.doesNotMatch(r.out, /✗/);
      assert.match(r.out, /^TOTAL\s+1\s+1\s+0\s+1\s+50\.0%$/m);
      assert.equal(r.last, '1 passed, 1 failed, 1 skipped');
    });

    it('should run only the filtered cases', async () => {
      const r = await runCli(['--base-url', base, '--filter', '01_hello', join(dir, 'mixed')]);
      assert.equal(r.code, 0);
      assert.equal(r.last, '1 passed, 0 failed');
    });
  });

  describe('when a case fails', () => {
    it('should show the request sent, and put a status mismatch first with the body differences collapsed', async () => {
      const r = await runCli(['--base-url', base, join(dir, 'mixed')]);
      assert.match(r.out, /request sent:\n {4}GET \/missing\n {4}X-Conformance-Case: basics\/02_missing/);
      const statusCase = join(dir, 'status/basics');
      mkdirSync(statusCase, { recursive: true });
      writeFileSync(join(statusCase, '01_teapot.json'), JSON.stringify({ ...wrong, handler: { route: '/hello', method: 'GET' }, request: { method: 'GET', path: '/hello' }, expected_response: { status_code: 418, body: { a: 1, b: 2, c: 3 } } }));
      const s = await runCli(['--base-url', base, join(dir, 'status')]);
      assert.match(s.out, /✗ basics\/01_teapot[^\n]*\n {2}source: [^\n]*\n {2}status\n {4}expected: 418\n {4}actual: {3}200\n {2}\(4 more differences in headers\/body not shown: the status differs\)\n {2}body received: \{"hello":"world"\}/);
    });

    it('should grade only status, problem type slug, loc and error type at --level lenient', async () => {
      const r = await runCli(['--base-url', base, '--level', 'lenient', join(dir, 'pass')]);
      assert.equal(r.code, 0);
      const bad = await runCli(['--base-url', base, '--level', 'loose', join(dir, 'pass')]);
      assert.equal(bad.code, 2);
      assert.match(bad.err, /--level must be one of strict, lenient/);
    });
  });

  describe('when listing the cases or writing the manifest', () => {
    it('should print the cases and the route table, and run nothing', async () => {
      const r = await runCli(['--list', join(dir, 'mixed')]);
      assert.equal(r.code, 0);
      assert.match(r.out, /^2 cases to run \(1 skipped\):$/m);
      assert.match(r.out, /^ {2}basics\/02_missing {2}GET \/missing -> 404$/m);
      assert.match(r.out, /^ {2}graphql\/01_query {2}skipped: GraphQL document/m);
      assert.match(r.out, /^Routes to serve \(2;/m);
      assert.match(r.out, /^ {2}GET {5}\/hello {2}\(\/hello\) {2}1 case$/m);
    });

    it('should show the method actually sent, and the route when the request is not plainly for it', async () => {
      const r = await runCli(['--list', '--filter', 'keel/cors/01_']);
      assert.equal(r.code, 0);
      assert.match(r.out, /^ {2}keel\/cors\/01_preflight_app_get {2}OPTIONS \/api\/data -> 204 {2}\(route POST \/api\/data\)$/m);
      const plain = await runCli(['--list', '--filter', 'keel/routing/24_typed_int_placeholder']);
      assert.match(plain.out, /^ {2}keel\/routing\/24_typed_int_placeholder {2}GET \/things\/42 -> 200 {2}\(route GET \/things\/\{id:int\}\)$/m);
    });

    it('should keep the category in ids and in the case header when a category folder is given directly', async () => {
      const folder = new URL('../../test/fixtures/conformance/cors', import.meta.url).pathname;
      const r = await runCli(['--list', folder]);
      assert.match(r.out, /^ {2}cors\/01_preflight_allowed {2}OPTIONS \/api\/data -> 204 {2}\(route POST \/api\/data\)$/m);
      const m = JSON.parse((await runCli(['--manifest', '-', folder])).out);
      assert.deepEqual(m.cases[0].request.headers.find(([k]: [string]) => k === 'X-Conformance-Case'), ['X-Conformance-Case', 'cors/01_preflight_allowed']);
      const parent = JSON.parse((await runCli(['--manifest', '-', new URL('../../test/fixtures/conformance', import.meta.url).pathname])).out);
      assert.ok(parent.cases.some((c: { id: string }) => c.id === 'cors/01_preflight_allowed'), 'the same id as when the parent folder is given');
    });

    it('should write the manifest to standard output with -', async () => {
      const r = await runCli(['--manifest', '-', join(dir, 'mixed')]);
      assert.equal(r.code, 0);
      const m = JSON.parse(r.out);
      assert.deepEqual(m.cases.map((c: { id: string }) => c.id), ['basics/01_hello', 'basics/02_missing']);
      assert.equal(m.cases[0].request.path, '/hello');
      assert.deepEqual(m.skipped.map((c: { id: string }) => c.id), ['graphql/01_query']);
    });
  });

  describe('when the server is down', () => {
    it('should fail every case with the connection error', async () => {
      const r = await runCli(['--base-url', 'http://127.0.0.1:1', join(dir, 'pass')]);
      assert.equal(r.code, 1);
      assert.match(r.out, /error: Error: connect ECONNREFUSED/);
      assert.equal(r.last, '0 passed, 1 failed');
    });
  });

  describe('when the arguments are wrong', () => {
    for (const [why, argv, message] of [
      ['a filter matching no case of the shipped suite', ['--filter', 'no-such-case', '--list'], /matches no case of keel-conformance suite/],
      ['an unknown option', ['--nope', 'x'], /Unknown option '--nope'/],
      ['a base URL that is not http', ['--base-url', 'ftp://x', 'x'], /only http:\/\//],
      ['a base URL that is not a URL', ['--base-url', 'nope', 'x'], /--base-url: Invalid URL/],
      ['a timeout that is not a number', ['--timeout', 'soon', 'x'], /--timeout must be a positive integer/],
      ['--exec with --base-url', ['--exec', 'x {case_file} {port}', '--base-url', 'http://127.0.0.1:1', 'x'], /--exec starts the server itself/],
      ['--exec without {port}', ['--exec', 'x {case_file}', 'x'], /--exec needs both \{case_file\} and \{port\}/],
      ['an unknown --group', ['--group', 'all', 'x'], /--group must be one of route, handler, case/],
      ['a case path that does not exist', ['--base-url', 'http://127.0.0.1:1', '/nonexistent/cases'], /ENOENT/],
    ] as const) {
      it(`should exit 2 for ${why}`, async () => {
        const r = await runCli([...argv]);
        assert.equal(r.code, 2);
        assert.match(r.err, message);
      });
    }

    it('should print the usage for --help', async () => {
      const r = await runCli(['--help']);
      assert.equal(r.code, 0);
      assert.match(r.out, /Usage: keel-conformance/);
    });
  });

  describe('when cases use formats Ajv does not know by itself', () => {
    it('should check format decimal and print no library warning into the report', async () => {
      const formats = join(dir, 'formats/path_params');
      mkdirSync(formats, { recursive: true });
      const decimal = (name: string, value: string, status: number) => ({
        name,
        handler: { route: '/prices/{amount}', method: 'GET', parameters: { path: { amount: { type: 'string', format: 'decimal' } }, query: { code: { type: 'string', format: 'made-up-format', optional: true } } } },
        request: { method: 'GET', path: `/prices/${value}` },
        expected_response: { status_code: status },
      });
      writeFileSync(join(formats, '01_ok.json'), JSON.stringify(decimal('decimal ok', '19.99', 200)));
      writeFileSync(join(formats, '02_bad.json'), JSON.stringify(decimal('decimal bad', 'abc', 422)));
      const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, ['--import', 'tsx', 'harness/cli.ts', join(dir, 'formats')], (err, stdout, stderr) => {
          resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr });
        });
      });
      assert.equal(r.stdout.trim().split('\n').at(-1), '2 passed, 0 failed', r.stdout);
      assert.doesNotMatch(r.stdout + r.stderr, /unknown format/);
    });
  });

  describe('when run as a program', () => {
    it('should set the exit code (npm run conformance)', async () => {
      // Asynchronous on purpose: the server under test lives in this process.
      const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, ['--import', 'tsx', 'harness/cli.ts', '--base-url', base, join(dir, 'mixed')], (err, stdout, stderr) => {
          resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr });
        });
      });
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stdout.trim().split('\n').at(-1), '1 passed, 1 failed, 1 skipped');
    });
  });
});
