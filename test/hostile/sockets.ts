/**
 * Raw-socket helpers for the hostile replay suite: bytes exactly as an attacker sends them (no client
 * normalising paths or headers), and what came back before the server closed the connection.
 */
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  /** Everything the server sent, latin1. */
  text: string;
  /** The server closed the connection (false: we gave up after `ms`). */
  closed: boolean;
  /** Milliseconds from connect to close (or give-up). */
  ms: number;
}

/** Send `data`, optionally half-close, collect the answer until the server closes or `ms` pass. */
export function rawExchange(port: number, data: string | Buffer, options: { ms?: number; halfClose?: boolean } = {}): Promise<RawAnswer> {
  const ms = options.ms ?? 5000;
  return new Promise((resolve) => {
    const t0 = Date.now();
    let text = '';
    let done = false;
    const socket: Socket = connect(port, '127.0.0.1', () => {
      socket.write(data);
      if (options.halfClose) socket.end();
    });
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed, ms: Date.now() - t0 });
    };
    const timer = setTimeout(() => finish(false), ms);
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
  });
}

/** Status code of the first response in `text` (0 when there is none). */
export function statusOf(text: string): number {
  const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
  return m ? Number(m[1]) : 0;
}

/** How many responses `text` holds (a smuggled request would add one). */
export function responseCount(text: string): number {
  return (text.match(/HTTP\/1\.1 \d{3} /g) ?? []).length;
}

/** The JSON body of the first response. */
export function bodyOf(text: string): Record<string, unknown> {
  const i = text.indexOf('\r\n\r\n');
  return JSON.parse(text.slice(i + 4)) as Record<string, unknown>;
}
