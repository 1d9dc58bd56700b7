/**
 * Ports for the servers `--exec` starts: a free port below the ephemeral ranges, or one of a
 * `--port-range`, and whether a server accepts connections yet.
 */
import { createConnection, createServer } from 'node:net';

/**
 * Where freePort() looks: below the ephemeral ranges (Linux 32768-60999, Windows and macOS
 * 49152-65535, RFC 6335 §6), from which the OS hands out `listen(0)` ports and the source ports of
 * outgoing connections. A port found with `listen(0)` goes back to that pool when released, and on a
 * busy machine another process's test server or client socket could take it before the command
 * binds it: the harness then talked to the wrong server (a 429 from someone's rate-limit test).
 */
export const FREE_PORT_RANGE: readonly [number, number] = [20000, 32767];
/** Random ports tried in FREE_PORT_RANGE before falling back to one the OS picks. */
const FREE_PORT_TRIES = 50;

/** The port, once bound and released on 127.0.0.1 (0: one the OS picks), or undefined when taken. */
export function canBind(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, '127.0.0.1', () => {
      const bound = (srv.address() as { port: number }).port;
      srv.close(() => resolve(bound));
    });
  });
}

/**
 * Parse `--port-range A-B`: two ports 1–65535, A ≤ B. Returns the range, or the reason it is not one.
 */
export function parsePortRange(text: string): readonly [number, number] | string {
  const m = /^(\d+)-(\d+)$/.exec(text.trim());
  if (!m) return `expected FIRST-LAST (e.g. 40000-40100), got ${JSON.stringify(text)}`;
  const [a, b] = [Number(m[1]), Number(m[2])];
  if (a < 1 || b > 65535) return `ports must be between 1 and 65535, got ${JSON.stringify(text)}`;
  if (a > b) return `the first port must not be above the last, got ${JSON.stringify(text)}`;
  return [a, b];
}

/** A free TCP port on 127.0.0.1 (bound and released; the server is expected to take it at once). */
export async function freePort(): Promise<number> {
  const [low, high] = FREE_PORT_RANGE;
  for (let i = 0; i < FREE_PORT_TRIES; i++) {
    const port = await canBind(low + Math.floor(Math.random() * (high - low + 1)));
    if (port !== undefined) return port;
  }
  const any = await canBind(0);
  if (any === undefined) throw new Error('no free TCP port on 127.0.0.1');
  return any;
}

export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createConnection({ host: '127.0.0.1', port });
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}
