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
