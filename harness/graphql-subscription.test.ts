import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GraphQLInt, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { App } from '../lib/app/app.js';
import { graphqlSubscriptionSnapshot, GRAPHQL_TRANSPORT_WS } from './graphql-subscription.js';

const schema = new GraphQLSchema({
  query: new GraphQLObjectType({ name: 'Query', fields: { hello: { type: GraphQLString, resolve: () => 'world' } } }),
  subscription: new GraphQLObjectType({
    name: 'Subscription',
    fields: {
      count: {
        type: new GraphQLNonNull(GraphQLInt),
        args: { to: { type: new GraphQLNonNull(GraphQLInt) } },
        subscribe: async function* (_root: unknown, args: { to: number }) {
          for (let i = 1; i <= args.to; i++) yield { count: i };
        },
      },
      forever: {
        type: GraphQLString,
        subscribe: async function* () {
          // Endless. Each tick waits on a timer: graphql-ws pulls the next value as soon as it has sent
          // one, so an un-paced generator would run in microtasks forever and starve the event loop.
          for (;;) {
            yield { forever: 'tick' };
            await new Promise((r) => setTimeout(r, 5));
          }
        },
      },
    },
  }),
});

interface Started {
  url: string;
  close: () => Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `ws://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
}

function stop(server: Server, wss?: WebSocketServer): Promise<void> {
  for (const c of wss?.clients ?? []) c.terminate();
  wss?.close();
  server.closeAllConnections();
  return new Promise((r) => server.close(() => r()));
}

/** A conforming graphql-ws server. */
async function graphqlWsServer(): Promise<Started> {
  const server = createServer();
  const wss = new WebSocketServer({ server, path: '/graphql' });
  useServer({ schema }, wss);
  const url = await listen(server);
  return { url, close: () => stop(server, wss) };
}

/** A raw WebSocket server whose behaviour after the handshake the test chooses. */
async function misbehavingServer(onConnection: (ws: import('ws').WebSocket) => void): Promise<Started> {
  const server = createServer();
  const wss = new WebSocketServer({ server, handleProtocols: (p) => (p.has(GRAPHQL_TRANSPORT_WS) ? GRAPHQL_TRANSPORT_WS : false) });
  wss.on('connection', onConnection);
  const url = await listen(server);
  return { url, close: () => stop(server, wss) };
}

describe('graphqlSubscriptionSnapshot', () => {
  let good: Started;
  before(async () => {
    good = await graphqlWsServer();
  });
  after(() => good.close());

  describe('when the server follows graphql-transport-ws', () => {
    it('should record the ack, the first event and the complete frame', async () => {
      const snap = await graphqlSubscriptionSnapshot(good.url, { query: 'subscription ($to: Int!) { count(to: $to) }', variables: { to: 3 }, operationId: 'op-1', timeoutMs: 3000 });
      assert.deepEqual(snap, { operation_id: 'op-1', acknowledged: true, event: { data: { count: 1 } }, errors: [], complete_received: true });
    });

    it('should generate an operation id when none is given', async () => {
      const snap = await graphqlSubscriptionSnapshot(good.url, { query: 'subscription { count(to: 1) }', timeoutMs: 3000 });
      assert.match(snap.operation_id, /^[0-9a-f-]{36}$/);
    });

    it('should record GraphQL validation errors from an error frame', async () => {
      const snap = await graphqlSubscriptionSnapshot(good.url, { query: 'subscription { nope }', timeoutMs: 3000 });
      assert.equal(snap.acknowledged, true);
      assert.equal(snap.event, null);
      assert.equal(snap.complete_received, false);
      assert.equal(snap.errors.length, 1);
      assert.match((snap.errors[0] as { message: string }).message, /nope/);
    });

    it('should stop after the first event of an endless subscription when waitForComplete is false', async () => {
      const snap = await graphqlSubscriptionSnapshot(good.url, { query: 'subscription { forever }', waitForComplete: false, timeoutMs: 3000 });
      assert.deepEqual(snap.event, { data: { forever: 'tick' } });
      assert.deepEqual(snap.errors, []);
      assert.equal(snap.complete_received, false);
    });
  });

  describe('when the server misbehaves', () => {
    it('should record a refused upgrade with its status', async () => {
      const server = createServer((_req, res) => res.end());
      server.on('upgrade', (_req, socket) => socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'));
      const url = await listen(server);
      try {
        const snap = await graphqlSubscriptionSnapshot(url, { query: 'subscription { count(to: 1) }', timeoutMs: 3000 });
        assert.equal(snap.acknowledged, false);
        assert.equal(snap.errors.length, 1);
        assert.match((snap.errors[0] as { message: string }).message, /Upgrade refused with HTTP 401/);
      } finally {
        await stop(server);
      }
    });

    it('should record a timeout when the server never acknowledges', async () => {
      const s = await misbehavingServer(() => {});
      try {
        const snap = await graphqlSubscriptionSnapshot(s.url, { query: 'subscription { count(to: 1) }', timeoutMs: 200 });
        assert.equal(snap.acknowledged, false);
        assert.match((snap.errors[0] as { message: string }).message, /Timed out after 200 ms waiting for connection_ack/);
      } finally {
        await s.close();
      }
    });

    it('should record an early close with its code', async () => {
      const s = await misbehavingServer((ws) => ws.once('message', () => ws.close(4403, 'Forbidden')));
      try {
        const snap = await graphqlSubscriptionSnapshot(s.url, { query: 'subscription { count(to: 1) }', timeoutMs: 3000 });
        assert.equal(snap.acknowledged, false);
        assert.deepEqual(snap.errors, [{ message: 'Connection closed early with 4403: Forbidden', code: 4403 }]);
      } finally {
        await s.close();
      }
    });

    it('should record a frame that is not JSON', async () => {
      const s = await misbehavingServer((ws) => ws.once('message', () => ws.send('not json')));
      try {
        const snap = await graphqlSubscriptionSnapshot(s.url, { query: 'subscription { count(to: 1) }', timeoutMs: 3000 });
        assert.match((snap.errors[0] as { message: string }).message, /not a JSON message/);
      } finally {
        await s.close();
      }
    });

    it('should record a server that ignores the subprotocol', async () => {
      const server = createServer();
      const wss = new WebSocketServer({ server, handleProtocols: () => false });
      const url = await listen(server);
      try {
        const snap = await graphqlSubscriptionSnapshot(url, { query: 'subscription { count(to: 1) }', timeoutMs: 3000 });
        assert.equal(snap.acknowledged, false);
        assert.ok(snap.errors.length >= 1);
      } finally {
        await stop(server, wss);
      }
    });

    it('should record a connection refused', async () => {
      const server = createServer();
      const url = await listen(server);
      await stop(server);
      const snap = await graphqlSubscriptionSnapshot(url, { query: 'subscription { count(to: 1) }', timeoutMs: 3000 });
      assert.match((snap.errors[0] as { message: string }).message, /WebSocket error: .*ECONNREFUSED/);
    });
  });
});

describe('graphqlSubscriptionSnapshot against keel', () => {
  describe("when subscribing to an App's built-in full schema", () => {
    it('should record the first countdown event and the complete frame', async () => {
      const app = new App({ host: '127.0.0.1', port: 0, graceful_shutdown: false });
      app.registerGraphqlRoute('/graphql', 'POST', 'full', {});
      const handle = await app.listen();
      try {
        const url = `${handle.url.replace(/^http/, 'ws')}/graphql`;
        const snap = await graphqlSubscriptionSnapshot(url, { query: 'subscription ($n: Int!) { countdown(from: $n) }', variables: { n: 2 }, operationId: 'keel-1', timeoutMs: 3000 });
        assert.deepEqual(snap, { operation_id: 'keel-1', acknowledged: true, event: { data: { countdown: 2 } }, errors: [], complete_received: true });
      } finally {
        await handle.close();
      }
    });
  });
});
