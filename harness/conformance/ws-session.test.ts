/**
 * The WebSocket session player against a hand-written server (the `ws` package, no keel code): each
 * path behaves in one way, right or wrong, and the player must say which.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { playSession } from './ws-session.js';
import { formatFailures, toJson } from './report.js';
import { runCases } from './runner.js';
import { isWebSocketCase, type RunnableCase, type WebSocketCase, type WebSocketCaseSession } from './types.js';

let server: Server;
let base: string;
const upgradeHeaders: Array<Record<string, unknown>> = [];
const closes: number[] = [];

/** What each path does with a message. */
const BEHAVIOURS: Record<string, (ws: WebSocket, data: Buffer, binary: boolean) => void> = {
  '/echo': (ws, data, binary) => ws.send(data, { binary }),
  '/shout': (ws, data) => ws.send(data.toString().toUpperCase()),
  '/as-binary': (ws, data) => ws.send(data, { binary: true }),
  '/twice': (ws, data) => { ws.send(data.toString()); ws.send(data.toString()); },
  '/heartbeat-first': (ws, data) => { ws.ping(Buffer.from('hb')); ws.send(data.toString()); },
  '/silent': () => {},
  '/hang-up': (ws) => ws.close(4001, 'go away'),
};

before(async () => {
  const wss = new WebSocketServer({ noServer: true });
  server = createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req, socket, head) => {
    const path = req.url ?? '/';
    if (path === '/refuse') return void socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
    upgradeHeaders.push(req.headers);
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('close', (code) => closes.push(code));
      // Never reads again: a close frame is never answered.
      if (path === '/deaf') return void (ws as unknown as { _socket: { pause(): void } })._socket.pause();
      ws.on('message', (data: Buffer, binary: boolean) => BEHAVIOURS[path]?.(ws, data, binary));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

const greeting = { type: 'greeting', text: 'hello' };
const session = (messages: WebSocketCaseSession['messages'], extra: Partial<WebSocketCaseSession> = {}): WebSocketCaseSession => ({ messages, close_code: 1000, ...extra });
const play = (path: string, s: WebSocketCaseSession, timeoutMs = 1000) => playSession(`${base}${path}`, s, { timeoutMs, quietMs: 100, headers: { 'X-Conformance-Case': 'ws/test' } });
const echoed = session([{ direction: 'send', payload: greeting }, { direction: 'receive', payload: greeting }]);

describe('when the server answers as the case expects', () => {
  it('should pass, send the case header on the upgrade, and keep the transcript', async () => {
    const r = await play('/echo', echoed);
    assert.deepEqual(r.mismatches, []);
    assert.equal(r.error, undefined);
    assert.equal(upgradeHeaders.at(-1)!['x-conformance-case'], 'ws/test');
    assert.deepEqual(r.transcript.map((f) => [f.direction, f.type, f.text ?? f.code]), [
      ['sent', 'text', JSON.stringify(greeting)], ['received', 'text', JSON.stringify(greeting)], ['sent', 'close', 1000], ['received', 'close', 1000],
    ]);
  });
  it('should compare raw text, binary bytes and pongs', async () => {
    const r = await play('/echo', session([
      { direction: 'send', raw_text: 'not json {' }, { direction: 'receive', raw_text: 'not json {' },
      { direction: 'send', frame_type: 'binary', payload_base64: 'AAEC/w==' }, { direction: 'receive', frame_type: 'binary', payload_base64: 'AAEC/w==' },
      { direction: 'send', frame_type: 'ping', payload_base64: 'aGVhcnRiZWF0' }, { direction: 'receive', frame_type: 'pong', payload_base64: 'aGVhcnRiZWF0' },
    ]));
    assert.deepEqual(r.mismatches, []);
  });
  it('should pass over a server heartbeat ping that no step expects, and log it', async () => {
    const r = await play('/heartbeat-first', echoed);
    assert.deepEqual(r.mismatches, []);
    assert.ok(r.transcript.some((f) => f.type === 'ping' && f.note?.startsWith('passed over')));
  });
  it('should drop the connection for abnormal_close, which the server sees as 1006', async () => {
    const r = await play('/echo', session([], { close_code: 1006, abnormal_close: true }));
    assert.deepEqual(r.mismatches, []);
    for (let i = 0; i < 50 && closes.at(-1) !== 1006; i++) await new Promise((res) => setTimeout(res, 10));
    assert.equal(closes.at(-1), 1006);
    assert.equal(r.transcript.at(-1)!.note, 'connection dropped without a close frame');
  });
});

describe('when the server answers something else', () => {
  it('should report a payload difference by JSON path', async () => {
    const r = await play('/shout', echoed);
    assert.deepEqual(new Set(r.mismatches.map((m) => `${m.what}: ${String(m.expected)} / ${String(m.actual)}`)), new Set([
      'message 2 (receive) payload $.type: greeting / <<missing>>', 'message 2 (receive) payload $.text: hello / <<missing>>',
      'message 2 (receive) payload $.TYPE: <<not expected>> / GREETING', 'message 2 (receive) payload $.TEXT: <<not expected>> / HELLO',
    ]));
  });
  it('should report a frame of the wrong type', async () => {
    const r = await play('/as-binary', echoed);
    assert.deepEqual(r.mismatches, [{ what: 'message 2 (receive) frame type', expected: 'text', actual: 'binary' }]);
  });
  it('should report a text frame that is not JSON where a payload is expected', async () => {
    const r = await play('/echo', session([{ direction: 'send', raw_text: 'plain' }, { direction: 'receive', payload: { a: 1 } }]));
    assert.equal(r.mismatches[0]!.note, 'the frame is not JSON');
    assert.equal(r.mismatches[0]!.actual, 'plain');
  });
  it('should report different bytes in base64', async () => {
    const r = await play('/echo', session([{ direction: 'send', frame_type: 'binary', payload_base64: 'AQI=' }, { direction: 'receive', frame_type: 'binary', payload_base64: 'AgE=' }]));
    assert.deepEqual(r.mismatches, [{ what: 'message 2 (receive) bytes', expected: 'AgE=', actual: 'AQI=', note: 'base64' }]);
  });
  it('should count every data frame against expected_receive_count after the quiet period', async () => {
    const r = await play('/twice', session([{ direction: 'send', payload: greeting }, { direction: 'receive', payload: greeting }], { expected_receive_count: 1 }));
    assert.deepEqual(r.mismatches.map((m) => [m.what, m.expected, m.actual]), [['frames received', 1, 2]]);
    assert.equal(r.transcript.filter((f) => f.note === 'not read by any step').length, 1);
  });
  it('should report a server that closes in the middle of the session', async () => {
    const r = await play('/hang-up', echoed);
    assert.equal(r.mismatches.length, 1);
    assert.equal(r.mismatches[0]!.what, 'message 2 (receive)');
    assert.match(String(r.mismatches[0]!.actual), /the server closed the connection \(4001/);
  });
});

describe('when the server does not answer', () => {
  it('should fail a receive step after the timeout instead of hanging', async () => {
    const started = performance.now();
    const r = await play('/silent', echoed, 300);
    assert.deepEqual(r.mismatches, [{ what: 'message 2 (receive)', expected: 'a text frame', actual: 'nothing within 300 ms' }]);
    assert.ok(performance.now() - started < 2000);
  });
  it('should fail a closing handshake the server never answers', async () => {
    const r = await play('/deaf', session([]), 300);
    assert.deepEqual(r.mismatches, [{ what: 'closing handshake', expected: 'a close frame from the server', actual: 'nothing within 300 ms' }]);
  });
  it('should report a refused upgrade as an error', async () => {
    const r = await play('/refuse', echoed);
    assert.match(r.error ?? '', /the upgrade was refused with HTTP 403/);
  });
  it('should report a close code that cannot be sent as an error of the case', async () => {
    const r = await play('/echo', session([], { close_code: 1004 }));
    assert.match(r.error ?? '', /close_code 1004 cannot be sent/);
  });
});

describe('when runCases runs WebSocket session cases', () => {
  const wsCase = (id: string, path: string, extra: Partial<WebSocketCase> = {}): WebSocketCase => ({
    kind: 'websocket', id, category: 'websocket', name: id, source: 'test', websocket: { handler: { route: path, behavior: 'echo' }, session: echoed }, expected: {}, ...extra,
  });
  const httpBase = () => base.replace(/^ws/, 'http');
  it('should pass, fail with the session in the report, and skip by the case\'s own skip', async () => {
    const report = await runCases([wsCase('ws/ok', '/echo'), wsCase('ws/bad', '/shout'), wsCase('ws/skip', '/echo', { skip: 'by the corpus' })], { target: httpBase(), timeoutMs: 1000 });
    assert.deepEqual(report.results.map((r) => [r.id, r.status]), [['ws/ok', 'passed'], ['ws/bad', 'failed'], ['ws/skip', 'skipped']]);
    const text = formatFailures(report.results);
    assert.match(text, /upgrade request sent:\n {4}GET \/shout\n {4}X-Conformance-Case: ws\/bad/);
    assert.match(text, /session \(→ sent, ← received\):\n {4}→ text \{"type":"greeting","text":"hello"\}\n {4}← text \{"TYPE":"GREETING","TEXT":"HELLO"\}/);
    assert.deepEqual(JSON.parse(toJson(report)).cases[1].transcript[1], { direction: 'received', type: 'text', text: '{"TYPE":"GREETING","TEXT":"HELLO"}' });
  });
  it('should skip, saying why, a case whose server-side expectations the target cannot report', async () => {
    const report = await runCases([wsCase('ws/counted', '/echo', { expected: { disconnect_count: 1 } })], { target: httpBase(), timeoutMs: 1000 });
    assert.equal(report.results[0]!.status, 'skipped');
    assert.match(report.results[0]!.skip ?? '', /expected\.disconnect_count\) cannot be observed by a client and this target does not report them; the session itself passed/);
  });
  it('should fail such a case when the session fails, whatever the target reports', async () => {
    const report = await runCases([wsCase('ws/counted', '/shout', { expected: { disconnect_count: 1 } })], { target: httpBase(), timeoutMs: 1000 });
    assert.equal(report.results[0]!.status, 'failed');
  });
  it('should check them against what the target reports, waiting for the server to catch up', async () => {
    let count = 0;
    const target = async (c: RunnableCase) => {
      assert.ok(isWebSocketCase(c));
      return { baseUrl: httpBase(), observe: () => ({ disconnect_count: count++ > 3 ? 1 : 0 }) };
    };
    const pass = await runCases([wsCase('ws/counted', '/echo', { expected: { disconnect_count: 1 } })], { target, timeoutMs: 1000 });
    assert.equal(pass.results[0]!.status, 'passed');
    const fail = await runCases([wsCase('ws/counted', '/echo', { expected: { disconnect_count: 2, connect_count: 1 } })], { target: async () => ({ baseUrl: httpBase(), observe: () => ({ disconnect_count: 1 }) }), timeoutMs: 200 });
    assert.deepEqual(fail.results[0]!.mismatches.map((m) => [m.what, m.expected, m.actual]), [
      ['expected.disconnect_count', 2, 1], ['expected.connect_count', 1, '<<not reported by the target>>'],
    ]);
  });
});
