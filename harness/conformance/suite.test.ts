/**
 * keel's own conformance suite, shipped with the runner (harness/conformance/suite/): it runs with no
 * corpus path and needs nothing beside the package; keel's fixture app passes it; and a server that
 * replays what the harness hands it (the manifest) fails every case whose answer the framework owns.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../../test/helpers/conformance-cli.js';
import { fixtureTarget } from './fixture-app.js';
import { isFrameworkOwnedError } from './handler-answer.js';
import { buildManifest } from './manifest.js';
import { contradictionIndex } from './contradictions.js';
import { contradictionsByRule } from './contradiction-rules.js';
import { formatFailures } from './report.js';
import { runCases } from './runner.js';
import { loadSuite } from './suite/index.js';
import { startReplayServer, type ReplayServer } from '../../test/helpers/replay-server.js';
import { isRunnable, isRunnableWebSocket, type ConformanceCase } from './types.js';

const suite = loadSuite();
const http = suite.filter(isRunnable) as ConformanceCase[];

describe('when the shipped suite is checked against itself', () => {
  it('should hold no two cases that contradict each other under the runner\'s rules (same request, validation style, validation input)', () => {
    const found = contradictionsByRule(suite);
    assert.deepEqual(found.map((c) => `${c.case} vs ${c.conflicts_with} (${c.rule}): ${c.reason}`), []);
    const index = contradictionIndex(suite);
    assert.deepEqual(suite.filter((c) => index.has(c.id)).map((c) => c.id), [], 'no listed contradiction names a shipped case');
  });
});

describe('when the shipped suite is loaded', () => {
  it('should hold at least 300 concrete cases with unique keel/ ids', () => {
    const runnable = suite.filter((c) => isRunnable(c) || isRunnableWebSocket(c));
    assert.ok(runnable.length >= 300, `${runnable.length} runnable cases`);
    assert.equal(runnable.length, suite.length, 'no shipped case is skipped');
    assert.equal(new Set(suite.map((c) => c.id)).size, suite.length);
    for (const c of http) {
      assert.match(c.id, /^keel\/[a-z_]+\/\d\d_[A-Za-z0-9_]+$/);
      assert.equal(typeof c.request.path, 'string', c.id);
      assert.equal(typeof c.expected.status_code, 'number', c.id);
    }
  });

  it('should cover every framework-owned behaviour of the specification', () => {
    const categories = new Set(suite.map((c) => c.category));
    for (const cat of ['routing', 'params_path', 'params_query', 'params_headers', 'params_cookie', 'validation_path', 'validation_query', 'validation_headers', 'validation_cookie', 'validation_body', 'limits', 'cors', 'auth', 'problem_details', 'request_id', 'compression', 'rate_limit', 'request_timeout', 'websocket', 'websocket_session', 'graphql_subscription']) {
      assert.ok(categories.has(cat), `category ${cat}`);
    }
    const statuses = new Set(http.map((c) => c.expected.status_code));
    for (const s of [101, 204, 400, 401, 403, 404, 405, 408, 413, 414, 415, 422, 429, 431, 500]) assert.ok(statuses.has(s), `a case expecting ${s}`);
  });

  it('should run with no corpus path (keel-conformance --list)', async () => {
    const r = await runCli(['--list']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, new RegExp(`^${suite.length} cases to run:$`, 'm'));
  });
});

describe('when keel\'s fixture app runs the shipped suite', () => {
  it('should pass at least 95% of the cases', { timeout: 300_000 }, async () => {
    const report = await runCases(suite, { target: fixtureTarget });
    const ran = report.passed + report.failed;
    assert.ok(ran >= 300, `${ran} cases ran`);
    assert.ok(report.passed / ran >= 0.95, `${report.passed}/${ran} passed\n${formatFailures(report.results)}`);
  });
});

describe('when a server replays what the harness hands it', () => {
  let replay: ReplayServer;
  before(async () => {
    replay = await startReplayServer(buildManifest(http));
  });
  after(() => replay.close());

  it('should fail the cases whose answer the framework owns, and only by its own fault', { timeout: 120_000 }, async () => {
    const owned = http.filter(isFrameworkOwnedError);
    const report = await runCases(owned, { target: replay.url });
    assert.ok(owned.length >= 150, `${owned.length} framework-owned cases`);
    assert.ok(report.failed / owned.length >= 0.9, `the replaying server passed ${report.passed} of ${owned.length} framework-owned cases`);
    assert.equal(report.results.filter((r) => r.error).length, 0, 'every case got an answer (the replay server is up)');
  });

  it('should still pass successful cases whose answer is the handler\'s alone', async () => {
    const plain = http.filter((c) => c.category === 'params_query' && c.expected.status_code === 200);
    const report = await runCases(plain, { target: replay.url });
    assert.equal(report.passed, plain.length, formatFailures(report.results));
  });
});
