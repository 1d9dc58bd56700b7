import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serveRouter, type ServedRouter } from '../../test/helpers/ws-router.js';
import WebSocket from 'ws';
import { App } from '../app/app.js';
import type { ServerHandle } from '../server/server.js';
import { BINARY_NOT_SUPPORTED_REPLY, FORBIDDEN_KEY_REPLY, INVALID_JSON_REPLY, jsonWebSocket, MESSAGE_VALIDATION_FAILED_REPLY, type JsonWebSocketClose } from './json.js';
import { createWebSocketUpgradeHandler, WebSocketRouter } from './upgrade.js';

type Frame = { binary: boolean; data: Buffer };
/** A client whose frames queue up until read, so none is missed between awaits. */
interface Client {
  ws: WebSocket;
  next(timeoutMs?: number): Promise<Frame | 'timeout'>;
  json(): Promise<unknown>;
  closed: Promise<{ code: number; reason: string }>;
}
function connect(url: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const frames: Frame[] = [];
    let wake: (() => void) | undefined;
    ws.on('message', (data: Buffer, binary) => { frames.push({ binary, data }); wake?.(); });
    const closed = new Promise<{ code: number; reason: string }>((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString() })));
    const next = async (timeoutMs = 2000): Promise<Frame | 'timeout'> => {
      const deadline = Date.now() + timeoutMs;
      while (!frames.length && Date.now() < deadline) await new Promise<void>((r) => { wake = r; setTimeout(r, deadline - Date.now()); });
      return frames.shift() ?? 'timeout';
    };
    const json = async () => {
      const f = await next();
      assert.notEqual(f, 'timeout', 'a frame should arrive');
      assert.equal((f as Frame).binary, false, 'a text frame');
      return JSON.parse((f as Frame).data.toString('utf8'));
    };
    ws.once('open', () => resolve({ ws, next, json, closed }));
    ws.once('error', reject);
  });
}

const disconnects: JsonWebSocketClose[] = [];
const connects: string[] = [];
const handled: unknown[] = [];
const logged: string[] = [];
const logger = { warn: (_o: object, msg: string) => void logged.push(msg), error: (_o: object, msg: string) => void logged.push(msg) };
let served: ServedRouter;
let router: WebSocketRouter;
let base: string;

before(async () => {
  router = new WebSocketRouter()
    .on('/echo', createWebSocketUpgradeHandler(jsonWebSocket({
      onMessage: (m: { silent?: boolean; fail?: boolean }) => {
        handled.push(m);
        if (m.fail) throw new Error('secret detail');
        return m.silent ? undefined : m;
      },
      onConnect: (s) => void connects.push(s.request.url ?? ''),
      onDisconnect: (_s, close) => void disconnects.push(close),
      logger,
    })))
    .on('/validated', createWebSocketUpgradeHandler(jsonWebSocket({
      messageSchema: { type: 'object', required: ['type', 'channel'], additionalProperties: false, properties: { type: { type: 'string' }, channel: { type: 'string' } } },
      responseSchema: { type: 'object', required: ['ok'], properties: { ok: { const: true } } },
      onMessage: (m: { type: string; channel: string }) => (m.channel === 'bad-reply' ? { ok: false } : { ok: true, channel: m.channel }),
      logger,
    })))
    .on('/bytes', createWebSocketUpgradeHandler(jsonWebSocket({ onMessage: () => undefined, onBinary: (data) => data.subarray().reverse() })))
    .on('/bad-connect', createWebSocketUpgradeHandler(jsonWebSocket({
      onMessage: (m) => m,
      onConnect: () => { throw new Error('no database'); },
      onDisconnect: (_s, close) => void disconnects.push(close),
      logger,
    })));
  served = await serveRouter(router);
  base = served.base;
});
after(() => served.close());

describe('when a client sends JSON messages', () => {
  it('should send the handler\'s reply as a JSON text frame', async () => {
    const c = await connect(`${base}/echo`);
    c.ws.send(JSON.stringify({ type: 'greeting', text: 'hello', n: [1, 2.5, null] }));
    assert.deepEqual(await c.json(), { type: 'greeting', text: 'hello', n: [1, 2.5, null] });
    c.ws.close(1000);
    await c.closed;
  });
  it('should send nothing when the handler returns undefined', async () => {
    const c = await connect(`${base}/echo`);
    c.ws.send(JSON.stringify({ silent: true, n: 1 }));
    c.ws.send(JSON.stringify({ n: 2 }));
    assert.deepEqual(await c.json(), { n: 2 }, 'the first frame is the reply to the second message');
    assert.equal(await c.next(100), 'timeout');
    c.ws.close();
  });
  it('should answer a text frame that is not JSON with the reference\'s error and go on', async () => {
    const c = await connect(`${base}/echo`);
    c.ws.send('this is not valid json {');
    assert.deepEqual(await c.json(), { type: 'error', message: 'Invalid JSON' });
    assert.deepEqual(INVALID_JSON_REPLY, { type: 'error', message: 'Invalid JSON' });
    c.ws.send('{"still":"open"}');
    assert.deepEqual(await c.json(), { still: 'open' });
    c.ws.close();
  });
  it('should refuse a __proto__ key as JSON bodies are refused, without calling the handler', async () => {
    const c = await connect(`${base}/echo`);
    const before = handled.length;
    c.ws.send('{"a":{"__proto__":{"admin":true}}}');
    assert.deepEqual(await c.json(), FORBIDDEN_KEY_REPLY);
    assert.equal(handled.length, before);
    c.ws.close();
  });
});

describe('when a route has schemas', () => {
  it('should answer a message failing messageSchema with the reference\'s error, not call the handler, and go on', async () => {
    const c = await connect(`${base}/validated`);
    c.ws.send(JSON.stringify({ wrong_field: 'value' }));
    assert.deepEqual(await c.json(), { error: 'Message validation failed' });
    assert.deepEqual(MESSAGE_VALIDATION_FAILED_REPLY, { error: 'Message validation failed' });
    c.ws.send(JSON.stringify({ type: 'subscribe', channel: 'chat' }));
    assert.deepEqual(await c.json(), { ok: true, channel: 'chat' });
    c.ws.close();
  });
  it('should drop a reply failing responseSchema, log it, and go on', async () => {
    const c = await connect(`${base}/validated`);
    const before = logged.length;
    c.ws.send(JSON.stringify({ type: 'subscribe', channel: 'bad-reply' }));
    c.ws.send(JSON.stringify({ type: 'subscribe', channel: 'good' }));
    assert.deepEqual(await c.json(), { ok: true, channel: 'good' }, 'the dropped reply never arrives');
    assert.match(logged.slice(before).join('\n'), /reply dropped: it does not match responseSchema/);
    c.ws.close();
  });
});

describe('when the connection opens and ends', () => {
  const lastDisconnect = async (count: number) => {
    for (let i = 0; i < 100 && disconnects.length < count; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(disconnects.length, count, 'onDisconnect ran once');
    return disconnects.at(-1)!;
  };
  it('should run onConnect before the first message and onDisconnect with the client\'s close code', async () => {
    const before = disconnects.length;
    const c = await connect(`${base}/echo?who=a`);
    c.ws.send('{"n":1}');
    await c.json();
    assert.equal(connects.at(-1), '/echo?who=a');
    c.ws.close(4000, 'bye');
    await c.closed;
    assert.deepEqual(await lastDisconnect(before + 1), { code: 4000, reason: 'bye' });
  });
  it('should run onDisconnect with 1006 when the client drops without a close frame', async () => {
    const before = disconnects.length;
    const c = await connect(`${base}/echo`);
    c.ws.terminate();
    assert.equal((await lastDisconnect(before + 1)).code, 1006);
  });
  it('should close with 1011 without the error text when the handler throws, log it, and run onDisconnect', async () => {
    const before = disconnects.length;
    const c = await connect(`${base}/echo`);
    c.ws.send('{"fail":true}');
    const { code, reason } = await c.closed;
    assert.equal(code, 1011);
    assert.doesNotMatch(reason, /secret/);
    assert.equal((await lastDisconnect(before + 1)).code, 1011);
    assert.match(logged.join('\n'), /handler failed; closing the connection with 1011/);
  });
});

describe('when onConnect throws', () => {
  it('should close with 1011 before reading any message, and still run onDisconnect', async () => {
    const before = disconnects.length;
    const c = await connect(`${base}/bad-connect`);
    assert.equal((await c.closed).code, 1011);
    for (let i = 0; i < 100 && disconnects.length === before; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(disconnects.at(-1)?.code, 1011);
  });
});

describe('when control and binary frames arrive', () => {
  it('should answer a ping with a pong carrying the same bytes', async () => {
    const c = await connect(`${base}/echo`);
    const pong = new Promise<Buffer>((r) => c.ws.once('pong', r));
    c.ws.ping(Buffer.from('heartbeat'));
    assert.equal((await pong).toString(), 'heartbeat');
    c.ws.close();
  });
  it('should answer a binary frame with an error when the route has no onBinary, and go on', async () => {
    const c = await connect(`${base}/echo`);
    c.ws.send(Buffer.from([1, 2, 3]));
    assert.deepEqual(await c.json(), BINARY_NOT_SUPPORTED_REPLY);
    c.ws.send('{"n":3}');
    assert.deepEqual(await c.json(), { n: 3 });
    c.ws.close();
  });
  it('should send onBinary\'s bytes back as a binary frame', async () => {
    const c = await connect(`${base}/bytes`);
    c.ws.send(Buffer.from([1, 2, 3]));
    const f = await c.next();
    assert.notEqual(f, 'timeout');
    assert.equal((f as Frame).binary, true);
    assert.deepEqual([...(f as Frame).data], [3, 2, 1]);
    c.ws.close();
  });
});

describe('when an App serves a jsonWebSocket route', () => {
  let handle: ServerHandle;
  before(async () => {
    const app = new App({ port: 0, host: '127.0.0.1' });
    app.ws('/json', jsonWebSocket({ onMessage: (m: { a: number }) => ({ doubled: m.a * 2 }) }));
    handle = await app.listen({ handleSignals: false });
  });
  after(() => handle.close());
  it('should answer through the App\'s upgrade path', async () => {
    const c = await connect(`${handle.url.replace('http', 'ws')}/json`);
    c.ws.send('{"a":21}');
    assert.deepEqual(await c.json(), { doubled: 42 });
    c.ws.close();
  });
});
