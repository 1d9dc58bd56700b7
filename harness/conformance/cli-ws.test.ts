/**
 * keel-conformance with WebSocket session cases: listed by --list, named in --manifest's skipped
 * list (the manifest has HTTP cases only), skipped with the reason under --exec, played
 * against --base-url and keel's fixture app.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../test/helpers/conformance-cli.js';
import { serveFixtureApp } from './fixture-app.js';
import { loadCases } from './loader.js';
import { WEBSOCKET_NOT_IN_MANIFEST } from './manifest.js';
import { isRunnable, isRunnableWebSocket, type RunnableCase } from './types.js';

let dir: string;
let file: string;
const http = { route: '/hello', method: 'GET' };
const cases = [
  { id: 'hello', category: 'basics', http: { handler: http, request: { method: 'GET', path: '/hello' }, expected_response: { status_code: 200, body: { hello: 'world' } } } },
  {
    id: 'echo', category: 'websocket',
    websocket: { handler: { route: '/ws/echo', behavior: 'echo' }, session: { messages: [{ direction: 'send', payload: { a: 1 } }, { direction: 'receive', payload: { a: 1 } }], close_code: 1000 } },
  },
  {
    id: 'lifecycle', category: 'websocket',
    websocket: { handler: { route: '/ws/life', behavior: 'track_lifecycle' }, session: { messages: [], close_code: 1000 } }, expected: { disconnect_count: 1 },
  },
];

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'keel-cli-ws-'));
  mkdirSync(join(dir, 'cases'));
  file = join(dir, 'cases', 'mixed.json');
  writeFileSync(file, JSON.stringify(cases));
});
after(() => rmSync(dir, { recursive: true, force: true }));


describe('when the cases include WebSocket sessions', () => {
  it('should list them with their route, frames and close, and their routes', async () => {
    const r = await runCli(['--list', file]);
    assert.equal(r.code, 0);
    assert.match(r.out, /^3 cases to run:$/m);
    assert.match(r.out, /^ {2}cases\/mixed\/echo {2}WebSocket \/ws\/echo \(echo\): 1 sent, 1 expected, close 1000$/m);
    assert.match(r.out, /^WebSocket routes to serve \(2; not in --manifest, not run under --exec\):$/m);
    assert.match(r.out, /^ {2}WS {6}\/ws\/life {2}1 case$/m);
  });
  it('should name them in the manifest\'s skipped list with the reason', async () => {
    const r = await runCli(['--manifest', '-', file]);
    const m = JSON.parse(r.out);
    assert.deepEqual(m.cases.map((c: { id: string }) => c.id), ['cases/mixed/hello']);
    assert.deepEqual(m.skipped, [
      { id: 'cases/mixed/echo', category: 'websocket', reason: WEBSOCKET_NOT_IN_MANIFEST },
      { id: 'cases/mixed/lifecycle', category: 'websocket', reason: WEBSOCKET_NOT_IN_MANIFEST },
    ]);
  });
  it('should skip them under --exec, saying why, and run the HTTP cases', async () => {
    const server = join(dir, 'server.mjs');
    writeFileSync(server, `import { createServer } from 'node:http';
createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"hello":"world"}'); }).listen(Number(process.argv[2]), '127.0.0.1');`);
    const r = await runCli(['--exec', `node ${server} {port} {case_file}`, '--json', join(dir, 'exec.json'), file]);
    assert.equal(r.last, '1 passed, 0 failed, 2 skipped');
    const report = JSON.parse(readFileSync(join(dir, 'exec.json'), 'utf8'));
    assert.match(report.cases.find((c: { id: string }) => c.id === 'cases/mixed/echo').skip, /^not run under --exec: WebSocket session case: the manifest \(version 2\)/);
    assert.equal(report.summary.target, 'exec');
    assert.equal(report.summary.server_starts, 1, 'the --json summary counts the servers started');
  });
  it('should play them against --base-url, skipping what a client cannot observe', async () => {
    const loaded = loadCases([file]).filter((c) => isRunnable(c) || isRunnableWebSocket(c)) as RunnableCase[];
    const served = await serveFixtureApp(loaded);
    try {
      const r = await runCli(['--base-url', served.url, '--json', join(dir, 'base.json'), file]);
      assert.equal(r.last, '2 passed, 0 failed, 1 skipped', r.out);
      const report = JSON.parse(readFileSync(join(dir, 'base.json'), 'utf8'));
      assert.match(report.cases.find((c: { id: string }) => c.id === 'cases/mixed/lifecycle').skip, /expected\.disconnect_count\) cannot be observed by a client/);
    } finally {
      await served.close();
    }
  });
  it('should play them against keel\'s fixture app, which reports its handler\'s counters', async () => {
    const r = await runCli([file]);
    assert.equal(r.code, 0, r.out);
    assert.equal(r.last, '3 passed, 0 failed');
  });
});
