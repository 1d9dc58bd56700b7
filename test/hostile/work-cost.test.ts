/**
 * Hostile replays (issue 35, items 2, 3, 4 and 7): expensive requests that stay under the request
 * rate, and a GraphQL-over-WebSocket answer built by resolvers.
 *
 * - Near-budget AsyncAPI documents (1.8 KB, 71,666 nodes expanded, just inside `max_expanded_nodes`,
 *   ~70 ms of CPU each) sent faster than one client's CPU budget. Before: 45/s under the 50/s rate
 *   limit took 3 s of CPU per second; 360–450 of them took 22–31 s to answer, `/health` p99 13.8–15.5 s.
 * - A burst larger than the server's queue of expensive work; expensive work while the event loop is late.
 * - Stored GraphQL titles multiplied by aliases over WebSocket: before, 30 × 900 KB titles under 20
 *   aliases were serialised by graphql-ws into one string (RangeError: Invalid string length, RSS
 *   216 → 698–827 MB, a 4.1 s stall); 10 × 400 KB made an 82 MB frame.
 *
 * What is asserted is counted, never timed: which requests are refused and how (status, problem type,
 * Retry-After), that another client is served meanwhile, and the frame's size. The budgets are set
 * small (CI size) so that a few documents spend them however fast or slow the machine is.
 */
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createApp, type App, type ServerHandle } from '../../lib/index.js';
import { CpuLedger, WorkGate } from '../../lib/server/cost.js';
import { WorkLimitsConfig } from '../../lib/records/work.js';
import { connectGraphqlWs, sendFrame, waitForFrame, type Frame } from '../helpers/graphql-ws-client.js';
import { nearBudgetDocument } from '../helpers/budget-attacks.js';
import { DEFAULT_GRAPHQL_MAX_RESPONSE_BYTES } from '../../lib/records/graphql.js';
import { warmSocket } from '../helpers/raw-http.js';

const silent = { logger: pino({ level: 'silent' }) };
const ATTACKER = '203.0.113.7';
const NEIGHBOUR = '198.51.100.1';
const doc = nearBudgetDocument();
const smallDoc = JSON.stringify({ asyncapi: '3.0.0', info: { title: 'small', version: '1' } });

type Problem = { type: string; status: number; detail: string; reason?: string };

async function start(workLimits: Record<string, unknown> | null, extra: Record<string, unknown> = {}): Promise<{ app: App; server: ServerHandle }> {
  const app = createApp({
    port: 0, host: '127.0.0.1', asyncapi: { enabled: true }, trust_proxy: 'loopback', work_limits: workLimits,
    rate_limit: { per_second: 50, burst: 100 }, ...extra,
  }, (a) => {
    a.get('/health', () => ({ status: 'ok' }), { rate_limit: { enabled: false } });
  }, silent);
  app.registerGraphqlRoute('/graphql', 'POST', 'full', { depth_limit: 8, complexity_limit: 500 });
  const server = await app.listen({ handleSignals: false });
  return { app, server };
}

function parse(server: ServerHandle, from: string, body: string): Promise<Response> {
  return fetch(`${server.url}/asyncapi/parse`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': from }, body: `{"spec":${body}}` });
}

interface RawAnswer { status: number; retryAfter: string | undefined; body: string }

/**
 * `bodies.length` requests to /asyncapi/parse that reach the server in one turn of its event loop:
 * each on a keep-alive connection that already exchanged a `/health` (so the server has accepted it
 * and is reading), all written in one turn. A new connection is accepted in one turn and read in the
 * next, so fetch from this process would have them arrive one behind the other.
 */
async function burst(server: ServerHandle, bodies: string[]): Promise<RawAnswer[]> {
  return send(await warmSockets(server, bodies.length), bodies);
}

/** `n` keep-alive connections, each after one `/health` exchange, client i as 192.0.2.(i+1) behind the trusted proxy. */
function warmSockets(server: ServerHandle, n: number): Promise<Socket[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => warmSocket(server.port, `X-Forwarded-For: 192.0.2.${i + 1}\r\n`)));
}

/** One POST /asyncapi/parse per socket, all written in this turn; the answers. */
function send(sockets: Socket[], bodies: string[]): Promise<RawAnswer[]> {
  const answers = sockets.map((s) => new Promise<RawAnswer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    s.on('data', (c: Buffer) => chunks.push(c));
    s.once('error', reject);
    s.once('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), retryAfter: /\r\nretry-after: (\S+)/i.exec(head)?.[1], body });
    });
  }));
  sockets.forEach((s, i) => {
    const body = `{"spec":${bodies[i]}}`;
    s.write(`POST /asyncapi/parse HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Forwarded-For: 192.0.2.${i + 1}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  return Promise.all(answers);
}

describe('when the client CPU ledger charges work (GCRA in milliseconds)', () => {
  it('should admit while the bucket holds anything, then refuse until the debt is repaid', () => {
    let now = 0;
    const ledger = new CpuLedger(100, 200, { now: () => now });
    assert.equal(ledger.waitMs('a'), 0);
    ledger.charge('a', 150);
    assert.equal(ledger.waitMs('a'), 0, '50 ms left');
    ledger.charge('a', 250); // 200 ms in debt: 2 s at 100 ms per second, plus one interval
    assert.equal(ledger.waitMs('a'), 2010);
    assert.equal(ledger.waitMs('b'), 0, 'another client is not charged');
    now = 2010;
    assert.equal(ledger.waitMs('a'), 0);
    assert.ok(Math.abs(ledger.remainingMs('a') - 1) < 1e-9);
  });

  it('should reject a budget of 0 and name the record and key', () => {
    assert.throws(() => WorkLimitsConfig.parse({ cpu_ms_per_second: 0 }, 'WorkLimitsConfig'), /WorkLimitsConfig.*cpu_ms_per_second/s);
    assert.throws(() => WorkLimitsConfig.parse({ max_event_loop_utilization: 2 }, 'WorkLimitsConfig'), /max_event_loop_utilization/);
    assert.throws(() => createApp({ work_limits: { max_queued: -1 } }), /max_queued/);
  });
});

describe('when expensive operations wait in the queue (max_loop_share)', () => {
  const busy = (ms: number): void => {
    const until = performance.now() + ms;
    while (performance.now() < until);
  };

  for (const [share, expected] of [[0.5, ['first', 'timer', 'second']], [1, ['first', 'second', 'timer']]] as const) {
    it(`should ${share < 1 ? 'leave the loop the rest of its share before the next one starts' : 'start the next one on the next turn at share 1'}`, async () => {
      const gate = new WorkGate(WorkLimitsConfig.parse({ cpu_ms_per_second: null, max_concurrent: 1, max_loop_share: share, max_event_loop_delay_ms: 0 }, 'WorkLimitsConfig'));
      const order: string[] = [];
      await Promise.all([
        gate.run('a', () => {
          busy(50);
          order.push('first');
          // Due 10 ms after the first operation; at share 0.5 the second starts ≥ 50 ms after it.
          setTimeout(() => order.push('timer'), 10);
        }),
        gate.run('b', () => { order.push('second'); }),
        new Promise((r) => setTimeout(r, 200)),
      ]);
      assert.deepEqual(order, expected);
      gate.close();
    });
  }
});

describe('when one client sends near-budget AsyncAPI documents faster than its CPU budget', () => {
  let server: ServerHandle;
  before(async () => {
    // 20 ms of CPU at once, 1 ms per second after: one or two documents, then refusals.
    ({ server } = await start({ cpu_ms_burst: 20, cpu_ms_per_second: 1, max_event_loop_delay_ms: 0 }));
  });
  after(() => server.close());

  it('should be the attack: 1.8 KB, answered (inside max_expanded_nodes)', async () => {
    assert.ok(doc.length <= 1800);
    const res = await parse(server, '192.0.2.50', doc);
    assert.equal(res.status, 200);
    assert.ok((await res.text()).length > 300_000, 'the expansion is built: real work');
  });

  it('should refuse the rest with 429 cpu-budget-exceeded and Retry-After, while another client is served', async () => {
    const answers: number[] = [];
    let refusal: { problem: Problem; retryAfter: string | null } | undefined;
    // Sequential: every document is under the request rate limit (50/s, burst 100).
    for (let i = 0; i < 10; i++) {
      const res = await parse(server, ATTACKER, doc);
      answers.push(res.status);
      if (res.status === 429 && !refusal) refusal = { problem: (await res.json()) as Problem, retryAfter: res.headers.get('retry-after') };
      else await res.arrayBuffer();
    }
    const served = answers.filter((s) => s === 200).length;
    assert.ok(served >= 1 && served <= 3, `served ${served} of 10 on a 20 ms budget: ${answers.join(',')}`);
    assert.equal(answers.filter((s) => s === 429).length, 10 - served);
    assert.ok(refusal);
    assert.match(refusal.problem.type, /cpu-budget-exceeded$/);
    assert.equal(refusal.problem.reason, 'cpu_ms_per_second');
    assert.ok(Number(refusal.retryAfter) >= 1, `Retry-After ${refusal.retryAfter}`);
    // The budget is the client's: another address, and cheap routes, are still served.
    assert.equal((await parse(server, NEIGHBOUR, smallDoc)).status, 200);
    assert.equal((await fetch(`${server.url}/health`, { headers: { 'X-Forwarded-For': ATTACKER } })).status, 200);
  });

  it('should refuse GraphQL operations of the same client from the same budget (HTTP and WebSocket)', async () => {
    const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': ATTACKER }, body: '{"query":"{ hello }"}' });
    assert.equal(res.status, 429);
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
    const ws = await connectGraphqlWs(`${server.url.replace('http', 'ws')}/graphql`, { 'X-Forwarded-For': ATTACKER });
    try {
      sendFrame(ws, { id: 'q', type: 'subscribe', payload: { query: '{ hello }' } });
      const frame = await waitForFrame(ws, (m) => m.id === 'q');
      assert.equal(frame.type, 'error');
      assert.match(JSON.stringify(frame.payload), /CPU_BUDGET_EXCEEDED/);
    } finally {
      ws.terminate();
    }
  });
});

describe('when a burst of expensive requests is larger than the server-wide queue', () => {
  let server: ServerHandle;
  before(async () => {
    ({ server } = await start({ cpu_ms_per_second: null, max_concurrent: 1, max_queued: 2, max_event_loop_delay_ms: 0 }, { rate_limit: null }));
  });
  after(() => server.close());

  it('should refuse what does not fit with 503 overloaded (max_queued) and Retry-After, and answer the rest', async () => {
    const answers = (await burst(server, Array.from({ length: 12 }, () => doc)))
      .map((a) => ({ ...a, body: a.status === 503 ? (JSON.parse(a.body) as Problem) : undefined }));
    const refused = answers.filter((a) => a.status === 503);
    const served = answers.filter((a) => a.status === 200);
    assert.equal(refused.length + served.length, 12, answers.map((a) => a.status).join(','));
    assert.ok(served.length >= 3, `at least one running and two queued were served, got ${served.length}`);
    assert.ok(refused.length >= 1, 'twelve at once do not fit one slot and two places');
    assert.equal(refused[0]!.retryAfter, '1');
    assert.equal(refused[0]!.body!.reason, 'max_queued');
    assert.match(refused[0]!.body!.type, /overloaded$/);
  });
});

describe('when the event loop is late (mean delay over the threshold) and expensive work is waiting', () => {
  let server: ServerHandle;
  let app: App;
  before(async () => {
    ({ app, server } = await start({ cpu_ms_per_second: null, max_event_loop_delay_ms: 30, sample_interval_ms: 200 }, { rate_limit: null }));
  });
  after(() => server.close());

  it('should shed new expensive work with 503 overloaded while /health is answered, and admit it again once the loop recovers', async () => {
    const gate = (app.extensions.get('keel:work-gate') as { gate: WorkGate }).gate;
    // Warm up (loads the AsyncAPI module, starts the sampler).
    assert.equal((await parse(server, NEIGHBOUR, smallDoc)).status, 200);
    const sockets = await warmSockets(server, 4);
    // Block the loop in 150 ms slices for ~1 s: every 10 ms timer fires ~150 ms late.
    const until = performance.now() + 1000;
    while (performance.now() < until) {
      const slice = performance.now() + 150;
      while (performance.now() < slice);
      await new Promise((r) => setImmediate(r));
    }
    assert.ok(gate.monitor.sample.overloaded, `the sampler saw the late loop: ${JSON.stringify(gate.monitor.sample)}`);
    // Several at once: the first is queued, the rest find work waiting and are shed.
    const answers = await send(sockets, Array.from({ length: 4 }, () => smallDoc));
    const shed = answers.filter((a) => a.status === 503);
    assert.ok(shed.length >= 1, answers.map((a) => a.status).join(','));
    assert.equal(shed[0]!.retryAfter, '1');
    assert.equal((JSON.parse(shed[0]!.body) as Problem).reason, 'overloaded');
    assert.equal((await fetch(`${server.url}/health`)).status, 200, 'cheap routes are never shed');
    // Quiet again: the next windows are not late; bounded wait (at most 50 windows).
    for (let i = 0; i < 50 && gate.monitor.sample.overloaded; i++) await new Promise((r) => setTimeout(r, 200));
    assert.equal(gate.monitor.sample.overloaded, false);
    assert.equal((await parse(server, ATTACKER, smallDoc)).status, 200);
  });
});

describe('when stored GraphQL titles multiplied by aliases are asked for over WebSocket', () => {
  let server: ServerHandle;
  before(async () => {
    ({ server } = await start(null, { rate_limit: null }));
  });
  after(() => server.close());

  it('should answer data: null and RESPONSE_SIZE_LIMIT_EXCEEDED in a small frame, not a 40 MB one', async () => {
    const ws = await connectGraphqlWs(`${server.url.replace('http', 'ws')}/graphql`);
    try {
      // CI size: 8 stored 256 KB titles under 20 aliases, a 40 MB answer (issue 35: 30 × 900 KB, 540 MB).
      const title = 't'.repeat(256 * 1024);
      for (let i = 0; i < 8; i++) {
        sendFrame(ws, { id: `add${i}`, type: 'subscribe', payload: { query: 'mutation($t: String!) { addBook(input: { title: $t, authorId: "a1" }) { id } }', variables: { t: title } } });
        const added = await waitForFrame(ws, (m) => m.id === `add${i}` && m.type !== 'complete');
        assert.equal(added.type, 'next', JSON.stringify(added).slice(0, 200));
      }
      const rss = process.memoryUsage().rss;
      const query = `{ ${Array.from({ length: 20 }, (_, i) => `a${i}: books { title }`).join(' ')} }`;
      let bytes = 0;
      const sizes = (data: Buffer): void => { bytes = Math.max(bytes, data.length); };
      ws.on('message', sizes);
      sendFrame(ws, { id: 'big', type: 'subscribe', payload: { query } });
      const frame: Frame = await waitForFrame(ws, (m) => m.id === 'big' && m.type !== 'complete');
      ws.off('message', sizes);
      assert.equal(frame.type, 'next');
      const payload = frame.payload as { data: unknown; errors?: Array<{ extensions?: { code?: string; limit?: number } }> };
      assert.equal(payload.data, null);
      assert.equal(payload.errors?.[0]?.extensions?.code, 'RESPONSE_SIZE_LIMIT_EXCEEDED');
      assert.equal(payload.errors?.[0]?.extensions?.limit, DEFAULT_GRAPHQL_MAX_RESPONSE_BYTES);
      assert.ok(bytes < 2048, `a small frame, got ${bytes} bytes`);
      const growth = process.memoryUsage().rss - rss;
      assert.ok(growth < 50 * 1024 * 1024, `RSS grew ${(growth / 1048576).toFixed(1)} MB`);
      // The same route still answers within the limit (control).
      sendFrame(ws, { id: 'one', type: 'subscribe', payload: { query: '{ books(first: 1) { id } }' } });
      const one = await waitForFrame(ws, (m) => m.id === 'one' && m.type === 'next');
      assert.deepEqual(one.payload, { data: { books: [{ id: 'b1' }] } });
    } finally {
      ws.terminate();
    }
  });
});
