/**
 * Attack replay (issue 44 #3): HTTP/2 rapid reset (CVE-2023-44487) on the shared port. node's http2 client opens a
 * stream and resets it (RST_STREAM CANCEL), over and over. Before: nghttp2's own limit answered GOAWAY
 * INTERNAL_ERROR after ~1000 resets and node kept the connection open; 100 connections stalled `/health` 11.7 s.
 * Now keel's per-connection and per-client budgets (ServerConfig `h2_*`) answer GOAWAY ENHANCE_YOUR_CALM, close the
 * connection, refuse the client's next ones while its budget is spent, and serve every other client. The figures
 * (100 connections, /health p99, RSS) are measured by `npm run floods -- --only rapid-reset`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { Server } from 'node:http';
import { setImmediate as turn } from 'node:timers/promises';
import { App } from '../../lib/app/app.js';
import { ConfigError } from '../../lib/http/errors.js';
import '../../lib/grpc/index.js';
import type { GrpcAttachment } from '../../lib/grpc/index.js';
import { GREETER_PROTO } from '../../lib/grpc/testkit.js';
import type { ServerConfigInput } from '../../lib/records/server.js';
import { client, connections, get, until, type Client } from './h2c.js';

const CALM = http2.constants.NGHTTP2_ENHANCE_YOUR_CALM;

async function serve(config: ServerConfigInput = {}) {
  const app = new App({ host: '127.0.0.1', port: 0, grpc: {}, rate_limit: null, ...config });
  let hits = 0;
  app.get('/hello', () => (hits++, { hello: 'http' }));
  app.get('/slow', async () => {
    await new Promise((r) => setTimeout(r, 20));
    return { slow: true };
  });
  app.post('/echo', (d) => (hits++, { got: d.body ?? null }));
  // A node-level handler that reads its body the node way: it answers on the request's 'end'.
  app.mount('POST', '/raw', (req, res) => {
    let n = 0;
    req.on('data', (chunk: Buffer) => (n += chunk.length));
    req.on('end', () => res.end(`${n} bytes`));
  });
  app.grpc(GREETER_PROTO, 'keel.examples.v1.Greeter', {
    SayHello: ({ name }: { name: string }) => ({ message: `Hello, ${name}` }),
    async *SayHelloMany() {},
    async GreetAll(names: AsyncIterable<{ name: string }>) {
      let n = 0;
      for await (const _ of names) n++;
      return { message: `${n} names` };
    },
  });
  const handle = await app.listen({ handleSignals: false });
  const server = handle.server as Server & { grpc: GrpcAttachment };
  return { url: handle.url, port: handle.port, server, grpc: server.grpc, hits: () => hits, close: () => handle.close() };
}

/** Open a stream and reset it, `batch` at a time, until the session ends or `max` streams were reset. */
async function rapidReset(c: Client, path: string, max: number, batch = 50): Promise<number> {
  let sent = 0;
  while (sent < max && !c.session.closed && !c.session.destroyed) {
    for (let i = 0; i < batch && sent < max; i++) {
      try {
        const req = c.session.request({ ':path': path });
        req.on('error', () => {});
        req.close(http2.constants.NGHTTP2_CANCEL);
        sent++;
      } catch {
        return sent; // the session is going away
      }
    }
    await turn();
  }
  return sent;
}

describe('when an h2c client resets every stream it opens (rapid reset)', () => {
  it('should send GOAWAY ENHANCE_YOUR_CALM, close the connection, and serve the other clients', async () => {
    const s = await serve();
    try {
      const polite = await client(s.port);
      const attacker = await client(s.port);
      const sent = await rapidReset(attacker, '/slow', 20_000);
      const { code } = await attacker.goaway;
      assert.equal(code, CALM, 'GOAWAY code');
      await attacker.closed;
      // Well before nghttp2's own 1000-reset burst, and keel counted it.
      assert.ok(sent < 20_000, `${sent} streams sent`);
      assert.equal(s.grpc.calmed.h2_resets_per_second, 1);
      // The server closed its side: only the polite session is left.
      await until('the attacker\'s session closed on the server', () => s.grpc.sessions.size === 1);
      assert.equal((await get(polite.session, '/hello')).status, 200);
      assert.equal((await fetch(`${s.url}/hello`)).status, 200);
      polite.session.close();
    } finally {
      await s.close();
    }
  });

  it('should refuse the client\'s new connections while its reset budget is spent', async () => {
    // The per-connection budget out of the way: the client's (across connections) breaks first.
    const s = await serve({ h2_reset_burst: 100_000, h2_client_reset_burst: 300, h2_client_resets_per_second: 0.01 });
    try {
      const first = await client(s.port);
      await rapidReset(first, '/hello', 20_000);
      assert.equal((await first.goaway).code, CALM);
      await first.closed;
      assert.equal(s.grpc.calmed.h2_client_resets_per_second, 1);
      const next = await client(s.port);
      assert.deepEqual(await next.goaway, { code: CALM, lastStreamId: 0 });
      await next.closed;
      assert.ok(s.grpc.refused.h2_client_budget >= 1);
      await until('no session left', async () => s.grpc.sessions.size === 0 && (await connections(s.server)) === 0);
      // HTTP/1.1 from the same address is not an HTTP/2 abuse: still served.
      assert.equal((await fetch(`${s.url}/hello`)).status, 200);
    } finally {
      await s.close();
    }
  });
});

describe('when a client reconnects with less reset budget left than one connection may spend at once', () => {
  it('should refuse the new connection (GOAWAY ENHANCE_YOUR_CALM, last stream 0) before any of its streams reach the App', async () => {
    // 100 resets per connection, 250 for the client: two connections spend 200, leaving 50 (the rates ~0).
    const s = await serve({ h2_reset_burst: 100, h2_resets_per_second: 0.01, h2_client_reset_burst: 250, h2_client_resets_per_second: 0.01 });
    try {
      for (let i = 0; i < 2; i++) {
        const c = await client(s.port);
        await rapidReset(c, '/hello', 20_000);
        assert.equal((await c.goaway).code, CALM);
        await c.closed;
      }
      assert.equal(s.grpc.calmed.h2_resets_per_second, 2);
      const hits = s.hits();
      const third = await client(s.port);
      // Before, a client with one token left was admitted, and its first streams reached the App before a reset counted.
      const refused = await Promise.race([third.goaway, new Promise((r) => setTimeout(() => r('admitted'), 5_000))]);
      assert.deepEqual(refused, { code: CALM, lastStreamId: 0 });
      assert.equal(s.grpc.refused.h2_client_budget, 1);
      third.session.destroy();
      assert.equal(s.hits(), hits);
    } finally {
      await s.close();
    }
  });
});

describe('when an h2c client opens streams faster than h2_streams_per_second', () => {
  it('should send GOAWAY ENHANCE_YOUR_CALM past the burst, after answering the streams within it', async () => {
    const s = await serve({ h2_stream_burst: 30, h2_streams_per_second: 0.01 });
    try {
      const c = await client(s.port);
      await Promise.allSettled(Array.from({ length: 60 }, () => get(c.session, '/hello')));
      const { code, lastStreamId } = await c.goaway;
      assert.equal(code, CALM);
      // The GOAWAY names the last stream handed to the App (30 streams: ids 1 … 59); the rest reached no handler.
      // (node's client drops its streams on any GOAWAY that is not NO_ERROR, answered or not.)
      assert.equal(lastStreamId, 59);
      assert.equal(s.hits(), 30);
      assert.equal(s.grpc.calmed.h2_streams_per_second, 1);
      await c.closed;
    } finally {
      await s.close();
    }
  });
});

describe('when an h2c client behaves', () => {
  it('should never be calmed at the default limits: 400 requests, some of them cancelled', async () => {
    const s = await serve();
    try {
      const c = await client(s.port);
      let goaway: number | undefined;
      void c.goaway.then((g) => (goaway = g.code));
      for (let round = 0; round < 4; round++) {
        await Promise.all(Array.from({ length: 90 }, () => get(c.session, '/hello')));
        await rapidReset(c, '/slow', 10);
      }
      assert.equal(goaway, undefined);
      assert.equal((await get(c.session, '/hello')).status, 200);
      c.session.close();
    } finally {
      await s.close();
    }
  });
});

describe('when a client that cancelled a call on its session then sends an empty client stream', () => {
  it('should answer it (a stream dispatched a turn later has ended already: its reader must know)', { timeout: 30_000 }, async () => {
    const s = await serve();
    try {
      const c = await client(s.port);
      // One stream reset: the session's streams are dispatched a turn later from now on.
      await rapidReset(c, '/slow', 1);
      await new Promise((r) => setTimeout(r, 50));
      const status = await new Promise<string>((resolve) => {
        const req = c.session.request({ ':method': 'POST', ':path': '/keel.examples.v1.Greeter/GreetAll', 'content-type': 'application/grpc', te: 'trailers' });
        let grpcStatus = 'none';
        req.on('response', (h) => h['grpc-status'] !== undefined && (grpcStatus = String(h['grpc-status'])));
        req.on('trailers', (h) => (grpcStatus = String(h['grpc-status'])));
        req.on('data', () => {});
        req.on('error', () => {});
        req.on('close', () => resolve(grpcStatus));
        req.end();
      });
      assert.equal(status, '0');
      c.session.close();
    } finally {
      await s.close();
    }
  });
});

describe('when the h2_* rates are configured', () => {
  for (const key of ['h2_resets_per_second', 'h2_client_resets_per_second', 'h2_streams_per_second', 'h2_client_streams_per_second']) {
    it(`should refuse ${key}: 0 at start-up, naming the key`, () => {
      assert.throws(() => new App({ [key]: 0 }), (err: unknown) => err instanceof ConfigError && err.message.includes(key));
    });
  }
});

/** One request on `session`, raced against `ms`: its status and body, or 'hung'. */
function timedRequest(session: http2.ClientHttp2Session, headers: http2.OutgoingHttpHeaders, body: string | null, ms = 2_000) {
  return new Promise<{ status: number; body: string } | 'hung'>((resolve) => {
    // body null: END_STREAM on the HEADERS frame; '' an empty DATA frame carrying END_STREAM.
    const req = session.request(headers, { endStream: body === null });
    const timer = setTimeout(() => (req.close(http2.constants.NGHTTP2_CANCEL), resolve('hung')), ms);
    let status = 0;
    let text = '';
    req.setEncoding('utf8');
    req.on('response', (h) => (status = Number(h[':status'])));
    req.on('data', (c: string) => (text += c));
    req.on('end', () => (clearTimeout(timer), resolve({ status, body: text })));
    req.on('error', () => {});
    if (body !== null) req.end(body);
  });
}

describe('when a client that reset a stream on its session then sends plain HTTP requests on it', () => {
  // Once a session has reset a stream its streams are dispatched a turn later (lib/grpc/h2-abuse.ts); a request
  // whose END_STREAM arrived meanwhile in an empty DATA frame has ended (node reads an empty stream to its end by
  // itself) before node's compatibility layer listened for 'end': a handler waiting for it hung until the client
  // gave up (request_timeout).
  const post = (path: string, extra: http2.OutgoingHttpHeaders = {}) => ({ ':method': 'POST', ':path': path, 'content-type': 'application/json', ...extra });
  const cases: [string, http2.OutgoingHttpHeaders, string | null, string][] = [
    ['a GET', { ':path': '/hello' }, null, '{"hello":"http"}'],
    ['a POST to a route, END_STREAM on HEADERS', post('/echo'), null, '{"got":null}'],
    ['a POST to a route, an empty DATA frame ending it', post('/echo'), '', '{"got":null}'],
    ['a POST to a route with a small body', post('/echo', { 'content-length': 7 }), '{"a":1}', '{"got":{"a":1}}'],
    ['a POST to a handler reading the body itself, END_STREAM on HEADERS', post('/raw'), null, '0 bytes'],
    ['a POST to a handler reading the body itself, an empty DATA frame ending it', post('/raw'), '', '0 bytes'],
    ['a POST to a handler reading the body itself, a small body', post('/raw'), '{"a":1}', '7 bytes'],
  ];
  for (const [what, headers, body, answer] of cases) {
    it(`should answer ${what} within 2 s`, { timeout: 30_000 }, async () => {
      const s = await serve();
      try {
        const c = await client(s.port);
        // One stream reset: the session's streams are dispatched a turn later from now on.
        await rapidReset(c, '/slow', 1);
        await new Promise((r) => setTimeout(r, 50));
        for (let i = 0; i < 3; i++) {
          const got = await timedRequest(c.session, headers, body);
          assert.notEqual(got, 'hung', `request ${i + 1} unanswered after 2 s`);
          assert.deepEqual(got, { status: 200, body: answer });
        }
        c.session.close();
      } finally {
        await s.close();
      }
    });
  }
});
