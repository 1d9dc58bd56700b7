/**
 * Attack replay (issue 44 #3): HTTP/2 rapid reset (CVE-2023-44487) as it arrives on the wire: each stream's HEADERS
 * and its RST_STREAM in one write, so node reads both in one go and emits 'stream' for the HEADERS before it reads
 * the reset. keel dispatched a new connection's streams to the App at once (only a session that had already reset
 * one waited a turn), so every fresh connection had its first batch of reset streams answered by the App: the first
 * wave of 100 connections in `npm run floods -- --only rapid-reset` stalled `/health` 2-4 s. Now every stream is
 * handed to the App at the end of the turn it arrived in, and one reset by then costs the App nothing.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import type { Server } from 'node:http';
import { App } from '../../lib/app/app.js';
import '../../lib/grpc/index.js';
import { HTTP2_PREFACE, type GrpcAttachment } from '../../lib/grpc/index.js';
import { GREETER_PROTO } from '../../lib/grpc/testkit.js';
import type { ServerConfigInput } from '../../lib/records/server.js';
import { client, EMPTY_SETTINGS, get, getHeadersFrame, h2Frame, readFrames, rstStreamFrame, until } from './h2c.js';

const HEADERS = 0x1;
const RST_STREAM = 0x3;
const PING = 0x6;
const GOAWAY = 0x7;
const SETTINGS_ACK = h2Frame(0x4, 0x1, 0);

async function serve(config: ServerConfigInput = {}) {
  const app = new App({ host: '127.0.0.1', port: 0, grpc: {}, rate_limit: null, ...config });
  let hits = 0;
  app.get('/hello', () => (hits++, { hello: 'http' }));
  app.get('/polite', () => ({ polite: true }));
  // A gRPC service: the HTTP/2 side of the port is there for it.
  app.grpc(GREETER_PROTO, 'keel.examples.v1.Greeter', { SayHello: ({ name }: { name: string }) => ({ message: `Hello, ${name}` }), async *SayHelloMany() {}, async GreetAll() { return { message: '' }; } });
  const handle = await app.listen({ handleSignals: false });
  const server = handle.server as Server & { grpc: GrpcAttachment };
  return { port: handle.port, grpc: server.grpc, hits: () => hits, close: () => handle.close() };
}

/** `count` streams (ids 1, 3, …) of `GET /hello`, each HEADERS followed by its RST_STREAM CANCEL. */
function resetPairs(count: number): Buffer {
  return Buffer.concat(Array.from({ length: count }, (_, i) => Buffer.concat([getHeadersFrame(2 * i + 1, '/hello'), rstStreamFrame(2 * i + 1)])));
}

/** A raw h2c connection that sends the preface, SETTINGS and `first` in one write; its frames as they arrive. */
async function connect(port: number, first: Buffer) {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  const frames = readFrames(socket);
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  await new Promise<void>((r) => socket.once('connect', () => r()));
  socket.write(Buffer.concat([HTTP2_PREFACE, EMPTY_SETTINGS, SETTINGS_ACK, first]));
  return { socket, frames, closed };
}

describe('when a new h2c connection sends each stream\'s HEADERS and RST_STREAM in one write', () => {
  it('should hand none of the reset streams to the App, and answer the connection\'s next stream', async () => {
    const s = await serve();
    try {
      const c = await connect(s.port, resetPairs(50));
      // Until the server's SETTINGS arrived (the first write has been read), then one polite stream after it.
      await until('the server\'s SETTINGS', () => c.frames.length > 0);
      c.socket.write(getHeadersFrame(101, '/polite'));
      await until('the answer to stream 101', () => c.frames.some((f) => f.type === HEADERS && f.streamId === 101));
      assert.deepEqual(c.frames.filter((f) => f.type === HEADERS).map((f) => f.streamId), [101], 'streams answered');
      assert.equal(s.hits(), 0, 'reset streams handed to the App');
      c.socket.destroy();
    } finally {
      await s.close();
    }
  });

  it('should hand none to the App when they come after the connection is open (a later read than the preface)', async () => {
    const s = await serve();
    try {
      const c = await connect(s.port, Buffer.alloc(0));
      await until('the server\'s SETTINGS', () => c.frames.length > 0);
      // node emits 'stream' for each HEADERS of this read before it reads the RST_STREAM after it.
      c.socket.write(resetPairs(50));
      await new Promise((r) => setTimeout(r, 50));
      c.socket.write(getHeadersFrame(101, '/polite'));
      await until('the answer to stream 101', () => c.frames.some((f) => f.type === HEADERS && f.streamId === 101));
      assert.deepEqual(c.frames.filter((f) => f.type === HEADERS).map((f) => f.streamId), [101], 'streams answered');
      assert.equal(s.hits(), 0, 'reset streams handed to the App');
      c.socket.destroy();
    } finally {
      await s.close();
    }
  });

  it('should charge the resets of 20 such connections to their client and refuse its next ones, with none reaching the App', async () => {
    // The client's budget (300) below 20 × 50 resets; one connection's (200) above its own 50. A new connection
    // needs one connection's budget (200) left in its client's: three connections spend 150, the rest are refused.
    const s = await serve({ h2_client_reset_burst: 300, h2_client_resets_per_second: 0.01 });
    try {
      const conns = await Promise.all(Array.from({ length: 20 }, () => connect(s.port, resetPairs(50))));
      await until('every connection answered or closed', () => conns.every((c) => c.frames.length > 0 || c.socket.destroyed));
      await Promise.all(conns.map((c) => Promise.race([c.closed, new Promise((r) => setTimeout(r, 2_000))])));
      assert.equal(s.hits(), 0, 'reset streams handed to the App');
      // Before, the resets of streams node emitted already reset were never counted: all 20 were admitted.
      assert.ok(s.grpc.refused.h2_client_budget >= 10, JSON.stringify(s.grpc.refused));
      // Each refused one told why first: GOAWAY ENHANCE_YOUR_CALM, last stream 0 (then node's own GOAWAY NO_ERROR as it closes).
      const first = conns.map((c) => c.frames.find((f) => f.type === GOAWAY)?.payload).filter((p) => p !== undefined);
      const calm = first.filter((p) => p.readUInt32BE(0) === 0 && p.readUInt32BE(4) === http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
      assert.ok(calm.length >= 10, `${calm.length} of ${first.length} first GOAWAYs ENHANCE_YOUR_CALM, last stream 0`);
      for (const c of conns) c.socket.destroy();
    } finally {
      await s.close();
    }
  });
});

describe('when a new connection\'s first write carries only HEADERS and their RST_STREAMs come in a later one', () => {
  // node's own client does this on a new session: the first reset finds the HEADERS' write in progress and waits.
  /** 50 GET /hello on a new raw connection (which never answers PINGs), then, once `answered` were answered, their resets. */
  async function headersThenResets(port: number, answered: number) {
    const c = await connect(port, Buffer.alloc(0));
    await until('the server\'s SETTINGS', () => c.frames.length > 0);
    c.socket.write(Buffer.concat(Array.from({ length: 50 }, (_, i) => getHeadersFrame(2 * i + 1, '/hello'))));
    const answers = () => c.frames.filter((f) => f.type === HEADERS).length;
    await until(`${answered} answers`, () => answers() >= answered);
    await new Promise((r) => setTimeout(r, 200));
    const before = answers();
    // The resets, then the answer to the server's PING (ending the wait of a new connection), then a polite stream.
    const ping = c.frames.find((f) => f.type === PING);
    const ack = ping ? [h2Frame(PING, 0x1, 0, ping.payload)] : [];
    c.socket.write(Buffer.concat([...Array.from({ length: 50 }, (_, i) => rstStreamFrame(2 * i + 1)), ...ack, getHeadersFrame(101, '/polite')]));
    await until('the answer to stream 101', () => c.frames.some((f) => f.type === HEADERS && f.streamId === 101));
    c.socket.destroy();
    return before;
  }

  it('should hand the App h2_unproven_streams of them, and none of the rest once reset', async () => {
    const s = await serve({ h2_unproven_streams: 10 });
    try {
      // Before: all 50 reached the App in the turn they arrived.
      assert.equal(await headersThenResets(s.port, 10), 10, 'answered before the resets');
      assert.equal(s.hits(), 10, 'handed to the App');
    } finally {
      await s.close();
    }
  });

  it('should hand all 50 to the App with h2_unproven_streams null (the setting is what holds them)', async () => {
    const s = await serve({ h2_unproven_streams: null });
    try {
      assert.equal(await headersThenResets(s.port, 50), 50);
      assert.equal(s.hits(), 50);
    } finally {
      await s.close();
    }
  });
});

describe('when a new connection opens more streams than h2_unproven_streams before answering the server\'s PING', () => {
  it('should answer h2_unproven_streams of them, then the rest once the PING is answered', async () => {
    const s = await serve({ h2_unproven_streams: 10 });
    try {
      const c = await connect(s.port, Buffer.alloc(0));
      await until('the server\'s SETTINGS', () => c.frames.length > 0);
      c.socket.write(Buffer.concat(Array.from({ length: 20 }, (_, i) => getHeadersFrame(2 * i + 1, '/polite'))));
      await until('the server\'s PING and 10 answers', () => c.frames.some((f) => f.type === PING) && c.frames.filter((f) => f.type === HEADERS).length >= 10);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(c.frames.filter((f) => f.type === HEADERS).length, 10, 'streams answered before the PING\'s ACK');
      const ping = c.frames.find((f) => f.type === PING)!;
      c.socket.write(h2Frame(PING, 0x1, 0, ping.payload));
      await until('20 answers', () => c.frames.filter((f) => f.type === HEADERS).length === 20);
      c.socket.destroy();
    } finally {
      await s.close();
    }
  });

  it('should answer 30 concurrent requests of a node:http2 client on a new connection', async () => {
    const s = await serve();
    try {
      const c = await client(s.port);
      const answers = await Promise.all(Array.from({ length: 30 }, () => get(c.session, '/polite')));
      assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([200]));
      c.session.close();
    } finally {
      await s.close();
    }
  });
});

/** The SETTINGS_MAX_CONCURRENT_STREAMS values a node:http2 client session was told, in order. */
function toldLimits(c: { session: http2.ClientHttp2Session }): number[] {
  const seen = [c.session.remoteSettings.maxConcurrentStreams!];
  c.session.on('remoteSettings', (s) => seen.push(s.maxConcurrentStreams!));
  return seen;
}

describe('when a client that has just reset streams opens a new h2c connection', () => {
  it('should tell it SETTINGS_MAX_CONCURRENT_STREAMS h2_unproven_streams', async () => {
    const s = await serve({ h2_unproven_streams: 10, h2_client_resets_per_second: 0.01 });
    try {
      const first = await client(s.port);
      for (let i = 0; i < 5; i++) {
        const req = first.session.request({ ':path': '/hello' });
        req.on('error', () => {});
        req.close(http2.constants.NGHTTP2_CANCEL);
      }
      assert.equal((await get(first.session, '/polite')).status, 200);
      first.session.close();
      const next = await client(s.port);
      const told = toldLimits(next);
      // Before: 100 only (every new connection was told max_concurrent_streams).
      await until('the lowered limit', () => told.includes(10));
      assert.equal((await get(next.session, '/polite')).status, 200);
      // Its PING answered (with its first stream): max_concurrent_streams again.
      await until('the full limit again', () => told.at(-1) === 100);
      assert.deepEqual(told.filter((n, i) => n !== told[i - 1]), [100, 10, 100]);
      next.session.close();
    } finally {
      await s.close();
    }
  });
});

describe('when the server shuts down while a new connection\'s streams wait for its PING\'s answer', () => {
  it('should refuse them (REFUSED_STREAM) and close at once, not wait for an answer that never comes', async () => {
    const s = await serve({ h2_unproven_streams: 10 });
    const c = await connect(s.port, Buffer.alloc(0));
    await until('the server\'s SETTINGS', () => c.frames.length > 0);
    // 10 answered, then 10 more held: the client never answers the server's PING.
    c.socket.write(Buffer.concat(Array.from({ length: 10 }, (_, i) => getHeadersFrame(2 * i + 1, '/polite'))));
    await until('10 answers', () => c.frames.filter((f) => f.type === HEADERS).length === 10);
    c.socket.write(Buffer.concat(Array.from({ length: 10 }, (_, i) => getHeadersFrame(21 + 2 * i, '/polite'))));
    await new Promise((r) => setTimeout(r, 200));
    const t0 = performance.now();
    // Before: the held streams kept the session, and close(), until the shutdown deadline (30 s).
    await s.close();
    assert.ok(performance.now() - t0 < 10_000, `close took ${Math.round(performance.now() - t0)} ms`);
    const refused = c.frames.filter((f) => f.type === RST_STREAM && f.payload.readUInt32BE(0) === http2.constants.NGHTTP2_REFUSED_STREAM).map((f) => f.streamId);
    assert.deepEqual(refused, Array.from({ length: 10 }, (_, i) => 21 + 2 * i));
    c.socket.destroy();
  });
});
