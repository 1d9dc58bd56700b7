/**
 * Attack replays of issue 26 (floods that stalled the event loop for seconds), over real sockets, on
 * an App with the default per-socket fairness (ServerConfig `ws_*`, lib/ws/fairness.ts) and sliced
 * fan-out (lib/ws/fanout.ts):
 *
 * - one socket sending 200k small valid messages held a CPU 4–6 s and `/health` up to 5.6 s: now the
 *   201st message in a burst closes it with 1008 and `/health`, asked during the flood, is answered
 *   while the flood is still being sent; the 'error' and 'drop' actions refuse without closing;
 * - a client that stops reading a broadcast held its frames in memory: past 1 MiB queued it is closed
 *   (1013) while another client of the same topic keeps receiving every event;
 * - 20k GraphQL subscriptions + `addBook` stalled 7.0 s, closing 1,000 loaded subscriptions 4.3 s:
 *   with 10,000 subscriptions, `/health` runs while the event's frames are still being sent, and again
 *   while the subscriptions of 100 dropped sockets are still being released.
 *
 * Orderings are asserted (what the server had done when `/health` ran), never milliseconds; the
 * figures (`/health` p99 during each flood, from another process) come from `bench/floods.mjs`.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as turn } from 'node:timers/promises';
import WebSocket from 'ws';
import { App } from '../../lib/app/app.js';
import '../../lib/ws/index.js';
import '../../lib/graphql/index.js';
import { MemoryPubSub } from '../../lib/graphql/pubsub.js';
import { DEFAULT_WS_MESSAGE_BURST } from '../../lib/records/server.js';
import type { ServerHandle } from '../../lib/server/server.js';
import { connectGraphqlWs, eventually, sendFrame, type Frame } from '../helpers/graphql-ws-client.js';

const pubsub = new MemoryPubSub();
const books = () => pubsub.listenerCount('bookAdded');
let app: App;
let handle: ServerHandle;
let wsBase: string;
/** Messages the echo handler was given. */
let echoed = 0;
/** `next` frames the server has handed to its sockets (counted on ws's send, server side). */
let nextSent = 0;
/** What the server had done when the last `/health` ran. */
let atHealth = { nextSent: -1, books: -1 };
/** Messages the 'drop' route's handler saw before the client's close frame. */
const droppedRouteSeen: number[] = [];
/** Feed sessions that have ended, and how. */
const feedClosed: number[] = [];
const realSend = WebSocket.prototype.send;

before(async () => {
  // Count the server's `next` frames at the socket: ws is the library under keel, not keel itself.
  WebSocket.prototype.send = function countingSend(this: WebSocket & { _isServer?: boolean }, data: unknown, ...rest: unknown[]) {
    if (this._isServer && typeof data === 'string' && data.includes('"type":"next"')) nextSent++;
    return (realSend as (...a: unknown[]) => void).call(this, data, ...rest);
  } as WebSocket['send'];
  // The 10,000-subscription replay opens 100 sockets and 10,000 subscriptions from this one address: the
  // per-client budget (issue 35, client-budget.test.ts) is lifted so that it tests fan-out, not that budget.
  app = new App({ port: 0, host: '127.0.0.1', max_connections_per_client: 1000, ws_client_messages_per_second: null });
  app.get('/health', () => {
    atHealth = { nextSent, books: books() };
    return { status: 'ok' };
  });
  app.ws('/ws/echo', async (session) => {
    for await (const m of session) {
      if (m.type !== 'text') continue;
      echoed++;
      await session.send(m);
    }
  });
  const strict = { messagesPerSecond: 0.01, messageBurst: 20 };
  app.ws('/ws/echo-error', async (session) => {
    for await (const m of session) if (m.type === 'text') await session.send(m);
  }, { fairness: { ...strict, onRateExceeded: 'error' } });
  app.ws('/ws/echo-drop', async (session) => {
    let seen = 0;
    for await (const m of session) if (m.type === 'text') seen++;
    droppedRouteSeen.push(seen);
  }, { fairness: { ...strict, onRateExceeded: 'drop' } });
  app.ws('/ws/feed', async (session) => {
    session.subscribe('feed');
    for await (const _ of session); // eslint-disable-line no-empty
    feedClosed.push((await session.closed).code);
  });
  app.ws('/ws/news', async (session) => {
    session.subscribe('news');
    for await (const _ of session); // eslint-disable-line no-empty
  });
  app.ws('/ws/room', async (session) => {
    session.subscribe('room');
    for await (const m of session) if (m.type === 'text') await app.publish('room', m.data);
  });
  app.registerGraphqlRoute('/graphql', 'POST', 'full', {}, { pubsub });
  app.registerGraphqlRoute('/graphql-strict', 'POST', 'full', {}, { fairness: { messagesPerSecond: 0.01, messageBurst: 5, onRateExceeded: 'error' } });
  handle = await app.listen();
  wsBase = handle.url.replace('http', 'ws');
});
after(async () => {
  WebSocket.prototype.send = realSend;
  await handle.close();
});

function open(path: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${wsBase}${path}`);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}
/** `promise`, or a failure after `ms`: a regression fails the test instead of hanging it. */
function within<T>(promise: Promise<T>, what: string, ms = 15_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms); });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
function closeCode(ws: WebSocket): Promise<number> {
  return new Promise((r) => ws.once('close', (code) => r(code)));
}
async function health(): Promise<void> {
  const res = await fetch(`${handle.url}/health`, { signal: AbortSignal.timeout(10_000) });
  assert.equal(res.status, 200);
}

describe('when one socket floods a WebSocket route with small valid messages', () => {
  it(`should close it with 1008 after the burst (${DEFAULT_WS_MESSAGE_BURST}) and answer /health while the flood is still being sent`, async () => {
    const ws = await open('/ws/echo');
    const closed = closeCode(ws);
    let sent = 0;
    let sentAtHealth = -1;
    let healthy: Promise<void> | undefined;
    const total = 200_000;
    // The flood, 1,000 messages a turn: /health is asked once the first batch is out.
    while (sent < total && sentAtHealth < 0) {
      for (let i = 0; i < 1000; i++, sent++) ws.send('hi');
      healthy ??= health().then(() => { sentAtHealth = sent; });
      await turn();
    }
    await within(healthy!, '/health');
    assert.ok(sentAtHealth > 0 && sentAtHealth < total, `/health answered after ${sentAtHealth} of ${total} messages were sent`);
    assert.equal(await within(closed, 'the close'), 1008);
    // At most the burst, plus what the refill (100/s) allowed before the first refusal, reached the handler.
    assert.ok(echoed >= 1 && echoed <= DEFAULT_WS_MESSAGE_BURST + 100, `${echoed} messages handled`);
  });

  it("should answer each message over the rate with an error frame and keep the connection under 'error'", async () => {
    const ws = await open('/ws/echo-error');
    const frames: string[] = [];
    ws.on('message', (d: Buffer) => frames.push(d.toString()));
    for (let i = 0; i < 50; i++) ws.send(`m${i}`);
    await eventually(() => frames.length, (n) => n === 50, 10_000);
    const errors = frames.filter((f) => f.startsWith('{'));
    assert.deepEqual(frames.filter((f) => !f.startsWith('{')), Array.from({ length: 20 }, (_, i) => `m${i}`));
    assert.equal(errors.length, 30);
    assert.match((JSON.parse(errors[0]!) as { message: string }).message, /rate limit exceeded/i);
    assert.equal(ws.readyState, WebSocket.OPEN);
    const closed = closeCode(ws);
    ws.close(1000);
    assert.equal(await within(closed, 'the close'), 1000);
  });

  it("should drop the messages over the rate silently and keep the connection under 'drop'", async () => {
    const ws = await open('/ws/echo-drop');
    for (let i = 0; i < 50; i++) ws.send(`m${i}`);
    // The close frame follows the 50 on the same stream: the handler has seen all it will see.
    const closed = closeCode(ws);
    ws.close(1000);
    assert.equal(await within(closed, 'the close'), 1000);
    assert.deepEqual(await eventually(() => droppedRouteSeen, (s) => s.length === 1), [20]);
  });

  it("should refuse a GraphQL subscribe over the rate with an error for its id under 'error'", async () => {
    const ws = await connectGraphqlWs(`${wsBase}/graphql-strict`); // connection_init: 1 of the 5
    const errors: Frame[] = [];
    ws.on('message', (d: Buffer) => { const m = JSON.parse(d.toString()) as Frame; if (m.type === 'error') errors.push(m); });
    for (let i = 0; i < 10; i++) sendFrame(ws, { id: `s${i}`, type: 'subscribe', payload: { query: 'subscription { bookAdded { id } }' } });
    await eventually(() => errors.length, (n) => n === 6, 10_000);
    assert.deepEqual(errors.map((e) => e.id), ['s4', 's5', 's6', 's7', 's8', 's9']);
    assert.deepEqual(errors.map((e) => (e.payload as { extensions: { code: string } }[])[0]!.extensions.code), Array(6).fill('RATE_LIMIT_EXCEEDED'));
    ws.close(1000);
  });
});

describe('when one client of a broadcast stops reading', () => {
  it('should close it (1013) past 1 MiB queued while the other client receives every event', async () => {
    const slow = await open('/ws/feed');
    const reader = await open('/ws/feed');
    await eventually(() => app.pubsub.listenerCount('feed'), (n) => n === 2);
    (slow as unknown as { _socket: import('node:net').Socket })._socket.pause();
    let slowGot = 0;
    slow.on('message', () => slowGot++);
    const slowClosed = closeCode(slow);
    const got: number[] = [];
    reader.on('message', (d: Buffer) => got.push(Number(d.subarray(0, 4).toString())));
    const events = 400;
    const chunk = 'x'.repeat(64 * 1024);
    for (let i = 0; i < events; i++) {
      // A text payload whose first 4 bytes number it (ASCII digits keep it valid UTF-8).
      await app.publish('feed', String(i).padStart(4, '0') + chunk);
      await turn();
    }
    // The slow client's session ended on the server while the reader's is still open.
    assert.equal((await eventually(() => feedClosed, (c) => c.length === 1, 10_000)).length, 1);
    const all = await eventually(() => got.length, (n) => n === events, 20_000);
    assert.equal(all, events, 'the reading client got every event');
    assert.equal(reader.readyState, WebSocket.OPEN);
    (slow as unknown as { _socket: import('node:net').Socket })._socket.resume();
    assert.ok([1013, 1006].includes(await within(slowClosed, 'the slow client to be disconnected')), 'the slow client was disconnected');
    assert.ok(slowGot < events, `the slow client got ${slowGot} of ${events}`);
    reader.close(1000);
  });
});

describe('when many clients of a chat room publish a burst larger than a subscriber\'s queue (1,000 events)', () => {
  it('should deliver every event to every listener, holding the publishers back instead of closing the listeners', async () => {
    const listeners = await Promise.all(Array.from({ length: 20 }, () => open('/ws/room')));
    const publishers = await Promise.all(Array.from({ length: 10 }, () => open('/ws/room')));
    await eventually(() => app.pubsub.listenerCount('room'), (n) => n === 30);
    const got = listeners.map(() => 0);
    const closes: number[] = [];
    listeners.forEach((ws, i) => { ws.on('message', () => got[i]!++); ws.on('close', (c) => closes.push(c)); });
    // 10 × 150 = 1,500 events, each publisher within its burst (200).
    for (const ws of publishers) for (let i = 0; i < 150; i++) ws.send(`m${i}`);
    const total = publishers.length * 150;
    await eventually(() => Math.min(...got), (n) => n === total, 60_000);
    assert.deepEqual(got, Array(20).fill(total));
    assert.deepEqual(closes, []);
    for (const ws of [...listeners, ...publishers]) ws.close(1000);
  });
});

describe('when the server publishes more events at once than a subscriber may have queued (1,000)', () => {
  it('should close the subscriber with 1013 instead of leaving it open and deaf', async () => {
    const ws = await open('/ws/news');
    await eventually(() => app.pubsub.listenerCount('news'), (n) => n === 1);
    const closed = new Promise<[number, string]>((r) => ws.once('close', (code, reason) => r([code, reason.toString()])));
    // In one turn: the 1,001st event finds 1,000 queued and the pub/sub ends the subscription.
    for (let i = 0; i < 1500; i++) void app.publish('news', `e${i}`);
    const [code, reason] = await within(closed, 'the subscriber to be closed');
    assert.equal(code, 1013);
    assert.match(reason, /behind/);
  });
});

describe('when 10,000 GraphQL subscriptions get an event and their sockets then drop', () => {
  it('should run /health while the frames are still being sent, and while the subscriptions are still being released', async () => {
    const sockets = await Promise.all(Array.from({ length: 100 }, () => connectGraphqlWs(`${wsBase}/graphql`)));
    for (const [k, ws] of sockets.entries()) for (let i = 0; i < 100; i++) sendFrame(ws, { id: `b${k}-${i}`, type: 'subscribe', payload: { query: 'subscription { bookAdded { id title } }' } });
    assert.equal(await eventually(books, (n) => n === 10_000, 30_000), 10_000);
    await health();
    nextSent = 0;
    // /health is asked once the first frame has arrived at a client.
    const first = new Promise<void>((resolve) => sockets[0]!.once('message', () => resolve()));
    const mutation = fetch(`${handle.url}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'mutation { addBook(input: { title: "Kindred", authorId: "a2" }) { id } }' }),
    });
    await within(first, 'the first frame');
    await health();
    assert.ok(atHealth.nextSent < 10_000, `/health ran after ${atHealth.nextSent} of 10,000 frames were sent`);
    assert.equal((await mutation).status, 200);
    assert.equal(await eventually(() => nextSent, (n) => n === 10_000, 30_000), 10_000);
    // Teardown: every socket drops at once; /health runs before the last subscription is released.
    for (const ws of sockets) ws.terminate();
    await eventually(books, (n) => n < 10_000, 10_000);
    await health();
    assert.ok(atHealth.books > 0, `/health ran with ${atHealth.books} subscriptions still to release`);
    assert.equal(await eventually(books, (n) => n === 0, 30_000), 0);
  });
});
