/**
 * One HTTP exchange on a raw TCP socket: send `request` as written (no client normalising it) and read
 * the whole answer until the server closes, as it does after refusing an upgrade or a bad request.
 */
import { connect, type Socket } from 'node:net';

export interface RawHttpAnswer {
  status: number;
  /** Header names lower-cased; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: string;
}

export function rawHttpExchange(port: number, request: string): Promise<RawHttpAnswer> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let data = '';
    sock.setEncoding('latin1');
    sock.on('data', (c: string) => (data += c));
    sock.on('error', reject);
    sock.on('close', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
    sock.end(request);
  });
}

/**
 * A keep-alive connection after one `GET /health` exchange (its JSON answer read): accepted and being read, ready for
 * the next request to be written at a moment the test chooses. `extraHeaders`: lines added to that first request
 * (`X-Forwarded-For: …` for a client behind a trusted proxy).
 */
export function warmSocket(port: number, extraHeaders = ''): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.write(`GET /health HTTP/1.1\r\nHost: x\r\n${extraHeaders}\r\n`));
    s.once('error', reject);
    let seen = '';
    const onData = (c: Buffer): void => {
      seen += c.toString('latin1');
      if (!seen.endsWith('}')) return;
      s.off('data', onData);
      resolve(s);
    };
    s.on('data', onData);
  });
}
