import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { graphqlSubscriptionSnapshot } from '../../harness/graphql-subscription.js';
import { MemoryPubSub } from './pubsub.js';
import { graphqlRoute, graphqlSdlRoute, type GraphqlRoute } from './route.js';

let server: Server;
let routes: GraphqlRoute[];
let base: string;
/** The /limited route's PubSub: its listener count is the number of open bookAdded subscriptions. */
const pubsub = new MemoryPubSub();
const LIMIT = 5;

before(async () => {
  const full = graphqlRoute('/graphql', 'POST', 'full', { depth_limit: 3, introspection_enabled: false }, { cors: { allowed_origins: ['https://app.example'] } });
  const sdl = graphqlSdlRoute('/sdl', 'POST', 'type Query { a: Int } type Subscription { news: News! } type News { title: String! }',
    { a: 1, news: { title: 'static headline' } }, { introspection_enabled: true });
  const limited = graphqlRoute('/limited', 'POST', 'full', {}, { pubsub, maxSubscriptionsPerConnection: LIMIT });
  routes = [full, sdl, limited];
  const pick = (url: string) => (url.startsWith('/sdl') ? sdl : url.startsWith('/limited') ? limited : full);
  server = createServer((req, res) => void pick(req.url!).handler(req, res));
  server.on('upgrade', (req, socket, head) => pick(req.url!).upgrade(req, socket, head));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  await Promise.all(routes.map((r) => r.close()));
  await new Promise((r) => server.close(r));
});

describe('when subscribing to the full schema', () => {
  it('should acknowledge, deliver next events and complete', async () => {
    const snap = await graphqlSubscriptionSnapshot(`${base}/graphql`, { query: 'subscription { countdown(from: 2) }', operationId: 'op-1' });
    assert.deepEqual(snap, { operation_id: 'op-1', acknowledged: true, event: { data: { countdown: 2 } }, errors: [], complete_received: true });
  });
  it('should deliver every event in order', async () => {
    const events = await collect(`${base}/graphql`, 'subscription { countdown(from: 3) }');
    assert.deepEqual(events.next, [3, 2, 1, 0].map((n) => ({ data: { countdown: n } })));
    assert.equal(events.completed, true);
  });
  it('should push a bookAdded event when a mutation runs over HTTP', async () => {
    const ws = await connect(`${base}/graphql`);
    send(ws, { id: 's1', type: 'subscribe', payload: { query: 'subscription { bookAdded { title author { name } } }' } });
    let received: Frame | undefined;
    void waitFor(ws, (m) => m.type === 'next' && m.id === 's1').then((m) => (received = m));
    // A query on the same socket completes after the subscribe message was taken in (messages are
    // handled in order); mutations then repeat until the event arrives, so no timing is assumed.
    send(ws, { id: 'q1', type: 'subscribe', payload: { query: '{ hello }' } });
    await waitFor(ws, (m) => m.type === 'complete' && m.id === 'q1');
    const port = (server.address() as AddressInfo).port;
    for (let i = 0; i < 20 && !received; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'mutation { addBook(input: { title: "Dawn", authorId: "a2" }) { id } }' }),
      });
      assert.equal(res.status, 200);
    }
    assert.deepEqual(received?.payload, { data: { bookAdded: { title: 'Dawn', author: { name: 'Octavia E. Butler' } } } });
    send(ws, { id: 's1', type: 'complete' });
    ws.close(1000);
  });
  it('should run queries over the socket too', async () => {
    const snap = await graphqlSubscriptionSnapshot(`${base}/graphql`, { query: '{ hello(name: "ws") }' });
    assert.deepEqual(snap.event, { data: { hello: 'Hello, ws!' } });
    assert.equal(snap.complete_received, true);
  });
});

describe('when a subscription is not valid', () => {
  it('should answer an error frame for a validation error', async () => {
    const snap = await graphqlSubscriptionSnapshot(`${base}/graphql`, { query: 'subscription { nope }' });
    assert.equal(snap.acknowledged, true);
    assert.equal(snap.event, null);
    assert.match(JSON.stringify(snap.errors), /Cannot query field \\"nope\\"/);
  });
  it('should enforce the depth limit on the socket', async () => {
    const snap = await graphqlSubscriptionSnapshot(`${base}/graphql`, { query: 'subscription { bookAdded { author { books { id } } } }' });
    assert.match(JSON.stringify(snap.errors), /DEPTH_LIMIT_EXCEEDED/);
  });
  it('should enforce disabled introspection on the socket', async () => {
    const snap = await graphqlSubscriptionSnapshot(`${base}/graphql`, { query: '{ __schema { types { name } } }' });
    assert.match(JSON.stringify(snap.errors), /INTROSPECTION_DISABLED/);
  });
  it('should not suggest field names in validation errors while introspection is disabled', async () => {
    const snap = await graphqlSubscriptionSnapshot(`${base}/graphql`, { query: 'subscription { bookAdde { id } }' });
    assert.deepEqual(snap.errors.map((e) => (e as { message: string }).message), ['Cannot query field "bookAdde" on type "Subscription".']);
  });
  it('should not suggest input field names in variable errors while introspection is disabled', async () => {
    const snap = await graphqlSubscriptionSnapshot(`${base}/graphql`, {
      query: 'mutation ($i: BookInput!) { addBook(input: $i) { id } }', variables: { i: { title: 'x', authorId: 'a1', titl: 'y' } },
    });
    const messages = JSON.stringify([snap.event, snap.errors]);
    assert.match(messages, /Field \\"titl\\" is not defined by type \\"BookInput\\"\./);
    assert.doesNotMatch(messages, /Did you mean/);
  });
  it('should close with 4406 when the client offers no graphql-transport-ws subprotocol', async () => {
    const ws = new WebSocket(`${base}/graphql`);
    const code = await new Promise<number>((r) => ws.once('close', (c) => r(c)));
    assert.equal(code, 4406);
  });
});

describe('when a browser from another origin connects', () => {
  it('should refuse the upgrade with 403', async () => {
    const snap = await graphqlSubscriptionSnapshot(`${base}/graphql`, { query: '{ hello }', headers: { Origin: 'https://evil.example' }, timeoutMs: 2000 });
    assert.equal(snap.acknowledged, false);
    assert.match(JSON.stringify(snap.errors), /403/);
  });
  it('should accept an allowed origin', async () => {
    const snap = await graphqlSubscriptionSnapshot(`${base}/graphql`, { query: '{ hello }', headers: { Origin: 'https://app.example' } });
    assert.deepEqual(snap.event, { data: { hello: 'Hello, World!' } });
  });
});

describe('when a subscription\'s variables are nested 10,000 deep', () => {
  // A bound, not a timing goal: without the check no error frame ever comes, and the test must fail, not hang.
  it('should refuse that operation with an error frame naming the JSON nesting limit (64), not subscribe', { timeout: 20_000 }, async () => {
    const ws = await connect(`${base}/limited`);
    const before = pubsub.listenerCount('bookAdded');
    const refused = waitFor(ws, (m) => m.id === 'deep');
    // Sent as text: JSON.stringify itself recurses, and overflows on 10,000 levels.
    ws.send(`{"id":"deep","type":"subscribe","payload":{"query":"subscription { bookAdded { id } }","variables":{"v":${'['.repeat(10_000)}${']'.repeat(10_000)}}}}`);
    const frame = await refused;
    assert.equal(frame.type, 'error');
    assert.deepEqual(frame.payload, [{ message: 'JSON nesting exceeds the limit of 64 levels', extensions: { code: 'BAD_REQUEST', limit: 64 } }]);
    assert.equal(pubsub.listenerCount('bookAdded'), before);
    ws.close();
  });
});

describe('when subscribing to an SDL route', () => {
  it('should emit its static data once, then complete', async () => {
    const events = await collect(`${base}/sdl`, 'subscription { news { title } }');
    assert.deepEqual(events.next, [{ data: { news: { title: 'static headline' } } }]);
    assert.equal(events.completed, true);
  });
});

/** Wait (at most ~2 s, polling) until `check()` holds; the last value is returned for the assertion. */
async function eventually<T>(read: () => T, check: (v: T) => boolean): Promise<T> {
  for (let i = 0; i < 200 && !check(read()); i++) await new Promise((r) => setTimeout(r, 10));
  return read();
}
function subscribeBooks(ws: WebSocket, id: string): void {
  send(ws, { id, type: 'subscribe', payload: { query: 'subscription { bookAdded { id } }' } });
}

describe('when a connection opens more subscriptions than maxSubscriptionsPerConnection', () => {
  it('should refuse the one over the limit with an error frame and keep the connection', async () => {
    const ws = await connect(`${base}/limited`);
    for (let i = 0; i < LIMIT; i++) subscribeBooks(ws, `s${i}`);
    assert.equal(await eventually(() => pubsub.listenerCount('bookAdded'), (n) => n === LIMIT), LIMIT);
    const refused = waitFor(ws, (m) => m.id === 'over');
    subscribeBooks(ws, 'over');
    const frame = await refused;
    assert.equal(frame.type, 'error');
    assert.deepEqual(frame.payload, [{
      message: `Too many operations on this connection: at most ${LIMIT} may be open at once`,
      extensions: { code: 'SUBSCRIPTION_LIMIT_EXCEEDED', limit: LIMIT },
    }]);
    assert.equal(pubsub.listenerCount('bookAdded'), LIMIT);
    // Completing one frees a place on the same connection.
    send(ws, { id: 's0', type: 'complete' });
    await eventually(() => pubsub.listenerCount('bookAdded'), (n) => n === LIMIT - 1);
    subscribeBooks(ws, 'again');
    assert.equal(await eventually(() => pubsub.listenerCount('bookAdded'), (n) => n === LIMIT), LIMIT);
    ws.close(1000);
    assert.equal(await eventually(() => pubsub.listenerCount('bookAdded'), (n) => n === 0), 0);
  });
  it('should count each connection on its own', async () => {
    const sockets = await Promise.all([connect(`${base}/limited`), connect(`${base}/limited`)]);
    for (const [k, ws] of sockets.entries()) for (let i = 0; i < LIMIT; i++) subscribeBooks(ws, `c${k}-${i}`);
    assert.equal(await eventually(() => pubsub.listenerCount('bookAdded'), (n) => n === 2 * LIMIT), 2 * LIMIT);
    for (const ws of sockets) ws.close(1000);
    assert.equal(await eventually(() => pubsub.listenerCount('bookAdded'), (n) => n === 0), 0);
  });
});

describe('when subscriptions complete or their socket drops before any event', () => {
  it('should release their listeners at once, not at the next event', async () => {
    const a = await connect(`${base}/limited`);
    const b = await connect(`${base}/limited`);
    for (let i = 0; i < LIMIT; i++) {
      subscribeBooks(a, `a${i}`);
      subscribeBooks(b, `b${i}`);
    }
    assert.equal(await eventually(() => pubsub.listenerCount('bookAdded'), (n) => n === 2 * LIMIT), 2 * LIMIT);
    for (let i = 0; i < LIMIT; i++) send(a, { id: `a${i}`, type: 'complete' });
    assert.equal(await eventually(() => pubsub.listenerCount('bookAdded'), (n) => n === LIMIT), LIMIT);
    b.terminate(); // TCP drop, no close frame
    assert.equal(await eventually(() => pubsub.listenerCount('bookAdded'), (n) => n === 0), 0);
    a.close(1000);
  });
});

// --- a minimal graphql-transport-ws client for multi-event checks
type Frame = { type: string; id?: string; payload?: unknown };
function connect(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'graphql-transport-ws');
    ws.once('error', reject);
    ws.once('open', () => {
      send(ws, { type: 'connection_init' });
      waitFor(ws, (m) => m.type === 'connection_ack').then(() => resolve(ws), reject);
    });
  });
}
function send(ws: WebSocket, frame: Frame): void {
  ws.send(JSON.stringify(frame));
}
function waitFor(ws: WebSocket, match: (m: Frame) => boolean): Promise<Frame> {
  return new Promise((resolve) => {
    const on = (data: Buffer) => {
      const m = JSON.parse(data.toString()) as Frame;
      if (match(m)) {
        ws.off('message', on);
        resolve(m);
      }
    };
    ws.on('message', on);
  });
}
async function collect(url: string, query: string): Promise<{ next: unknown[]; completed: boolean }> {
  const ws = await connect(url);
  const next: unknown[] = [];
  const done = new Promise<boolean>((resolve) => {
    ws.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString()) as Frame;
      if (m.type === 'next') next.push(m.payload);
      if (m.type === 'complete' || m.type === 'error') resolve(m.type === 'complete');
    });
  });
  send(ws, { id: 'c1', type: 'subscribe', payload: { query } });
  const completed = await done;
  ws.close(1000);
  return { next, completed };
}
