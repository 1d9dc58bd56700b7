/**
 * Hostile replays (issue 35 item 2) for the protocols whose work is not queued: JSON-RPC batches and gRPC
 * calls. A client staying under the request rate (50/s) with expensive batches or calls was never refused:
 * the rate limit counts requests, not the CPU they take. Now their work is charged to the same per-client CPU
 * budget as AsyncAPI and GraphQL (a single JSON-RPC call is not: like a route, the request rate bounds it),
 * and the client is refused once it is spent, in its protocol's words (JSON-RPC: 429 and an error object
 * -32005; gRPC: RESOURCE_EXHAUSTED with grpc-retry-pushback-ms), while another client is still served; a late event loop sheds them (503 / -32002, UNAVAILABLE).
 *
 * CI size: budgets of 20 ms, methods that spin 5 ms. What is asserted is counted, never timed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { pino } from 'pino';
import { createApp, type App, type ServerHandle } from '../../lib/index.js';
import '../../lib/grpc/index.js';
import type { WorkGate } from '../../lib/server/cost.js';
import { GREETER_PROTO } from '../../lib/grpc/testkit.js';

const ATTACKER = '203.0.113.7';
const NEIGHBOUR = '198.51.100.1';
const SPIN_MS = 5;
const MESSAGE = Buffer.from([0, 0, 0, 0, 3, 0x0a, 0x01, 0x61]); // SayHello { name: "a" }, framed

/** Busy for `ms` of wall time: at least that much is charged, however slow the machine. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

async function start(workLimits: Record<string, unknown>, spinMs = SPIN_MS): Promise<{ app: App; server: ServerHandle }> {
  const app = createApp({
    port: 0, host: '127.0.0.1', trust_proxy: 'loopback', work_limits: workLimits, grpc: {},
    rate_limit: { per_second: 50, burst: 100 },
  }, (a) => {
    a.get('/health', () => ({ status: 'ok' }), { rate_limit: { enabled: false } });
  }, { logger: pino({ level: 'silent' }) });
  app.rpc('burn', () => {
    spin(spinMs);
    return 'burnt';
  });
  app.rpc('ping', () => 'pong');
  app.grpc(GREETER_PROTO, 'keel.examples.v1.Greeter', {
    SayHello({ name }: { name: string }) {
      spin(spinMs);
      return { message: `Hello, ${name}` };
    },
    async *SayHelloMany({ name, count }: { name: string; count: number }) {
      for (let i = 0; i < count; i++) {
        spin(spinMs);
        yield { message: `Hello, ${name} ${i}` };
      }
    },
  });
  const server = await app.listen({ handleSignals: false });
  return { app, server };
}

function batch(server: ServerHandle, from: string, method: string, n: number): Promise<Response> {
  const body = JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', method, id: i })));
  return fetch(`${server.url}/rpc`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': from }, body });
}

interface RpcRefusal { jsonrpc: string; id: unknown; error: { code: number; message: string; data: { reason: string; retry_after: number } } }

interface CallResult { status: string; message?: string; pushback?: string; bytes: number }

/** SayHelloMany { name: "a", count: 8 }, framed. */
const MANY = Buffer.from([0, 0, 0, 0, 5, 0x0a, 0x01, 0x61, 0x10, 0x08]);

/** One unary SayHello over raw HTTP/2 with `x-forwarded-for: from`; the status it ended with. */
function call(session: http2.ClientHttp2Session, from: string, method = 'SayHello', message = MESSAGE): Promise<CallResult> {
  return new Promise((resolve) => {
    const stream = session.request({ ':method': 'POST', ':path': `/keel.examples.v1.Greeter/${method}`, 'content-type': 'application/grpc', te: 'trailers', 'x-forwarded-for': from });
    const out: CallResult = { status: 'none', bytes: 0 };
    const take = (h: http2.IncomingHttpHeaders) => {
      if (h['grpc-status'] !== undefined) out.status = String(h['grpc-status']);
      if (h['grpc-message'] !== undefined) out.message = decodeURIComponent(String(h['grpc-message']));
      if (h['grpc-retry-pushback-ms'] !== undefined) out.pushback = String(h['grpc-retry-pushback-ms']);
    };
    stream.on('response', take);
    stream.on('trailers', take);
    stream.on('error', (e: NodeJS.ErrnoException) => (out.status = `error ${e.code}`));
    stream.on('data', (c: Buffer) => (out.bytes += c.length));
    stream.on('close', () => resolve(out));
    stream.end(message);
  });
}

describe('when one client sends expensive JSON-RPC batches under the request rate', () => {
  let server: ServerHandle;
  before(async () => {
    // 20 ms of CPU at once, 1 ms per second after: one batch of ten 5 ms calls spends it.
    ({ server } = await start({ cpu_ms_burst: 20, cpu_ms_per_second: 1, max_event_loop_delay_ms: 0 }));
  });
  after(() => server.close());

  it('should refuse it once its CPU budget is spent with 429, Retry-After and a JSON-RPC error object, while another client is served', async () => {
    const statuses: number[] = [];
    let refusal: { body: RpcRefusal; retryAfter: string | null; type: string | null } | undefined;
    // Sequential: ten batches, well under the 50/s request rate.
    for (let i = 0; i < 10; i++) {
      const res = await batch(server, ATTACKER, 'burn', 10);
      statuses.push(res.status);
      if (res.status === 429 && !refusal) refusal = { body: (await res.json()) as RpcRefusal, retryAfter: res.headers.get('retry-after'), type: res.headers.get('content-type') };
      else await res.arrayBuffer();
    }
    assert.equal(statuses[0], 200, 'the first batch is admitted (the bucket held something)');
    assert.deepEqual(statuses.slice(1), Array(9).fill(429), statuses.join(','));
    assert.ok(refusal);
    assert.match(refusal.type ?? '', /^application\/json/);
    assert.equal(refusal.body.jsonrpc, '2.0');
    assert.equal(refusal.body.id, null);
    assert.equal(refusal.body.error.code, -32005);
    assert.equal(refusal.body.error.message, 'Limit exceeded');
    assert.equal(refusal.body.error.data.reason, 'cpu_ms_per_second');
    assert.ok(Number(refusal.retryAfter) >= 1, `Retry-After ${refusal.retryAfter}`);
    assert.equal(refusal.body.error.data.retry_after, Number(refusal.retryAfter));
    // The budget is the client's: another address is served, and so are the attacker's cheap routes.
    const other = await batch(server, NEIGHBOUR, 'burn', 2);
    assert.equal(other.status, 200);
    assert.deepEqual(((await other.json()) as Array<{ result: unknown }>).map((r) => r.result), ['burnt', 'burnt']);
    assert.equal((await fetch(`${server.url}/health`, { headers: { 'X-Forwarded-For': ATTACKER } })).status, 200);
  });

  it('should not charge single calls (bounded by the request rate, as routes are), only batches', async () => {
    const from = '198.51.100.9';
    for (let i = 0; i < 10; i++) {
      const res = await fetch(`${server.url}/rpc`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': from }, body: JSON.stringify({ jsonrpc: '2.0', method: 'burn', id: i }) });
      assert.equal(res.status, 200, `single call ${i}: 10 × 5 ms, past the 20 ms budget had they been charged`);
      await res.arrayBuffer();
    }
    // Whitespace before the batch's '[' does not hide it.
    const first = await fetch(`${server.url}/rpc`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': from }, body: ` \n[${Array.from({ length: 10 }, (_, i) => JSON.stringify({ jsonrpc: '2.0', method: 'burn', id: i })).join(',')}]` });
    assert.equal(first.status, 200);
    await first.arrayBuffer();
    assert.equal((await batch(server, from, 'ping', 1)).status, 429);
  });

  it('should refuse the same client\'s gRPC calls from the same budget (RESOURCE_EXHAUSTED, pushback) before its handler runs', async () => {
    const session = http2.connect(server.url);
    session.on('error', () => {});
    try {
      const refused = await call(session, ATTACKER);
      assert.equal(refused.status, '8');
      assert.match(refused.message ?? '', /CPU budget exceeded/);
      assert.ok(Number(refused.pushback) >= 1000, `pushback ${refused.pushback}`);
      // NEIGHBOUR spent its own budget above: a third client.
      assert.equal((await call(session, '198.51.100.2')).status, '0', 'another client is served on the same connection');
    } finally {
      session.close();
    }
  });
});

describe('when one client makes expensive gRPC calls under the request rate', () => {
  let server: ServerHandle;
  before(async () => {
    ({ server } = await start({ cpu_ms_burst: 20, cpu_ms_per_second: 1, max_event_loop_delay_ms: 0 }));
  });
  after(() => server.close());

  it('should refuse its calls with RESOURCE_EXHAUSTED once its budget is spent, while another client and health checks are served', async () => {
    const session = http2.connect(server.url);
    session.on('error', () => {});
    try {
      const results: CallResult[] = [];
      for (let i = 0; i < 12; i++) results.push(await call(session, ATTACKER));
      const ok = results.filter((r) => r.status === '0').length;
      // 20 ms at 5+ ms a call: at most 4 (on a fast machine) before the debt, then every call refused.
      assert.ok(ok >= 1 && ok <= 4, results.map((r) => r.status).join(','));
      assert.deepEqual(results.slice(ok).map((r) => r.status), Array(12 - ok).fill('8'));
      assert.ok(results.slice(ok).every((r) => Number(r.pushback) >= 1000), 'a retry hint on every refusal');
      assert.equal((await call(session, NEIGHBOUR)).status, '0');
      // The JSON-RPC endpoint shares the budget: the attacker's batch is refused too.
      assert.equal((await batch(server, ATTACKER, 'ping', 1)).status, 429);
      const health = await new Promise<string>((resolve) => {
        const s = session.request({ ':method': 'POST', ':path': '/grpc.health.v1.Health/Check', 'content-type': 'application/grpc', te: 'trailers', 'x-forwarded-for': ATTACKER });
        let status = 'none';
        s.on('response', (h) => { if (h['grpc-status'] !== undefined) status = String(h['grpc-status']); });
        s.on('trailers', (h) => { if (h['grpc-status'] !== undefined) status = String(h['grpc-status']); });
        s.on('data', () => {});
        s.on('error', () => {});
        s.on('close', () => resolve(status));
        s.end(Buffer.from([0, 0, 0, 0, 0]));
      });
      assert.equal(health, '0', 'health checks are neither refused nor charged');
    } finally {
      session.close();
    }
  });
});

describe('when one client\'s server-streaming calls produce expensive messages', () => {
  let server: ServerHandle;
  before(async () => {
    ({ server } = await start({ cpu_ms_burst: 20, cpu_ms_per_second: 1, max_event_loop_delay_ms: 0 }));
  });
  after(() => server.close());

  it('should charge each message the generator produces, so the next call is refused after one stream of 8 × 5 ms', async () => {
    const session = http2.connect(server.url);
    session.on('error', () => {});
    try {
      // The handler itself returns at once (a generator): what costs is each message it yields.
      const first = await call(session, ATTACKER, 'SayHelloMany', MANY);
      assert.equal(first.status, '0');
      assert.ok(first.bytes > 8 * 10, `8 messages streamed, ${first.bytes} bytes`);
      const second = await call(session, ATTACKER, 'SayHelloMany', MANY);
      assert.equal(second.status, '8', 'the stream\'s 40 ms were charged');
      assert.equal(second.bytes, 0);
      assert.equal((await call(session, NEIGHBOUR, 'SayHelloMany', MANY)).status, '0');
    } finally {
      session.close();
    }
  });
});

describe('when JSON-RPC work itself keeps the event loop late (overload shedding)', () => {
  let server: ServerHandle;
  let app: App;
  before(async () => {
    // No per-client budget: only shedding. One batch of 8 × 150 ms holds the loop 1.2 s, well past 30 ms.
    ({ app, server } = await start({ cpu_ms_per_second: null, max_event_loop_delay_ms: 30, sample_interval_ms: 1000 }, 150));
  });
  after(() => server.close());

  it('should shed new JSON-RPC and gRPC work with 503 / -32002 and UNAVAILABLE while /health answers, then admit it again', async () => {
    const gate = (app.extensions.get('keel:work-gate') as { gate: WorkGate }).gate;
    assert.equal((await batch(server, NEIGHBOUR, 'ping', 1)).status, 200, 'starts the sampler');
    assert.equal((await batch(server, ATTACKER, 'burn', 8)).status, 200);
    // The window that held the batch is measured by the sampler's next turn (bounded wait).
    for (let i = 0; i < 100 && !gate.monitor.sample.overloaded; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(gate.monitor.sample.overloaded, JSON.stringify(gate.monitor.sample));
    const shed = await batch(server, NEIGHBOUR, 'ping', 1);
    assert.equal(shed.status, 503);
    assert.equal(shed.headers.get('retry-after'), '1');
    const body = (await shed.json()) as RpcRefusal;
    assert.equal(body.error.code, -32002);
    assert.equal(body.error.data.reason, 'overloaded');
    const session = http2.connect(server.url);
    session.on('error', () => {});
    try {
      if (gate.monitor.sample.overloaded) {
        const refused = await call(session, NEIGHBOUR);
        assert.equal(refused.status, '14', 'UNAVAILABLE');
        assert.equal(refused.pushback, '1000');
      }
      assert.equal((await fetch(`${server.url}/health`)).status, 200, 'cheap routes are never shed');
      // Quiet again: bounded wait (at most 20 windows).
      for (let i = 0; i < 100 && gate.monitor.sample.overloaded; i++) await new Promise((r) => setTimeout(r, 200));
      assert.equal(gate.monitor.sample.overloaded, false);
      assert.equal((await batch(server, NEIGHBOUR, 'ping', 1)).status, 200);
    } finally {
      session.close();
    }
  });
});
