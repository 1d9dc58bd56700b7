import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serveRouter, type ServedRouter } from '../../test/helpers/ws-router.js';
import WebSocket from 'ws';
import { MAX_JSON_DEPTH } from '../http/content.js';
import { ConfigError } from '../http/errors.js';
import { INVALID_JSON_REPLY, jsonWebSocket, parseJsonMessage, type JsonWebSocketClose } from './json.js';
import { HIGH_WATER_MARK } from './session.js';
import { createWebSocketUpgradeHandler, WebSocketRouter, type UpgradeHandler } from './upgrade.js';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const disconnects: JsonWebSocketClose[] = [];
let gate: Promise<void> = Promise.resolve();
let served: ServedRouter;
let router: WebSocketRouter;
let slow: UpgradeHandler;
let base: string;

before(async () => {
  slow = createWebSocketUpgradeHandler(jsonWebSocket({
    onMessage: async (m: { i: number }) => {
      await gate;
      return { i: m.i };
    },
    onDisconnect: (_s, close) => void disconnects.push(close),
    // No message rate: this client sends HIGH_WATER_MARK × 4 at once, over the default burst (200),
    // and what is checked here is the pause-and-resume of reading (the rate: test/hostile/websocket-floods).
  }), { maxPayload: 1024, fairness: { messagesPerSecond: null } });
  router = new WebSocketRouter()
    .on('/echo', createWebSocketUpgradeHandler(jsonWebSocket({ onMessage: (m) => m })))
    .on('/slow', slow);
  served = await serveRouter(router);
  base = served.base;
});
after(() => served.close());

function open(path: string): Promise<{ ws: WebSocket; texts: string[]; closed: Promise<number> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(base + path);
    const texts: string[] = [];
    ws.on('message', (d: Buffer) => texts.push(d.toString('utf8')));
    const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));
    ws.once('open', () => resolve({ ws, texts, closed }));
    ws.once('error', reject);
  });
}
async function until(check: () => boolean, what: string, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('when a message is nested deeper than MAX_JSON_DEPTH', () => {
  it('should treat it as invalid JSON without parsing it, and accept the limit itself', () => {
    assert.deepEqual(parseJsonMessage(nested(MAX_JSON_DEPTH + 1)), { ok: false, reply: INVALID_JSON_REPLY });
    assert.equal(parseJsonMessage(nested(MAX_JSON_DEPTH)).ok, true);
    // Brackets inside strings are text, not nesting.
    assert.equal(parseJsonMessage(JSON.stringify({ s: '['.repeat(500) })).ok, true);
  });
  it('should answer it with the invalid-JSON error over the wire and keep the connection', async () => {
    const c = await open('/echo');
    c.ws.send(nested(500));
    c.ws.send(nested(2));
    await until(() => c.texts.length === 2, 'two answers');
    assert.deepEqual(c.texts.map((t) => JSON.parse(t)), [INVALID_JSON_REPLY, [[]]]);
    c.ws.close();
  });
});

describe('when a client sends more than the route takes', () => {
  it('should close with 1009 for a message over maxPayload and still run onDisconnect', async () => {
    const before = disconnects.length;
    const c = await open('/slow');
    c.ws.send(JSON.stringify({ i: 0, pad: 'x'.repeat(2000) }));
    assert.equal(await c.closed, 1009);
    await until(() => disconnects.length === before + 1, 'onDisconnect');
    assert.equal(disconnects.at(-1)!.code, 1009);
  });
  it('should stop reading from a client that outpaces a slow handler, then answer every message in order', async () => {
    let release!: () => void;
    gate = new Promise((r) => (release = r));
    const c = await open('/slow');
    const total = HIGH_WATER_MARK * 4;
    for (let i = 0; i < total; i++) c.ws.send(JSON.stringify({ i }));
    const [serverSide] = [...slow.server.clients] as unknown as Array<{ _socket: { isPaused(): boolean } }>;
    await until(() => serverSide!._socket.isPaused(), 'the server to pause reading');
    release();
    await until(() => c.texts.length === total, `${total} replies`);
    assert.deepEqual(c.texts.map((t) => (JSON.parse(t) as { i: number }).i), Array.from({ length: total }, (_, i) => i));
    assert.equal(serverSide!._socket.isPaused(), false, 'reading resumed');
    c.ws.close();
  });
});

describe('when the options are wrong', () => {
  const refused = (options: unknown, pattern: RegExp) =>
    assert.throws(() => jsonWebSocket(options as never), (err: unknown) => err instanceof ConfigError && pattern.test(err.message));
  it('should throw ConfigError naming the option, when the factory runs', () => {
    refused(undefined, /Invalid JsonWebSocketOptions at JsonWebSocketOptions: expected an object/);
    refused({}, /JsonWebSocketOptions\.onMessage: expected a function/);
    refused({ onMessage: () => undefined, messageSchema: { type: 'not_a_real_type' } }, /JsonWebSocketOptions\.messageSchema: the schema does not compile/);
    refused({ onMessage: () => undefined, responseSchema: 'object' }, /JsonWebSocketOptions\.responseSchema: expected a JSON Schema object/);
    refused({ onMessage: () => undefined, onConnect: 'yes' }, /JsonWebSocketOptions\.onConnect: expected a function/);
    refused({ onMessage: () => undefined, logger: console.log }, /JsonWebSocketOptions\.logger: expected a logger/);
  });
  it('should name the key meant for a misspelt one', () => {
    refused({ onMessage: () => undefined, onMesage: () => undefined }, /Unknown key "onMesage" in JsonWebSocketOptions\. Did you mean "onMessage"\?/);
    refused({ onMessage: () => undefined, message_schema: {} }, /Unknown key "message_schema" in JsonWebSocketOptions\. Did you mean "messageSchema"\?/);
  });
  it('should accept null schemas as none', () => {
    assert.equal(typeof jsonWebSocket({ onMessage: () => undefined, messageSchema: null, responseSchema: null }), 'function');
  });
});
