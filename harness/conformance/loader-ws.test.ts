import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SHARED_CORPUS } from '../../test/helpers/shared-corpus.js';
import { loadCases, toCase } from './loader.js';
import { isRunnable, isRunnableWebSocket, isWebSocketCase, type WebSocketCase } from './types.js';

const info = { id: 'fixtures/websocket/x', category: 'websocket', source: 'websocket.json#0' };
const sessionCase = (websocket: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  id: 'x', category: 'websocket', description: 'a session',
  websocket: { handler: { route: '/ws/echo', behavior: 'echo' }, session: { messages: [{ direction: 'send', payload: { a: 1 } }, { direction: 'receive', payload: { a: 1 } }], close_code: 1000 }, ...websocket },
  ...extra,
});

describe('when the loader meets a WebSocket session case', () => {
  it('should load it as a runnable case of its own kind, not as an HTTP case', () => {
    const c = toCase(sessionCase({}, { expected: { disconnect_count: 1 } }), info);
    assert.ok(isWebSocketCase(c));
    assert.ok(isRunnableWebSocket(c));
    assert.equal(isRunnable(c), false, 'isRunnable stays the HTTP kind (manifest, --exec)');
    assert.equal(c.description, 'a session');
    assert.equal(c.websocket.handler.route, '/ws/echo');
    assert.equal(c.websocket.session.messages.length, 2);
    assert.deepEqual(c.expected, { disconnect_count: 1 });
  });
  it('should give it an empty expected block when the case has none', () => {
    assert.deepEqual((toCase(sessionCase({}), info) as WebSocketCase).expected, {});
  });
  it('should honour the corpus\'s skip for node', () => {
    const c = toCase(sessionCase({}, { skip: { languages: ['node'], reason: 'no sockets' } }), info);
    assert.ok(isWebSocketCase(c));
    assert.equal(isRunnableWebSocket(c), false);
    assert.match(c.skip!, /skipped by the corpus for node: no sockets/);
  });
  it('should skip a malformed session, saying what is wrong', () => {
    const reason = (ws: Record<string, unknown>) => toCase(sessionCase(ws), info).skip;
    assert.match(reason({ handler: { route: 'ws' } })!, /malformed WebSocket session case: websocket\.handler\.route must be a path/);
    assert.match(reason({ session: { messages: 'hi' } })!, /websocket\.session\.messages must be a list/);
    assert.match(reason({ session: { messages: [{ direction: 'sideways' }] } })!, /messages\[0\]\.direction must be "send" or "receive"/);
    assert.match(reason({ session: { messages: [{ direction: 'send', frame_type: 'close' }] } })!, /messages\[0\]\.frame_type must be one of text, binary, ping, pong/);
    assert.match(reason({ session: { messages: [{ direction: 'send' }] } })!, /messages\[0\] sends a text frame without payload or raw_text/);
    assert.match(reason({ session: { messages: [], close_code: '1000' } })!, /close_code must be an integer/);
  });
  it('should skip a session whose subprotocol is not a non-empty string, saying so', () => {
    const c = toCase({ id: 's', websocket: { handler: { route: '/graphql' }, session: { subprotocol: 5, messages: [] } } }, info);
    assert.equal(c.skip, 'malformed WebSocket session case: websocket.session.subprotocol must be a non-empty string');
  });
  it('should leave the HTTP handshake case with a websocket record an HTTP case', () => {
    const c = toCase({ id: 'h', http: { handler: { route: '/ws', method: 'GET', middleware: { websocket: { enabled: true } } }, request: { method: 'GET', path: '/ws' }, expected_response: { status_code: 101 } } }, info);
    assert.ok(isRunnable(c));
  });
});

const corpusFile = join(SHARED_CORPUS, 'fixtures', 'websocket.json');
describe('when loading the shared corpus\'s websocket cases', { skip: existsSync(corpusFile) ? false : `shared corpus not found at ${corpusFile}` }, () => {
  it('should load every session case as runnable', () => {
    const cases = loadCases([corpusFile]);
    const sessions = cases.filter(isRunnableWebSocket);
    assert.ok(sessions.length >= 9, `${sessions.length} session cases`);
    assert.deepEqual(cases.filter((c) => c.skip).map((c) => [c.id, c.skip]), []);
  });
});
