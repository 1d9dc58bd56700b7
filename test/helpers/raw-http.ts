/**
 * One HTTP exchange on a raw TCP socket: send `request` as written (no client normalising it) and read
 * the whole answer until the server closes, as it does after refusing an upgrade or a bad request.
 */
import { connect } from 'node:net';

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
