/**
 * HTTP answers written on a raw socket, for requests node has handed over as an `upgrade` (WebSocket
 * handshakes): there is no ServerResponse, yet a refused handshake is an HTTP response like any other
 * (RFC 6455 §4.2.2) and, as everywhere in keel, a problem+json one with its real status (RFC 9457).
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { PROBLEM_CONTENT_TYPE, toProblem } from './problem.js';

/** Write one `Connection: close` HTTP response on `socket` and end it (hop-by-hop headers given are dropped). */
export function writeSocketResponse(socket: Duplex, status: number, headers: Readonly<Record<string, string>>, body: Buffer): void {
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`, 'Connection: close', `Content-Length: ${body.length}`];
  for (const [k, v] of Object.entries(headers)) {
    if (!/^(content-length|connection|transfer-encoding)$/i.test(k)) lines.push(`${k}: ${v}`);
  }
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // Destroyed once written: the peer may keep its side open, and nothing more will be read.
  socket.once('finish', () => socket.destroy());
  socket.end(Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n'), body]));
}

/** Answer `err` (an HttpError, or anything: 500 without internals) as problem+json on `socket`, then close it. */
export function sendSocketProblem(socket: Duplex, err: unknown): void {
  const { problem, headers } = toProblem(err);
  writeSocketResponse(socket, problem.status, { ...headers, 'Content-Type': PROBLEM_CONTENT_TYPE }, Buffer.from(JSON.stringify(problem)));
}
