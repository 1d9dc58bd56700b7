/**
 * keel's fixture app serving WebSocket session cases: the case's handler becomes
 * `app.ws(route, jsonWebSocket(...))`, its behaviour only the application's logic.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED_CORPUS } from '../../test/helpers/shared-corpus.js';
import { fixtureTarget, serveFixtureApp } from './fixture-app.js';
import { loadCases } from './loader.js';
import { formatFailures } from './report.js';
import { runCases } from './runner.js';
import type { WebSocketCase, WebSocketCaseHandler, WebSocketCaseSession } from './types.js';

const wsCase = (id: string, handler: Partial<WebSocketCaseHandler>, session: Partial<WebSocketCaseSession>, expected: Record<string, unknown> = {}): WebSocketCase => ({
  kind: 'websocket', id, category: 'websocket', name: id, source: 'test',
  websocket: { handler: { route: '/ws/t', ...handler }, session: { messages: [], close_code: 1000, ...session } }, expected,
});
async function run(...cases: WebSocketCase[]) {
  const report = await runCases(cases, { target: fixtureTarget, timeoutMs: 2000, quietMs: 100 });
  return report.results;
}
const invalid = { direction: 'send', raw_text: 'not json {' } as const;
const invalidAnswer = { direction: 'receive', payload: { type: 'error', message: 'Invalid JSON' } } as const;

describe('when the fixture app serves a session case', () => {
  it('should answer with keel\'s own framework answers whatever the behaviour', async () => {
    const results = await run(
      wsCase('silent-handler-still-refuses-bad-json', { behavior: 'no_response' }, { messages: [invalid, invalidAnswer] }),
      wsCase('schema-before-the-handler', { behavior: 'subscribe_ack', message_schema: { type: 'object', required: ['channel'] } }, {
        messages: [{ direction: 'send', payload: { type: 'subscribe' } }, { direction: 'receive', payload: { error: 'Message validation failed' } },
          { direction: 'send', payload: { type: 'subscribe', channel: 'news' } }, { direction: 'receive', payload: { type: 'subscribed', channel: 'news', status: 'ok' } }],
      }),
      wsCase('pong-from-keel', { behavior: 'no_response' }, { messages: [{ direction: 'send', frame_type: 'ping', payload_base64: 'aGk=' }, { direction: 'receive', frame_type: 'pong', payload_base64: 'aGk=' }], expected_receive_count: 0 }),
    );
    assert.deepEqual(results.map((r) => [r.id, r.status]), [['silent-handler-still-refuses-bad-json', 'passed'], ['schema-before-the-handler', 'passed'], ['pong-from-keel', 'passed']], formatFailures(results));
  });
  it('should drop a reply failing response_schema (keel\'s rule), so nothing arrives', async () => {
    const [r] = await run(wsCase('reply-dropped', { behavior: 'echo', response_schema: { type: 'object', required: ['ok'] } }, { messages: [{ direction: 'send', payload: { a: 1 } }], expected_receive_count: 0 }));
    assert.equal(r!.status, 'passed', formatFailures([r!]));
  });
  it('should answer binary frames with keel\'s error for a behaviour that takes none, and echo them for echo behaviours', async () => {
    const bytes = { direction: 'send', frame_type: 'binary', payload_base64: 'AAE=' } as const;
    const results = await run(
      wsCase('binary-echo', { behavior: 'binary_echo' }, { messages: [bytes, { direction: 'receive', frame_type: 'binary', payload_base64: 'AAE=' }] }),
      wsCase('binary-refused', { behavior: 'subscribe_ack' }, { messages: [bytes, { direction: 'receive', payload: { type: 'error', message: 'Binary messages are not supported' } }] }),
    );
    assert.deepEqual(results.map((r) => r.status), ['passed', 'passed'], formatFailures(results));
  });
  it('should report the lifecycle counts keel\'s callbacks produced, for a clean close and a drop', async () => {
    const lifecycle = { behavior: 'track_lifecycle', on_disconnect_action: 'increment_disconnect_counter' };
    const results = await run(
      wsCase('clean', lifecycle, { messages: [{ direction: 'send', payload: { type: 'bye' } }] }, { connect_count: 1, message_count: 1, disconnect_count: 1 }),
      wsCase('dropped', lifecycle, { messages: [], close_code: 1006, abnormal_close: true }, { disconnect_count: 1 }),
      wsCase('wrong-count', lifecycle, { messages: [] }, { disconnect_count: 2 }),
    );
    assert.deepEqual(results.map((r) => r.status), ['passed', 'passed', 'failed'], formatFailures(results));
    assert.deepEqual(results[2]!.mismatches.map((m) => [m.what, m.expected, m.actual]), [['expected.disconnect_count', 2, 1]]);
  });
  it('should fail a case whose handler it cannot build, naming the key', async () => {
    const results = await run(
      wsCase('unknown-behaviour', { behavior: 'teleport' }, {}),
      wsCase('unknown-key', { behavior: 'echo', rate: 5 }, {}),
    );
    assert.deepEqual(results.map((r) => r.status), ['failed', 'failed']);
    assert.match(results[0]!.error!, /ConfigError: Invalid websocket\.handler at websocket\.handler\.behavior: expected one of "echo", "binary_echo"/);
    assert.match(results[1]!.error!, /Unknown key "rate" in websocket\.handler/);
  });
  it('should serve a graphql handler as keel\'s GraphQL route, speaking the subprotocol the session asks for', async () => {
    const init = { direction: 'send', payload: { type: 'connection_init' } } as const;
    const results = await run(
      wsCase('graphql-ack', { route: '/graphql', graphql: { schema_type: 'full' } }, { subprotocol: 'graphql-transport-ws', messages: [init, { direction: 'receive', payload: { type: 'connection_ack' } }] }),
      wsCase('graphql-bad-schema', { route: '/graphql', graphql: { schema_type: 'everything' } }, { subprotocol: 'graphql-transport-ws', messages: [init] }),
      wsCase('graphql-extra-key', { route: '/graphql', graphql: { schema_type: 'full' }, behavior: 'echo' }, { subprotocol: 'graphql-transport-ws', messages: [init] }),
    );
    assert.deepEqual(results.map((r) => r.status), ['passed', 'failed', 'failed'], formatFailures(results));
    assert.match(results[1]!.error!, /websocket\.handler\.graphql\.schema_type: expected one of "query_only", "query_mutation", "full"/);
    assert.match(results[2]!.error!, /Unknown key "behavior" in websocket\.handler/);
  });
  it('should serve one handler per route when several cases are served at once (--serve), reporting the rest', async () => {
    const served = await serveFixtureApp([wsCase('first', { behavior: 'echo' }, {}), wsCase('second', { behavior: 'no_response' }, {})]);
    try {
      assert.deepEqual(served.shadowed, ['second']);
    } finally {
      await served.close();
    }
  });
});

const corpusFile = join(SHARED_CORPUS, 'fixtures', 'websocket.json');
describe('when the fixture app runs the shared corpus\'s websocket cases', { skip: existsSync(corpusFile) ? false : `shared corpus not found at ${corpusFile}` }, () => {
  it('should pass every one of them', async () => {
    const report = await runCases(loadCases([corpusFile]), { target: fixtureTarget, timeoutMs: 2000 });
    assert.equal(report.failed, 0, formatFailures(report.results));
    assert.equal(report.skipped, 0);
    assert.ok(report.passed >= 10);
  });
});
