/**
 * Attack replay (issue 44 #9): the server-wide queue of expensive work refused a legitimate client's trivial GraphQL
 * queries (32 concurrent `{ __typename }` from one client: 90 % 503, and another client's query with them). Now the
 * queue keeps per-client shares: when it is full, a client with less waiting than the client with most gets in and
 * that client's newest waiting operation is refused instead. Counted, never timed: every request reaches the server
 * in one turn of its event loop (keep-alive sockets warmed first), from two clients (X-Forwarded-For through a
 * trusted loopback proxy).
 */
import type { Socket } from 'node:net';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createApp } from '../../lib/index.js';
import { warmSocket } from '../helpers/raw-http.js';

const ATTACKER = '203.0.113.7';
const NEIGHBOUR = '198.51.100.1';

async function start() {
  const app = createApp({ port: 0, host: '127.0.0.1', trust_proxy: 'loopback', rate_limit: null, work_limits: { max_event_loop_delay_ms: 0 } }, (a) => {
    a.get('/health', () => ({ status: 'ok' }));
  }, { logger: pino({ level: 'silent' }) });
  app.registerGraphqlRoute('/graphql', 'POST', 'full', { depth_limit: 8, complexity_limit: 500 });
  return app.listen({ handleSignals: false });
}


/** One `{ __typename }` POST per socket, from `clients[i]`, all written in one turn; the statuses. */
function queries(sockets: Socket[], clients: string[]): Promise<number[]> {
  const answers = sockets.map((s) => new Promise<number>((resolve) => {
    let text = '';
    s.on('data', (c: Buffer) => (text += c.toString('latin1')));
    s.once('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1])));
  }));
  const body = JSON.stringify({ query: '{ __typename }' });
  sockets.forEach((s, i) => s.write(`POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Forwarded-For: ${clients[i]}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`));
  return Promise.all(answers);
}

describe('when one client fills the queue of expensive work', () => {
  it("should still run another client's trivial query, refusing the busy client's newest instead", async () => {
    const server = await start();
    try {
      // Warm-up: the GraphQL module loads on first use.
      assert.equal((await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' })).status, 200);
      const sockets = await Promise.all(Array.from({ length: 33 }, () => warmSocket(server.port)));
      const clients = [...Array.from({ length: 32 }, () => ATTACKER), NEIGHBOUR];
      const statuses = await queries(sockets, clients);
      assert.equal(statuses[32], 200, `the neighbour's query (the attacker's: ${statuses.slice(0, 32).join(',')})`);
      const refused = statuses.slice(0, 32).filter((s) => s === 503).length;
      assert.ok(refused >= 1, 'the attacker alone is over the queue (4 running + 8 waiting)');
      assert.equal(statuses.filter((s) => s !== 200 && s !== 503).length, 0, statuses.join(','));
    } finally {
      await server.close();
    }
  });
});
