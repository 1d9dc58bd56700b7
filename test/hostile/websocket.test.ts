/**
 * Attack replays against WebSockets (issue 13) over real sockets, on an App with a plain WebSocket
 * route and a GraphQL route (graphql-transport-ws), behind server-level API key auth.
 *
 * - subscription floods: 5 sockets × 30,000 `bookAdded` subscriptions took the example server to
 *   4.2 GB and a crash; replayed here with 1,000 per socket (each socket keeps 100, refuses 900);
 * - completed or dropped subscriptions kept their memory until the next event: after completing or
 *   dropping 1,000 of them, the PubSub must hold no listener, with no event published;
 * - refused handshakes answered text/html: every refusal is problem+json with its real status;
 * - frame and protocol abuse (held before, kept held): oversize and non-UTF-8 messages, protocol
 *   violations of graphql-transport-ws.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { App } from '../../lib/app/app.js';
import '../../lib/ws/index.js';
import '../../lib/graphql/index.js';
import { MemoryPubSub } from '../../lib/graphql/pubsub.js';
import { DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION } from '../../lib/graphql/subscriptions.js';
import type { ServerHandle } from '../../lib/server/server.js';
import { connectGraphqlWs, eventually, sendFrame, waitForFrame, type Frame } from '../helpers/graphql-ws-client.js';
import { rawHttpExchange } from '../helpers/raw-http.js';

const KEY = { 'X-API-Key': 'k-1' };
const pubsub = new MemoryPubSub();
const listeners = () => pubsub.listenerCount('bookAdded');
let handle: ServerHandle;
let http: string;
let wsBase: string;

before(async () => {
  // A burst of 10,000 messages per socket: the per-socket cap on subscriptions is replayed here on its
  // own (under the default burst of 200 the flood is closed with 1008 first: websocket-floods.test.ts).
  const app = new App({ port: 0, host: '127.0.0.1', enable_request_id: true, api_key_auth: { keys: ['k-1'] }, ws_message_burst: 10_000 });
  app.get('/health', () => ({ status: 'ok' }));
  app.ws('/ws/echo', async (session) => {
    for await (const m of session) if (m.type === 'text' || m.type === 'binary') await session.send(m);
  });
  app.registerGraphqlRoute('/graphql', 'POST', 'full', { depth_limit: 8, complexity_limit: 500 }, { pubsub });
  handle = await app.listen();
  http = handle.url;
  wsBase = handle.url.replace('http', 'ws');
});
after(() => handle.close());

async function healthy(): Promise<void> {
  const res = await fetch(`${http}/health`, { headers: KEY, signal: AbortSignal.timeout(2000) });
  assert.equal(res.status, 200);
}
function subscribeBooks(ws: WebSocket, id: string): void {
  sendFrame(ws, { id, type: 'subscribe', payload: { query: 'subscription { bookAdded { id title } }' } });
}

describe('when sockets flood the server with subscriptions', () => {
  it(`should keep ${DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION} per socket and refuse the rest with SUBSCRIPTION_LIMIT_EXCEEDED`, async () => {
    const sockets = await Promise.all(Array.from({ length: 5 }, () => connectGraphqlWs(`${wsBase}/graphql`, KEY)));
    const refusals = sockets.map(() => 0);
    const codes = new Set<unknown>();
    sockets.forEach((ws, k) => ws.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString()) as Frame;
      if (m.type !== 'error') return;
      refusals[k]!++;
      for (const e of m.payload as { extensions?: { code?: unknown } }[]) codes.add(e.extensions?.code);
    }));
    for (const [k, ws] of sockets.entries()) for (let i = 0; i < 1000; i++) subscribeBooks(ws, `s${k}-${i}`);
    assert.deepEqual(await eventually(() => [...refusals], (r) => r.every((n) => n === 900), 10_000), [900, 900, 900, 900, 900]);
    assert.deepEqual([...codes], ['SUBSCRIPTION_LIMIT_EXCEEDED']);
    assert.equal(await eventually(listeners, (n) => n === 500), 500);
    await healthy();
    // The kept subscriptions still work: one event reaches each of the 500.
    let delivered = 0;
    for (const ws of sockets) ws.on('message', (data: Buffer) => { if ((JSON.parse(data.toString()) as Frame).type === 'next') delivered++; });
    const res = await fetch(`${http}/graphql`, {
      method: 'POST', headers: { ...KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'mutation { addBook(input: { title: "Parable of the Sower", authorId: "a2" }) { id } }' }),
    });
    assert.equal(res.status, 200);
    assert.equal(await eventually(() => delivered, (n) => n === 500, 5000), 500);
    for (const ws of sockets) ws.terminate();
    assert.equal(await eventually(listeners, (n) => n === 0), 0);
  });
});

describe('when 1,000 subscriptions complete or their sockets drop before any event', () => {
  it('should release every PubSub listener without waiting for an event', async () => {
    const sockets = await Promise.all(Array.from({ length: 10 }, () => connectGraphqlWs(`${wsBase}/graphql`, KEY)));
    for (const [k, ws] of sockets.entries()) for (let i = 0; i < 100; i++) subscribeBooks(ws, `r${k}-${i}`);
    assert.equal(await eventually(listeners, (n) => n === 1000, 5000), 1000);
    // Half complete each subscription; half drop the TCP connection without a close frame.
    for (const [k, ws] of sockets.slice(0, 5).entries()) for (let i = 0; i < 100; i++) sendFrame(ws, { id: `r${k}-${i}`, type: 'complete' });
    assert.equal(await eventually(listeners, (n) => n === 500), 500);
    for (const ws of sockets.slice(5)) ws.terminate();
    assert.equal(await eventually(listeners, (n) => n === 0), 0);
    for (const ws of sockets.slice(0, 5)) ws.close(1000);
  });
});

/** Send a raw upgrade request and read the whole answer (the server closes after refusing). */
function rawUpgrade(path: string, { method = 'GET', key = true, extra = [] as string[], without = [] as string[] } = {}) {
  const { port } = new URL(http);
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: localhost', 'Connection: Upgrade', 'Upgrade: websocket',
    'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', ...(key ? ['X-API-Key: k-1'] : [])]
    .filter((l) => !without.some((w) => l.startsWith(w)));
  return rawHttpExchange(Number(port), [...lines, ...extra].join('\r\n') + '\r\n\r\n');
}

describe('when a WebSocket handshake is refused', () => {
  const refusals: [string, Parameters<typeof rawUpgrade>[1], number][] = [
    ['without the API key', { key: false }, 401],
    ['with POST', { method: 'POST' }, 405],
    ['with an unknown Sec-WebSocket-Version', { without: ['Sec-WebSocket-Version'], extra: ['Sec-WebSocket-Version: 7'] }, 400],
    ['without Sec-WebSocket-Key', { without: ['Sec-WebSocket-Key'] }, 400],
    ['with a malformed Sec-WebSocket-Protocol', { extra: ['Sec-WebSocket-Protocol: graphql-transport-ws,,x'] }, 400],
    ['with Upgrade: h2c', { without: ['Upgrade:'], extra: ['Upgrade: h2c'] }, 400],
  ];
  for (const path of ['/ws/echo', '/graphql']) {
    for (const [what, options, status] of refusals) {
      it(`should answer ${status} problem+json on ${path} ${what}`, async () => {
        const r = await rawUpgrade(path, options);
        assert.equal(r.status, status);
        assert.equal(r.headers['content-type'], 'application/problem+json');
        assert.equal(JSON.parse(r.body).status, status);
      });
    }
  }
  it('should answer 404 problem+json for a path without a WebSocket route', async () => {
    const r = await rawUpgrade('/ws/none');
    assert.equal(r.status, 404);
    assert.equal(r.headers['content-type'], 'application/problem+json');
    assert.match(JSON.parse(r.body).detail, /\/ws\/none/);
  });
});

function closeCode(ws: WebSocket): Promise<number> {
  return new Promise((r) => ws.once('close', (code) => r(code)));
}
function openEcho(): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${wsBase}/ws/echo`, { headers: KEY });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

describe('when a client abuses frames or the graphql-transport-ws protocol', () => {
  it('should close with 1009 for a message over 1 MiB', async () => {
    const ws = await openEcho();
    const closed = closeCode(ws);
    ws.send(Buffer.alloc(1024 * 1024 + 1));
    assert.equal(await closed, 1009);
  });
  it('should close with 1007 for a text message that is not UTF-8', async () => {
    const ws = await openEcho();
    const closed = closeCode(ws);
    // ws refuses to send invalid text itself: write the frame on the raw socket (FIN, text, masked, 2 bytes).
    (ws as unknown as { _socket: import('node:net').Socket })._socket.write(Buffer.from([0x81, 0x82, 0, 0, 0, 0, 0xc3, 0x28]));
    assert.equal(await closed, 1007);
  });
  for (const [what, frames, code] of [
    ['a second connection_init', [{ type: 'connection_init' }], 4429],
    ['a subscribe id already in use', [{ id: 'x', type: 'subscribe', payload: { query: 'subscription { bookAdded { id } }' } }, { id: 'x', type: 'subscribe', payload: { query: '{ hello }' } }], 4409],
    ['a message of an unknown type', [{ type: 'bogus' }], 4400],
  ] as const) {
    it(`should close with ${code} for ${what}`, async () => {
      const ws = await connectGraphqlWs(`${wsBase}/graphql`, KEY);
      const closed = closeCode(ws);
      for (const f of frames) sendFrame(ws, f as Frame);
      assert.equal(await closed, code);
    });
  }
  it('should close with 4401 for a subscribe before connection_init', async () => {
    const ws = new WebSocket(`${wsBase}/graphql`, 'graphql-transport-ws', { headers: KEY });
    await new Promise((r) => ws.once('open', r));
    const closed = closeCode(ws);
    sendFrame(ws, { id: 'early', type: 'subscribe', payload: { query: '{ hello }' } });
    assert.equal(await closed, 4401);
  });
  it('should still answer after all of the above', async () => {
    await healthy();
    const ws = await connectGraphqlWs(`${wsBase}/graphql`, KEY);
    sendFrame(ws, { id: 'q', type: 'subscribe', payload: { query: '{ hello }' } });
    assert.deepEqual((await waitForFrame(ws, (m) => m.id === 'q' && m.type === 'next')).payload, { data: { hello: 'Hello, World!' } });
    ws.close(1000);
  });
});
