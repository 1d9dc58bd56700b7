/**
 * Operations over graphql-transport-ws draw from the server-level rate limit, as HTTP requests do: a
 * client cannot run unbounded queries through one upgraded socket (one token at the handshake only).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import WebSocket from 'ws';
import { App } from '../app/app.js';
import { HttpError } from '../http/errors.js';
import type { ServerHandle } from '../server/server.js';
import { graphqlRoute, type GraphqlRoute } from './route.js';

type Frame = { type: string; id?: string; payload?: unknown };

function connect(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'graphql-transport-ws');
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    ws.once('open', () => {
      ws.send(JSON.stringify({ type: 'connection_init' }));
      ws.once('message', (data: Buffer) => ((JSON.parse(data.toString()) as Frame).type === 'connection_ack' ? resolve(ws) : reject(new Error(data.toString()))));
    });
  });
}

/**
 * Operations waiting on each socket, by id. One `message` listener per socket hands each closing
 * frame to its operation: a listener per operation would put 50 on one socket for the bursts below,
 * past EventEmitter's leak warning (10), and each frame would be parsed 50 times.
 */
const waiting = new WeakMap<WebSocket, Map<string, (m: Frame) => void>>();

/** Run `{ hello }` as operation `id`; resolves with its `complete` or `error` frame. */
function operation(ws: WebSocket, id: string): Promise<Frame> {
  let pending = waiting.get(ws);
  if (!pending) {
    const byId = new Map<string, (m: Frame) => void>();
    ws.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString()) as Frame;
      const done = m.id !== undefined && (m.type === 'complete' || m.type === 'error') ? byId.get(m.id) : undefined;
      if (!done) return;
      byId.delete(m.id!);
      done(m);
    });
    waiting.set(ws, (pending = byId));
  }
  const byId = pending;
  return new Promise((resolve) => {
    byId.set(id, resolve);
    ws.send(JSON.stringify({ id, type: 'subscribe', payload: { query: '{ hello }' } }));
  });
}

describe('when the App has a server-level rate limit', () => {
  let handle: ServerHandle;
  before(async () => {
    // burst 3: the handshake takes one token, two operations the rest; refills at one per second.
    const app = new App({ port: 0, host: '127.0.0.1', rate_limit: { per_second: 1, burst: 3 } }, { logger: pino({ level: 'silent' }) });
    app.registerGraphqlRoute('/graphql', 'POST', 'full', {});
    handle = await (await app.ready()).listen({ handleSignals: false });
  });
  after(() => handle.close());

  it('should refuse the operation past the bucket with RATE_LIMIT_EXCEEDED and keep the connection open', async () => {
    const ws = await connect(`${handle.url.replace('http', 'ws')}/graphql`);
    try {
      assert.equal((await operation(ws, 'a')).type, 'complete');
      assert.equal((await operation(ws, 'b')).type, 'complete');
      const refused = await operation(ws, 'c');
      assert.equal(refused.type, 'error');
      const [error] = refused.payload as Array<{ message: string; extensions: { code: string; retryAfter: number } }>;
      assert.equal(error!.message, 'Rate limit exceeded: too many operations from this client');
      assert.equal(error!.extensions.code, 'RATE_LIMIT_EXCEEDED');
      assert.ok(error!.extensions.retryAfter >= 1, `retryAfter ${error!.extensions.retryAfter}`);
      // The same bucket as HTTP: a query over HTTP from this client is refused too.
      const http = await fetch(`${handle.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ hello }"}' });
      assert.equal(http.status, 429);
      assert.equal(ws.readyState, WebSocket.OPEN);
      await new Promise((r) => setTimeout(r, 1100));
      assert.equal((await operation(ws, 'd')).type, 'complete');
    } finally {
      ws.close(1000);
    }
  });

  it('should refuse a burst of operations sent at once beyond the bucket, each with its own error', async () => {
    await new Promise((r) => setTimeout(r, 3100)); // a full bucket again
    const ws = await connect(`${handle.url.replace('http', 'ws')}/graphql`);
    try {
      const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => operation(ws, `burst-${i}`)));
      const completed = outcomes.filter((f) => f.type === 'complete').length;
      assert.equal(completed, 2);
      assert.equal(outcomes.length - completed, 18);
      assert.equal(ws.readyState, WebSocket.OPEN);
    } finally {
      ws.close(1000);
    }
  });
});

describe('when an App route brings its own operationGuard', () => {
  it('should run it after the server-level rate limit, which still applies', async () => {
    const seen: string[] = [];
    const app = new App({ port: 0, host: '127.0.0.1', rate_limit: { per_second: 1, burst: 2 } }, { logger: pino({ level: 'silent' }) });
    app.registerGraphqlRoute('/graphql', 'POST', 'full', {}, { operationGuard: (req: { url?: string }) => void seen.push(req.url ?? '') });
    const handle = await (await app.ready()).listen({ handleSignals: false });
    const ws = await connect(`${handle.url.replace('http', 'ws')}/graphql`);
    try {
      assert.equal((await operation(ws, 'a')).type, 'complete');
      assert.equal((await operation(ws, 'b')).type, 'error');
      // The refused operation never reached the route's guard.
      assert.deepEqual(seen, ['/graphql']);
    } finally {
      ws.close(1000);
      await handle.close();
    }
  });
});

describe('when the App has no rate limit', () => {
  it('should run every operation', async () => {
    const app = new App({ port: 0, host: '127.0.0.1' }, { logger: pino({ level: 'silent' }) });
    app.registerGraphqlRoute('/graphql', 'POST', 'full', {});
    const handle = await (await app.ready()).listen({ handleSignals: false });
    const ws = await connect(`${handle.url.replace('http', 'ws')}/graphql`);
    try {
      const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => operation(ws, `op-${i}`)));
      assert.deepEqual(new Set(outcomes.map((f) => f.type)), new Set(['complete']));
    } finally {
      ws.close(1000);
      await handle.close();
    }
  });
});

describe('when a route is built with its own operationGuard', () => {
  let server: Server;
  let route: GraphqlRoute;
  let base: string;
  let answer: () => void;
  before(async () => {
    route = graphqlRoute('/graphql', 'POST', 'full', {}, { operationGuard: () => answer() });
    server = createServer((req, res) => void route.handler(req, res));
    server.on('upgrade', (req, socket, head) => route.upgrade(req, socket, head));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  });
  after(async () => {
    await route.close();
    await new Promise((r) => server.close(r));
  });

  it('should answer a refusal with OPERATION_REFUSED and its status', async () => {
    answer = () => {
      throw new HttpError(403, 'not for you');
    };
    const ws = await connect(base);
    const f = await operation(ws, 'x');
    ws.close(1000);
    assert.equal(f.type, 'error');
    assert.deepEqual(f.payload, [{ message: 'Operation refused', extensions: { code: 'OPERATION_REFUSED', status: 403 } }]);
  });

  it('should answer a failing guard without saying what failed', async () => {
    answer = () => {
      throw new Error('database password is hunter2');
    };
    const ws = await connect(base);
    const f = await operation(ws, 'y');
    ws.close(1000);
    assert.deepEqual(f.payload, [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }]);
  });

  it('should run the operation when the guard passes', async () => {
    answer = () => undefined;
    const ws = await connect(base);
    const f = await operation(ws, 'z');
    ws.close(1000);
    assert.equal(f.type, 'complete');
  });
});
