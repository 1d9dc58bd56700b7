import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { runCli } from '../../test/helpers/conformance-cli.js';
import { execTarget, FREE_PORT_RANGE, freePort, parsePortRange, planGroups } from './exec.js';
import { runCases } from './runner.js';
import type { ConformanceCase } from './types.js';

const mk = (id: string, route: string, extra: Record<string, unknown> = {}, status = 200): ConformanceCase => ({
  id,
  category: 'c',
  name: id,
  source: `${id}.json`,
  handler: { route, method: 'GET', ...extra },
  request: { method: 'GET', path: route.replace(/\{[^}]+\}/g, '1') },
  expected: { status_code: status, body: { id } },
  extra: {},
});

describe('freePort', () => {
  it('should give a bindable port below the ephemeral ranges, which listen(0) and client sockets never take', async () => {
    const ports = await Promise.all(Array.from({ length: 5 }, () => freePort()));
    for (const port of ports) {
      assert.ok(port >= FREE_PORT_RANGE[0] && port <= FREE_PORT_RANGE[1] && FREE_PORT_RANGE[1] < 32768, `port ${port}`);
      const srv = createServer();
      await new Promise<void>((resolve, reject) => srv.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
      await new Promise((resolve) => srv.close(resolve));
    }
  });
});

describe('planGroups', () => {
  const a = mk('a', '/items/{id}');
  const b = mk('b', '/items/{item_id}', { parameters: { path: { item_id: { type: 'integer' } } } });
  const c = mk('c', '/items/{id}');
  const d = mk('d', '/other');
  const limited = mk('e', '/other', { middleware: { rate_limit: { per_second: 1, burst: 1 } } });

  describe('when grouping by route (the default)', () => {
    it('should share a server unless two handler definitions need one route ({id} and {item_id} collide)', () => {
      assert.deepEqual(planGroups([a, b, c, d]).map((g) => g.map((x) => x.id)), [['a', 'c', 'd'], ['b']]);
    });
    it('should give a rate-limited case a server of its own', () => {
      assert.deepEqual(planGroups([d, limited, a]).map((g) => g.map((x) => x.id)), [['d', 'a'], ['e']]);
    });
  });

  describe('when grouping by handler or by case', () => {
    it('should start one server per handler definition, or per case', () => {
      assert.deepEqual(planGroups([a, b, c, d], 'handler').map((g) => g.map((x) => x.id)), [['a', 'c'], ['b'], ['d']]);
      assert.equal(planGroups([a, b, c, d], 'case').length, 4);
    });
  });
});

describe('execTarget', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'keel-exec-'));
    // A server in plain node: answers each case with its handler's answer, chosen by the case-id header.
    writeFileSync(
      join(dir, 'server.mjs'),
      `import { createServer } from 'node:http';
import { readFileSync, appendFileSync } from 'node:fs';
const [file, port, log] = process.argv.slice(2);
const m = JSON.parse(readFileSync(file, 'utf8'));
appendFileSync(log, m.cases.map((c) => c.id).join(',') + '\\n');
createServer((req, res) => {
  const c = m.cases.find((x) => x.id === req.headers[m.case_header.toLowerCase()]);
  res.writeHead(c ? c.handler_response.status : 404, { 'content-type': 'application/json' });
  res.end(JSON.stringify(c ? c.handler_response.body : {}));
}).listen(Number(port), '127.0.0.1');
`,
    );
    // Answers N requests, then kills itself (SIGKILL) while the next one waits: a crash mid-group.
    writeFileSync(
      join(dir, 'dies.mjs'),
      `import { createServer } from 'node:http';
const [, port, n] = process.argv.slice(2);
let served = 0;
createServer((req, res) => {
  if (served++ >= Number(n)) {
    process.stderr.write('fatal: out of cheese\\n');
    process.kill(process.pid, 'SIGKILL');
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: req.headers['x-conformance-case'] }));
}).listen(Number(port), '127.0.0.1');
`,
    );
    // Answers N requests, then stops answering: `handler` leaves the next request unanswered (a
    // handler that never answers), `stop` stops the whole process (SIGSTOP) while it waits.
    writeFileSync(
      join(dir, 'hangs.mjs'),
      `import { createServer } from 'node:http';
const [, port, n, mode] = process.argv.slice(2);
let served = 0;
createServer((req, res) => {
  if (served++ >= Number(n)) {
    process.stderr.write('worker pool exhausted\\n');
    if (mode === 'stop') process.kill(process.pid, 'SIGSTOP');
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: req.headers['x-conformance-case'] }));
}).listen(Number(port), '127.0.0.1');
`,
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const mode of ['handler', 'stop'] as const) {
    describe(`when the server stops answering mid-group (${mode === 'stop' ? 'SIGSTOP' : 'a handler that never answers'})`, () => {
      it('should report it once, kill it, fail the rest as "server not answering" unsent, and go on with the next group', async () => {
        const cases = [...['a', 'b', 'c', 'd'].map((id) => mk(id, `/${id}`)), mk('e', '/e/{x}')];
        // `e` collides with nothing but is planned in the same group; a second group proves the run goes on.
        const other = mk('f', '/a', { parameters: { query: {} } });
        const exec = execTarget([...cases, other], { command: `exec "${process.execPath}" ${join(dir, 'hangs.mjs')} {case_file} {port} 1 ${mode}` });
        try {
          const report = await runCases(exec.order, { target: exec.target, timeoutMs: 1500 });
          const by = Object.fromEntries(report.results.map((r) => [r.id, r]));
          assert.deepEqual(report.results.map((r) => `${r.id}:${r.status}`), ['a:passed', 'b:failed', 'c:failed', 'd:failed', 'e:failed', 'f:passed']);
          assert.match(by.b!.error!, /^ServerNotAnswering: server not answering: No response within 1500 ms during this case, the process still running \(pid \d+, port \d+; killed, the group's remaining cases are not sent\).*\n  last lines of its stderr:\n    worker pool exhausted$/s);
          assert.ok(by.b!.request, 'the request it did not answer was sent');
          for (const id of ['c', 'd', 'e']) {
            assert.equal(by[id]!.error, "ServerNotAnswering: server not answering: the group's server stopped answering (reported at b); not sent");
            assert.equal(by[id]!.request, undefined, 'a request never sent is not shown as sent');
          }
          assert.equal(exec.launches(), 2);
        } finally {
          await exec.close();
        }
      });
    });
  }

  describe('when the server dies mid-group', () => {
    it('should report it once with its signal and stderr, fail the rest as "server died" and show no request as sent for them', async () => {
      const cases = ['a', 'b', 'c', 'd'].map((id) => mk(id, `/${id}`));
      // `exec`: the shell becomes the server, so its signal is the process's own.
      const exec = execTarget(cases, { command: `exec "${process.execPath}" ${join(dir, 'dies.mjs')} {case_file} {port} 2` });
      try {
        const report = await runCases(exec.order, { target: exec.target, timeoutMs: 5000 });
        assert.deepEqual(report.results.map((r) => r.status), ['passed', 'passed', 'failed', 'failed']);
        const [, , during, after] = report.results;
        assert.match(during!.error!, /^ServerDied: server died during this case: signal SIGKILL \(port \d+\).*\n  last lines of its stderr:\n    fatal: out of cheese$/s);
        assert.ok(during!.request, 'the request that killed it was sent');
        assert.match(after!.error!, /^ServerDied: server died: the group's server exited earlier \(signal SIGKILL, reported at c\); not sent$/);
        assert.equal(after!.request, undefined, 'a request never sent is not shown as sent');
        assert.equal(exec.launches(), 1);
      } finally {
        await exec.close();
      }
    });
  });

  describe('when keel-conformance --exec --timeout meets a server that stops answering', () => {
    it('should end the run with the server reported once as not answering (exit 1)', async () => {
      const cases = join(dir, 'hang-cases', 'hang');
      mkdirSync(cases, { recursive: true });
      for (const n of ['01', '02', '03']) {
        writeFileSync(join(cases, `${n}_case.json`), JSON.stringify({ name: n, handler: { route: `/r${n}`, method: 'GET' }, request: { method: 'GET', path: `/r${n}` }, expected_response: { status_code: 200 } }));
      }
      const r = await runCli(['--exec', `exec "${process.execPath}" ${join(dir, 'hangs.mjs')} {case_file} {port} 1 stop`, '--timeout', '1500', join(dir, 'hang-cases')]);
      assert.equal(r.code, 1, r.out);
      assert.equal(r.last, '1 passed, 2 failed');
      assert.equal(r.out.match(/server not answering: No response within 1500 ms during this case/g)?.length, 1, r.out);
      assert.match(r.out, /server not answering: the group's server stopped answering \(reported at hang\/02_case\); not sent/);
    });
  });

  describe('when given a port range', () => {
    it('should give every server a port inside it', async () => {
      const log = join(dir, 'ports.log');
      const probe = await freePort();
      const range = [probe, probe + 3] as const;
      const cases = [mk('a', '/items/{id}'), mk('b', '/items/{item_id}', { parameters: {} }), mk('c', '/items/{n}', { parameters: { path: {} } })];
      const exec = execTarget(cases, { command: `echo {port} >> ${log}; exec "${process.execPath}" ${join(dir, 'server.mjs')} {case_file} {port} ${join(dir, 'range-starts.log')}`, portRange: range });
      try {
        const report = await runCases(exec.order, { target: exec.target });
        assert.equal(report.passed, 3, JSON.stringify(report.results.filter((r) => r.status === 'failed')));
        assert.equal(exec.launches(), 3);
      } finally {
        await exec.close();
      }
      const ports = readFileSync(log, 'utf8').trim().split('\n').map(Number);
      assert.equal(ports.length, 3);
      for (const p of ports) assert.ok(p >= range[0] && p <= range[1], `port ${p} outside ${range.join('-')}`);
    });

    it('should read A-B and reject anything else', () => {
      assert.deepEqual(parsePortRange('40000-40010'), [40000, 40010]);
      for (const bad of ['40010-40000', '0-10', '1-70000', '40000', 'a-b', '40000-']) assert.equal(typeof parsePortRange(bad), 'string', bad);
    });
  });

  describe('when the command serves its case file on the port', () => {
    it('should start one server per group, run the group, and stop it', async () => {
      const log = join(dir, 'starts.log');
      const cases = [mk('a', '/items/{id}'), mk('b', '/items/{item_id}', { parameters: {} }), mk('c', '/x')];
      const exec = execTarget(cases, { command: `"${process.execPath}" ${join(dir, 'server.mjs')} {case_file} {port} ${log}` });
      try {
        const report = await runCases(exec.order, { target: exec.target });
        assert.equal(report.failed, 0, JSON.stringify(report.results.filter((r) => r.status === 'failed')));
        assert.equal(report.passed, 3);
        assert.equal(exec.launches(), 2);
      } finally {
        await exec.close();
      }
      // Sorted: the next group's server starts while the current one runs.
      assert.deepEqual(readFileSync(log, 'utf8').trim().split('\n').sort(), ['a,c', 'b']);
    });
  });

  describe('when the command exits before listening', () => {
    it('should fail the group with the exit code and its stderr, starting it once', async () => {
      const exec = execTarget([mk('a', '/a'), mk('b', '/b')], { command: `echo "no such app" >&2; exit 3 # {case_file} {port}` });
      try {
        const report = await runCases(exec.order, { target: exec.target });
        assert.equal(report.failed, 2);
        assert.match(report.results[0]!.error!, /exited \(3\) before listening on port \d+.*\nno such app/s);
        assert.equal(exec.launches(), 1);
      } finally {
        await exec.close();
      }
    });
  });

  describe('when the server never listens', () => {
    it('should give up after the start timeout and stop the process', async () => {
      const exec = execTarget([mk('a', '/a')], { command: `sleep 30 # {case_file} {port}`, startTimeoutMs: 300 });
      const started = performance.now();
      try {
        const report = await runCases(exec.order, { target: exec.target });
        assert.match(report.results[0]!.error!, /did not accept connections .* within 300 ms/);
      } finally {
        await exec.close();
      }
      assert.ok(performance.now() - started < 5000);
    });
  });
});
