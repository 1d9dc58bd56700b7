/**
 * Attack replays (issue 26, items 4 and 6): clients that leave or stop reading.
 * - A GraphQL subscription storm whose client hangs up with `next` frames queued wrote 2,658 EPIPE
 *   stack traces (graphql-ws's console.error): now no stack anywhere, only throttled debug lines.
 * - One connection left open held a server's whole `shutdown_timeout`: idle keep-alive, a connection
 *   that sent nothing and a WebSocket client that never answers the 1001 close frame no longer do.
 * - A client that stops reading a large answer is cut after `send_timeout`; a normal client is served.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import WebSocket from 'ws';
import { App } from '../../lib/app/app.js';
import '../../lib/graphql/index.js';
import { MemoryPubSub } from '../../lib/graphql/pubsub.js';
import { connectGraphqlWs, eventually, sendFrame } from '../helpers/graphql-ws-client.js';
import type { LogRecord } from '../helpers/log-capture.js';

/** A pino logger at debug writing records to an array (log-capture.ts's logger stops at info). */
function debugLogs(): { logger: pino.Logger; records: LogRecord[] } {
  const records: LogRecord[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      records.push(JSON.parse(chunk.toString()) as LogRecord);
      cb();
    },
  });
  return { logger: pino({ level: 'debug' }, stream), records };
}

/** What graphql-ws prints through console.error / console.warn while `fn` runs. */
async function consoleDuring(fn: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const { error, warn } = console;
  console.error = (...args: unknown[]) => lines.push(args.map((a) => (a instanceof Error ? String(a.stack) : String(a))).join(' '));
  console.warn = console.error;
  try {
    await fn();
  } finally {
    console.error = error;
    console.warn = warn;
  }
  return lines;
}

describe('when GraphQL subscription clients hang up with frames queued, 50 times', () => {
  it('should log no stack, only debug lines throttled with a count', async () => {
    const { logger, records } = debugLogs();
    const pubsub = new MemoryPubSub();
    const app = new App({ host: '127.0.0.1', port: 0 }, { logger });
    app.registerGraphqlRoute('/graphql', 'POST', 'full', {}, { pubsub });
    const server = await app.listen({ handleSignals: false });
    const title = 'x'.repeat(64 * 1024);
    let lost = 0;
    const started = Date.now();
    const printed = await consoleDuring(async () => {
      try {
        for (let round = 0; round < 50; round++) {
          const ws = await connectGraphqlWs(`${server.url.replace('http', 'ws')}/graphql`);
          for (let i = 0; i < 100; i++) sendFrame(ws, { id: `s${i}`, type: 'subscribe', payload: { query: 'subscription { bookAdded { id title } }' } });
          await eventually(() => pubsub.listenerCount('bookAdded'), (n) => n === 100);
          // The client stops reading and its connection breaks while 100 × 2 frames of 64 KiB are queued (more than loopback's buffers).
          const raw = (ws as unknown as { _socket: net.Socket })._socket;
          raw.pause();
          for (let e = 0; e < 2; e++) pubsub.publish('bookAdded', { id: `b${e}`, title, authorId: 'a1' });
          raw.resetAndDestroy();
          await eventually(() => pubsub.listenerCount('bookAdded'), (n) => n === 0, 5000);
          lost++;
        }
        await new Promise((r) => setTimeout(r, 1200)); // one throttle interval: the count line is out
      } finally {
        await server.close();
      }
    });
    assert.equal(lost, 50);
    assert.deepEqual(printed, [], 'graphql-ws printed nothing');
    assert.deepEqual(records.filter((r) => (r.level as number) >= 40), [], 'nothing at warn or error');
    assert.ok(!records.some((r) => r.err !== undefined || /\n\s+at /.test(JSON.stringify(r))), 'no stack in any record');
    const lostLines = records.filter((r) => r.msg === 'client connection lost');
    const noted = lostLines.reduce((n, l) => n + (l.count as number), 0);
    // Throttled: one line per code per second at most, each with the count since the last.
    const seconds = Math.ceil((Date.now() - started) / 1000);
    assert.ok(lostLines.length >= 1 && lostLines.length <= 2 * seconds, `${lostLines.length} lines in ${seconds} s`);
    assert.ok(noted > lostLines.length, `${noted} lost sends in ${lostLines.length} lines`);
    for (const l of lostLines) assert.equal(l.level, 20, 'debug');
  });
});

describe('when connections are open with nothing in flight at shutdown', () => {
  it('should complete without reaching shutdown_timeout', async () => {
    const { logger, records } = debugLogs();
    const app = new App({ host: '127.0.0.1', port: 0, shutdown_timeout: 20 }, { logger });
    app.get('/hello', () => ({ hello: 'world' }));
    app.ws('/ws/echo', async (session) => {
      for await (const m of session) if (m.type === 'text') await session.send(m);
    });
    const server = await app.listen({ handleSignals: false });
    // An idle keep-alive connection after one answer, and one that never sent a byte.
    const keepAlive = net.connect(server.port, '127.0.0.1');
    keepAlive.on('error', () => undefined);
    keepAlive.write('GET /hello HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((r) => keepAlive.once('data', r));
    const silent = net.connect(server.port, '127.0.0.1');
    silent.on('error', () => undefined);
    // A WebSocket client that stops reading: it never answers the server's close frame.
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ws/echo`);
    ws.on('error', () => undefined);
    await new Promise((r) => ws.once('open', r));
    (ws as unknown as { _socket: net.Socket })._socket.pause();
    let done = false;
    const closing = server.close().then(() => (done = true));
    // Completed within the first of shutdown_timeout's 20 s (the test's deadline is the proof, not a figure).
    await Promise.race([closing, new Promise((r) => setTimeout(r, 10_000).unref())]);
    assert.equal(done, true, 'shutdown completed');
    assert.ok(!records.some((r) => /shutdown timeout reached/.test(String(r.msg))), 'shutdown_timeout was not reached');
    keepAlive.destroy();
    silent.destroy();
    ws.terminate();
  });
});

describe('when a client stops reading a large answer', () => {
  it('should cut it after send_timeout while a normal client on the same server is served', async () => {
    const app = new App({ host: '127.0.0.1', port: 0, send_timeout: 1 });
    const big = { items: Array.from({ length: 64 * 1024 }, (_, i) => ({ i, pad: 'x'.repeat(200) })) }; // ~16 MB of JSON
    app.get('/big', () => big);
    const server = await app.listen({ handleSignals: false });
    try {
      const serverSide: net.Socket[] = [];
      server.server.on('connection', (s: net.Socket) => serverSide.push(s));
      const slow = net.connect(server.port, '127.0.0.1');
      slow.on('error', () => undefined);
      let received = 0;
      slow.on('data', (chunk: Buffer) => {
        received += chunk.length;
      });
      slow.pause(); // reads nothing
      const ended = new Promise<void>((resolve) => slow.once('close', () => resolve()));
      slow.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
      await eventually(() => serverSide.length, (n) => n === 1);
      // Served in full while the slow one sits unread.
      const res = await fetch(`${server.url}/big`);
      const body = (await res.json()) as { items: unknown[] };
      assert.equal(body.items.length, 64 * 1024);
      // The server gives up on the slow reader: its socket is destroyed, with most of the answer unsent.
      assert.equal(await eventually(() => serverSide[0]!.destroyed, (d) => d, 10_000), true, 'slow socket cut');
      slow.resume();
      await ended;
      assert.ok(received < JSON.stringify(big).length, `the slow client got only part of the answer (${received} bytes)`);
    } finally {
      await server.close();
    }
  });
});

describe('when a handler fails with a network error after its client left', () => {
  it('should log one debug line, nothing at error level', async () => {
    const { logger, records } = debugLogs();
    const app = new App({ host: '127.0.0.1', port: 0 }, { logger });
    let failed = 0;
    app.get('/wait', async () => {
      // What a handler relaying to or from a client that is gone sees: its client leaves at 50 ms.
      await new Promise((r) => setTimeout(r, 300));
      failed++;
      throw Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
    });
    const server = await app.listen({ handleSignals: false });
    try {
      for (let i = 0; i < 5; i++) {
        const client = net.connect(server.port, '127.0.0.1');
        client.on('error', () => undefined);
        client.write('GET /wait HTTP/1.1\r\nHost: x\r\n\r\n');
        await new Promise((r) => setTimeout(r, 50));
        client.destroy();
      }
      await eventually(() => failed, (n) => n === 5, 5000);
      await eventually(() => records.filter((r) => r.msg === 'client connection lost').length, (n) => n >= 1);
      assert.deepEqual(records.filter((r) => (r.level as number) >= 40), [], 'nothing at warn or error');
      assert.ok(!records.some((r) => r.err !== undefined), 'no error object, no stack');
    } finally {
      await server.close();
    }
  });
});
