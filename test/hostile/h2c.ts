/**
 * Clients for the h2c replays (h2c-sessions.test.ts): raw h2c connections (the preface and SETTINGS, then
 * whatever the attacker does), node:http2 clients that report the server's GOAWAY, and a poll that turns a
 * hang into a failure.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import type { Server } from 'node:http';
import { HTTP2_PREFACE } from '../../lib/grpc/index.js';

/** An empty SETTINGS frame (RFC 9113 §6.5): with the preface, all a client must send to open a session. */
export const EMPTY_SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
/** Safety limit of every wait: far below the old 95 s, far above what a loaded machine needs. */
export const SAFETY_MS = 15_000;

/** The server's own count of open sockets (every protocol). */
export function connections(server: Server): Promise<number> {
  return new Promise((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
}

/** Poll `check` until it is true; fail with `what` after `safetyMs` (a hang turned into a failure). */
export async function until(what: string, check: () => boolean | Promise<boolean>, safetyMs = SAFETY_MS): Promise<void> {
  const deadline = Date.now() + safetyMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`still waiting after ${safetyMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A raw h2c connection: preface and SETTINGS sent, resolved once the server's SETTINGS arrived. */
export function rawSession(port: number, bytes: Buffer = Buffer.concat([HTTP2_PREFACE, EMPTY_SETTINGS])): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write(bytes);
      if (bytes.length < HTTP2_PREFACE.length) resolve(socket); // less than a preface: the server says nothing yet
    });
    socket.on('error', () => {});
    socket.once('data', () => resolve(socket));
    socket.once('close', () => reject(new Error('closed before the server answered')));
  });
}

export interface Client {
  session: http2.ClientHttp2Session;
  goaway: Promise<{ code: number; lastStreamId: number }>;
  closed: Promise<void>;
  /** PINGs the server sent that this client acknowledged (node does it by itself). */
  serverPings: () => number;
}

/** A node:http2 client, resolved once the server's SETTINGS arrived (or the session was refused). */
export function client(port: number, localAddress?: string): Promise<Client> {
  const session = http2.connect(`http://127.0.0.1:${port}`, localAddress ? { createConnection: () => net.connect({ port, host: '127.0.0.1', localAddress }) } : {});
  session.on('error', () => {});
  let pings = 0;
  session.on('ping', () => pings++);
  const goaway = new Promise<{ code: number; lastStreamId: number }>((r) => session.once('goaway', (code, lastStreamId) => r({ code, lastStreamId })));
  const closed = new Promise<void>((r) => session.once('close', () => r()));
  return new Promise((resolve) => {
    const done = () => resolve({ session, goaway, closed, serverPings: () => pings });
    session.once('remoteSettings', done);
    session.once('close', done);
  });
}

/** GET `path` on an open session: the status and body. */
export function get(session: http2.ClientHttp2Session, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ':path': path });
    let status = 0;
    let body = '';
    req.setEncoding('utf8');
    req.on('response', (h) => (status = Number(h[':status'])));
    req.on('data', (c: string) => (body += c));
    req.on('end', () => resolve({ status, body }));
    req.on('error', reject);
  });
}

/** One HTTP/2 frame (RFC 9113 §4.1): 24-bit length, type, flags, stream id, payload. */
export function h2Frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(streamId, 5);
  return Buffer.concat([head, payload]);
}

/**
 * HEADERS (END_STREAM | END_HEADERS) of `GET path` on `streamId`, HPACK without the dynamic table or Huffman
 * (RFC 7541): :method GET and :scheme http indexed (2, 6), :path and :authority literals with indexed names (4, 1).
 */
export function getHeadersFrame(streamId: number, path: string, authority = 'localhost'): Buffer {
  const literal = (nameIndex: number, value: string) => Buffer.concat([Buffer.from([nameIndex, value.length]), Buffer.from(value, 'latin1')]);
  return h2Frame(0x1, 0x1 | 0x4, streamId, Buffer.concat([Buffer.from([0x82, 0x86]), literal(4, path), literal(1, authority)]));
}

/** RST_STREAM (RFC 9113 §6.4) of `streamId`, CANCEL unless told. */
export function rstStreamFrame(streamId: number, code: number = http2.constants.NGHTTP2_CANCEL): Buffer {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code, 0);
  return h2Frame(0x3, 0, streamId, payload);
}

/** The frames a raw connection receives, as { type, flags, streamId, payload }, parsed as they arrive. */
export function readFrames(socket: net.Socket): { type: number; flags: number; streamId: number; payload: Buffer }[] {
  const frames: { type: number; flags: number; streamId: number; payload: Buffer }[] = [];
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 9) {
      const length = buffered.readUIntBE(0, 3);
      if (buffered.length < 9 + length) break;
      frames.push({ type: buffered[3]!, flags: buffered[4]!, streamId: buffered.readUInt32BE(5) & 0x7fffffff, payload: buffered.subarray(9, 9 + length) });
      buffered = buffered.subarray(9 + length);
    }
  });
  return frames;
}
