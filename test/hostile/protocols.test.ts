/**
 * Hostile replay: protocol-level floods from the issue 13 attack run — 10,000-call JSON-RPC batches,
 * WebSocket frame attacks (oversized frames, a 4 GiB frame header, fragmented floods), gRPC 4 GiB length
 * prefixes and gzip bombs — over real sockets against one createApp server with all three on.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import WebSocket from 'ws';
import { pino } from 'pino';
import { createApp, type ServerHandle } from '../../lib/index.js';
import '../../lib/jsonrpc/index.js';
import '../../lib/ws/index.js';
import '../../lib/grpc/index.js';
import { GrpcStatus, frameMessage } from '../../lib/grpc/index.js';
import { GREETER_PROTO, clientFor, connect as grpcConnect, unary } from '../../lib/grpc/testkit.js';
import { rawCall } from '../../lib/grpc/h2raw.js';

const silent = { logger: pino({ level: 'silent' }) };
const MAX_PAYLOAD = 64 * 1024;
const SAY_HELLO = '/keel.examples.v1.Greeter/SayHello';

let server: ServerHandle;
let rpcCalls = 0;
let helloCalls = 0;

before(async () => {
  server = await createApp({ port: 0, jsonrpc: {}, grpc: {} }, (a) => {
    a.get('/health', () => ({ ok: true }));
    a.rpc('add', (p) => {
      rpcCalls++;
      return (p as number[]).reduce((x, y) => x + y, 0);
    });
    a.ws('/ws/echo', async (session) => {
      for await (const m of session) if (m.type === 'text' || m.type === 'binary') await session.send(m);
    }, { maxPayload: MAX_PAYLOAD });
    a.grpc(GREETER_PROTO, 'keel.examples.v1.Greeter', {
      SayHello: ({ name }: { name: string }) => {
        helloCalls++;
        return { message: `Hello, ${name}` };
      },
    });
  }, silent).listen({ handleSignals: false });
});
after(() => server.close());

async function stillServing(): Promise<void> {
  const res = await fetch(`${server.url}/health`);
  assert.equal(res.status, 200);
}

describe('hostile: JSON-RPC batches', () => {
  const rpc = (body: string) => fetch(`${server.url}/rpc`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });

  it('should refuse a 10,000-call batch as a whole (max_batch_size 100) without running any call', async () => {
    const before = rpcCalls;
    const batch = JSON.stringify(Array.from({ length: 10_000 }, (_, i) => ({ jsonrpc: '2.0', method: 'add', params: [i, 1], id: i })));
    const t0 = Date.now();
    const res = await rpc(batch);
    const answer = await res.json() as { error: { code: number; data: { max_batch_size: number } } };
    assert.equal(res.status, 200);
    assert.equal(answer.error.code, -32600);
    assert.equal(answer.error.data.max_batch_size, 100);
    assert.equal(rpcCalls, before);
    assert.ok(Date.now() - t0 < 5000);
  });

  it('should answer a batch of exactly max_batch_size (control)', async () => {
    const res = await rpc(JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', method: 'add', params: [i, 1], id: i }))));
    const answer = await res.json() as unknown[];
    assert.equal(answer.length, 100);
  });

  it('should answer a nested batch instead of hanging', async () => {
    const res = await rpc('[[{"jsonrpc": "2.0", "method": "add", "params": [1], "id": 1}]]');
    const answer = await res.json() as { error: { code: number } }[];
    assert.equal(answer[0]!.error.code, -32600);
  });

  it('should keep serving', stillServing);
});

type Closed = { code: number; reason: string };

function openWs(): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ws/echo`);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}
const closedOf = (ws: WebSocket) => new Promise<Closed>((resolve) => ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));

describe('hostile: WebSocket frame attacks (maxPayload 64 KiB)', () => {
  it('should echo a message under maxPayload (control)', async () => {
    const ws = await openWs();
    const echoed = new Promise<Buffer>((r) => ws.once('message', (d) => r(d as Buffer)));
    ws.send(Buffer.alloc(1000, 1));
    assert.equal((await echoed).length, 1000);
    ws.close();
  });

  it('should close with 1009 on a single frame over maxPayload', async () => {
    const ws = await openWs();
    ws.on('error', () => {});
    const closed = closedOf(ws);
    ws.send(Buffer.alloc(MAX_PAYLOAD + 1));
    assert.equal((await closed).code, 1009);
  });

  it('should close with 1009 on a fragmented flood whose fragments add up past maxPayload', async () => {
    const ws = await openWs();
    ws.on('error', () => {});
    const closed = closedOf(ws);
    // 1 KiB continuation fragments, never a final one: the message grows until the cap.
    for (let i = 0; i < 200 && ws.readyState === WebSocket.OPEN; i++) ws.send(Buffer.alloc(1024), { fin: false, binary: true });
    assert.equal((await closed).code, 1009);
  });

  it('should close with 1009 on a frame header that announces 4 GiB, without waiting for the bytes', async () => {
    const answer = await new Promise<{ text: Buffer; ms: number }>((resolve) => {
      const t0 = Date.now();
      const chunks: Buffer[] = [];
      const socket = connect(server.port, '127.0.0.1', () => {
        socket.write('GET /ws/echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
      });
      let sentFrame = false;
      socket.on('data', (c: Buffer) => {
        chunks.push(c);
        if (!sentFrame && Buffer.concat(chunks).includes('\r\n\r\n')) {
          sentFrame = true;
          // FIN + binary, MASK + 127: 64-bit length 2^32, a mask key, and 16 bytes of the "payload".
          const head = Buffer.from([0x82, 0xff, 0, 0, 0, 1, 0, 0, 0, 0, 1, 2, 3, 4]);
          socket.write(Buffer.concat([head, Buffer.alloc(16)]));
        }
      });
      const guard = setTimeout(() => socket.destroy(), 5000);
      socket.on('error', () => {});
      socket.on('close', () => {
        clearTimeout(guard);
        resolve({ text: Buffer.concat(chunks), ms: Date.now() - t0 });
      });
    });
    assert.match(answer.text.toString('latin1'), /^HTTP\/1\.1 101 /);
    const frames = answer.text.subarray(answer.text.indexOf('\r\n\r\n') + 4);
    assert.equal(frames[0], 0x88, 'a close frame');
    assert.equal(frames.readUInt16BE(2), 1009);
    assert.ok(answer.ms < 4000, `closed after ${answer.ms} ms`);
  });

  it('should keep serving', stillServing);
});

/** HelloRequest { name } encoded by hand (field 1, length-delimited). */
function helloRequest(nameBytes: number): Buffer {
  const len: number[] = [];
  for (let n = nameBytes; ; n = Math.floor(n / 128)) {
    if (n < 128) {
      len.push(n);
      break;
    }
    len.push((n % 128) | 0x80);
  }
  return Buffer.concat([Buffer.from([0x0a, ...len]), Buffer.alloc(nameBytes, 0x61)]);
}

describe('hostile: gRPC length prefixes and compression bombs (max_message_size 4 MiB)', () => {
  const address = () => `127.0.0.1:${server.port}`;

  it('should answer a call (control)', async () => {
    const client = grpcConnect(clientFor(GREETER_PROTO, 'keel.examples.v1.Greeter'), address());
    try {
      const r = await unary(client, 'SayHello', { name: 'x' });
      assert.equal(r.value?.message, 'Hello, x');
    } finally {
      client.close();
    }
  });

  it('should refuse a 4 GiB length prefix with RESOURCE_EXHAUSTED before reading or allocating it', async () => {
    const before = helloCalls;
    const frame = Buffer.from([0, 0xff, 0xff, 0xff, 0xff, 0x0a, 0x01, 0x61]);
    const t0 = Date.now();
    const r = await rawCall(address(), SAY_HELLO, [frame], {}, { framed: false });
    assert.equal(r.grpcStatus, GrpcStatus.RESOURCE_EXHAUSTED);
    assert.equal(helloCalls, before);
    assert.ok(Date.now() - t0 < 3000);
  });

  it('should refuse a gzip bomb (10 MB name in ~10 KB) with RESOURCE_EXHAUSTED', async () => {
    const before = helloCalls;
    const bomb = gzipSync(helloRequest(10 * 1024 * 1024));
    assert.ok(bomb.length < 64 * 1024, `bomb is ${bomb.length} bytes`);
    const r = await rawCall(address(), SAY_HELLO, [frameMessage(bomb, true)], { 'grpc-encoding': 'gzip' }, { framed: false });
    assert.equal(r.grpcStatus, GrpcStatus.RESOURCE_EXHAUSTED);
    assert.equal(helloCalls, before);
  });

  it('should refuse a compressed message with an encoding it does not know', async () => {
    const r = await rawCall(address(), SAY_HELLO, [frameMessage(gzipSync(helloRequest(3)), true)], { 'grpc-encoding': 'zstd-bomb' }, { framed: false });
    assert.equal(r.grpcStatus, GrpcStatus.UNIMPLEMENTED);
  });

  it('should keep serving HTTP/1.1', stillServing);
});
