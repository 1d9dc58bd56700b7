/**
 * A per-server connection cap with per-address fairness (ServerConfig.max_connections; issue 44 #7). Under
 * `ulimit -n 256`, 3 addresses × 90 idle WebSockets (or slowloris) took every file descriptor and a fourth address
 * was refused for as long as they were held: `max_connections_per_client` bounds one address, not a few.
 *
 * The cap counts every accepted TCP connection (HTTP/1.1, WebSocket, h2c). At the cap, a new connection from an
 * address holding fewer connections than the heaviest address is admitted and the heaviest address gives one up:
 * its oldest connection with no answer in progress (idle keep-alive, slowloris headers, an upgraded WebSocket),
 * else its oldest. A connection from the heaviest address itself (or one as heavy) is closed at once. So each
 * address can always get its share (cap / addresses), and what a few addresses hold never locks the others out.
 * The default, `'auto'`, is 80 % of the process's soft file-descriptor limit (Linux, /proc/self/limits), leaving
 * the rest for files, logs and outgoing connections; elsewhere no cap.
 */
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { clientKeys, DEFAULT_IPV6_SUBNET } from '../../middleware/rate-limit/client-key.js';

/** Share of the soft file-descriptor limit `max_connections: 'auto'` takes: 0.8. */
export const AUTO_MAX_CONNECTIONS_SHARE = 0.8;

/** The soft RLIMIT_NOFILE of this process (Linux), or null when it cannot be read or is unlimited. */
export function fileDescriptorLimit(): number | null {
  try {
    const line = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    const n = Number(line);
    return Number.isFinite(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

/** The cap `max_connections` stands for: a number, `'auto'` resolved against the descriptor limit, or null (none). */
export function resolveMaxConnections(setting: number | 'auto' | null, fdLimit: number | null = fileDescriptorLimit()): number | null {
  if (setting !== 'auto') return setting;
  return fdLimit === null ? null : Math.max(1, Math.floor(fdLimit * AUTO_MAX_CONNECTIONS_SHARE));
}

export class ConnectionCap {
  /** Connections closed at accept (their address was the heaviest) since the server started. */
  refused = 0;
  /** Connections of the heaviest address closed to admit another address's. */
  evicted = 0;
  readonly #max: number;
  readonly #key = clientKeys(DEFAULT_IPV6_SUBNET);
  /** Open connections by address, oldest first (a Set keeps insertion order). */
  readonly #byAddress = new Map<string, Set<Socket>>();
  #total = 0;

  constructor(max: number) {
    this.#max = max;
  }

  get size(): number {
    return this.#total;
  }

  /** A newly accepted connection: counted, or closed (false) when its address is the heaviest at the cap. */
  admit(socket: Socket): boolean {
    const key = this.#key(socket.remoteAddress ?? 'unknown');
    const mine = this.#byAddress.get(key);
    if (this.#total >= this.#max) {
      const heaviest = this.#heaviest();
      if (!heaviest || heaviest.size <= (mine?.size ?? 0)) {
        this.refused++;
        socket.destroy();
        return false;
      }
      this.evicted++;
      const out = victim(heaviest);
      // Off the count now ('close' comes later), so this admission stays within the cap.
      heaviest.delete(out);
      this.#total--;
      for (const [k, set] of this.#byAddress) if (set.size === 0) this.#byAddress.delete(k);
      out.destroy();
    }
    let set = mine;
    if (!set) this.#byAddress.set(key, (set = new Set()));
    set.add(socket);
    this.#total++;
    socket.once('close', () => {
      const s = this.#byAddress.get(key);
      if (!s?.delete(socket)) return;
      this.#total--;
      if (s.size === 0) this.#byAddress.delete(key);
    });
    return true;
  }

  #heaviest(): Set<Socket> | undefined {
    let best: Set<Socket> | undefined;
    for (const set of this.#byAddress.values()) if (!best || set.size > best.size) best = set;
    return best;
  }
}

/** The oldest connection of `set` with no HTTP/1.1 answer in progress, else the oldest. */
function victim(set: Set<Socket>): Socket {
  let pick: Socket | undefined;
  for (const socket of set) {
    if (!(socket as Socket & { _httpMessage?: unknown })._httpMessage) {
      pick = socket;
      break;
    }
  }
  pick ??= set.values().next().value as Socket;
  return pick;
}
