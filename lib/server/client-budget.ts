/**
 * One budget per client across its connections (issue 35), as nginx's `limit_conn` and `limit_req` share one
 * key across connections: per-socket limits let one address open 400 WebSockets, each under its own rate, and
 * send 35,700 messages a second (`/health` p99 1.0–2.5 s), and take every file descriptor under `ulimit -n 256`.
 *
 * - **Connections**: `acquire(key)` / `release(key)` count the connections a client holds open; past
 *   `maxConnectionsPerClient` `acquire` says no, and the caller refuses in its protocol's words (HTTP/1.1 503,
 *   h2c GOAWAY ENHANCE_YOUR_CALM, WebSocket close 1013). One warn line per second with counts (NetworkErrorLog).
 * - **Messages**: `messages(key)` is a meter shared by every socket of that client; `charge()` answers how long
 *   the socket should wait (0: charged). A client over its rate is slowed by TCP backpressure, not closed: its
 *   socket is paused (lib/ws/fairness.ts holds the few messages already read from it), which costs nothing,
 *   and nothing a compliant client sent is lost.
 *
 * The key is the rate limit's (middleware/rate-limit/client-key.ts): the address, IPv6 grouped by /56, the
 * forwarded one when `trust_proxy` trusts the peer. A trusted proxy's own TCP connections are not counted: it
 * speaks for many clients. Only a proxy named by address, subnet or name (`'10.0.0.5'`, `'10.0.0.0/8'`,
 * `'loopback'`) is told apart that way: `true` and hop counts trust whatever peer connects, so under them
 * connections are counted per peer as without a proxy (issue 44 #5: a direct client was otherwise uncounted),
 * and listen() warns at start-up (trustProxyWarning).
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { clientKeys, compileTrust, DEFAULT_IPV6_SUBNET, proxyAddr } from '../../middleware/rate-limit/client-key.js';
import { NetworkErrorLog } from '../ops/net-errors.js';
import type { ServerConfig, TrustProxySetting } from '../records/server.js';

/** Refused connections are logged at most once per this many ms, with counts: 1000. */
export const DEFAULT_CLIENT_BUDGET_LOG_INTERVAL_MS = 1_000;

export interface ClientBudgetOptions {
  /** Connections one client may hold open; `null`: no limit. */
  maxConnectionsPerClient: number | null;
  /** Messages per second one client may send across its sockets; `null`: no limit. */
  messagesPerSecond: number | null;
  /** Messages one client may send at once (bucket size). */
  messageBurst: number;
  /** Which proxies' X-Forwarded-For to believe (ServerConfig.trust_proxy). */
  trustProxy?: TrustProxySetting;
  /** Where refusals are logged (warn, throttled). */
  logger?: Pick<Logger, 'debug' | 'warn'>;
}

/** The message budget of one client, shared by its sockets. */
export interface MessageMeter {
  /** Charge `n` messages: 0 when charged; else the ms until the client has them (nothing is charged). */
  charge(n?: number): number;
  /** This socket is done (the meter is forgotten with the client's last socket). */
  release(): void;
}

interface Bucket {
  tokens: number;
  last: number;
  refs: number;
}

/**
 * How many of something (connections, gRPC calls) each key holds at once, against one limit. The accounting
 * ClientBudget uses for connections; lib/grpc/server.ts for calls across a client's sessions.
 */
export class KeyedCounter {
  readonly #max: number | null;
  readonly #open = new Map<string, number>();

  constructor(max: number | null) {
    this.#max = max;
  }

  /** Count one for `key`; `false` (nothing counted) when `key` holds the limit already. */
  acquire(key: string): boolean {
    const open = this.#open.get(key) ?? 0;
    if (this.#max !== null && open >= this.#max) return false;
    this.#open.set(key, open + 1);
    return true;
  }

  /** One `acquire` counted has ended. */
  release(key: string): void {
    const left = (this.#open.get(key) ?? 1) - 1;
    if (left > 0) this.#open.set(key, left);
    else this.#open.delete(key);
  }

  /** What `key` holds. */
  count(key: string): number {
    return this.#open.get(key) ?? 0;
  }
}

/** Connections and messages per client of one server. */
export class ClientBudget {
  /** Connections refused since the server started. */
  refused = 0;
  readonly #max: number | null;
  readonly #perMs: number | null;
  readonly #burst: number;
  readonly #open: KeyedCounter;
  readonly #buckets = new Map<string, Bucket>();
  readonly #key = clientKeys(DEFAULT_IPV6_SUBNET);
  readonly #trust: ((addr: string, i: number) => boolean) | null;
  /** Trust by address (a list, subnet or name): only then is a peer known to be the proxy. */
  readonly #trustNamesProxies: boolean;
  readonly #log: NetworkErrorLog | undefined;

  constructor(options: ClientBudgetOptions) {
    this.#max = options.maxConnectionsPerClient;
    this.#open = new KeyedCounter(this.#max);
    this.#perMs = options.messagesPerSecond === null ? null : options.messagesPerSecond / 1000;
    this.#burst = options.messageBurst;
    this.#trust = compileTrust(options.trustProxy ?? false);
    this.#trustNamesProxies = typeof options.trustProxy === 'string' || Array.isArray(options.trustProxy);
    if (this.#trust) proxyAddr();
    this.#log = options.logger && new NetworkErrorLog(options.logger, DEFAULT_CLIENT_BUDGET_LOG_INTERVAL_MS, {
      level: 'warn', message: 'connections refused: client connection limit reached', fields: { max_connections_per_client: this.#max },
    });
  }

  /** Whether connections are counted at all. */
  get limitsConnections(): boolean {
    return this.#max !== null;
  }

  /**
   * The client of a TCP connection; `undefined` when its peer is a proxy trusted by address (it speaks for many
   * clients). Under `true` or a hop count every peer is counted: any of them may be a client connecting directly.
   */
  connectionKey(socket: Pick<Socket, 'remoteAddress'>): string | undefined {
    const address = socket.remoteAddress ?? 'unknown';
    if (this.#trustNamesProxies && this.#trust?.(address, 0)) return undefined;
    return this.#key(address);
  }

  /** The client of a request: the address a trusted proxy forwarded, else the peer (the rate limit's key). */
  requestKey(req: IncomingMessage): string {
    return this.#key(this.#trust ? proxyAddr()(req, this.#trust) : (req.socket.remoteAddress ?? 'unknown'));
  }

  /** Whether the request came through a trusted proxy (its connection was not counted as the client's). */
  viaTrustedProxy(req: IncomingMessage): boolean {
    return this.#trustNamesProxies && this.#trust !== null && this.#trust(req.socket.remoteAddress ?? 'unknown', 0);
  }

  /** Count one connection of `key`; `false` (nothing counted, one throttled warn line) past the limit. */
  acquire(key: string, where: string): boolean {
    if (this.#open.acquire(key)) return true;
    this.refused++;
    this.#log?.note(where, { code: 'max_connections_per_client' });
    return false;
  }

  /** A connection `acquire` counted has closed. */
  release(key: string): void {
    this.#open.release(key);
  }

  /** Connections `key` holds open. */
  connections(key: string): number {
    return this.#open.count(key);
  }

  /** The message meter of `key` for one more socket (`release()` it when the socket closes); `undefined` when messages are not limited. */
  messages(key: string): MessageMeter | undefined {
    const perMs = this.#perMs;
    if (perMs === null) return undefined;
    let bucket = this.#buckets.get(key);
    if (!bucket) this.#buckets.set(key, (bucket = { tokens: this.#burst, last: performance.now(), refs: 0 }));
    bucket.refs++;
    const b = bucket;
    const burst = this.#burst;
    let released = false;
    return {
      charge: (n = 1) => {
        const now = performance.now();
        b.tokens = Math.min(burst, b.tokens + (now - b.last) * perMs);
        b.last = now;
        if (b.tokens >= n) {
          b.tokens -= n;
          return 0;
        }
        return Math.max(1, Math.ceil((n - b.tokens) / perMs));
      },
      release: () => {
        if (released) return;
        released = true;
        if (--b.refs === 0) this.#buckets.delete(key);
      },
    };
  }
}

/**
 * The start-up warning for a `trust_proxy` that trusts whoever connects (`true`, a hop count ≥ 1), or undefined. Under
 * those, a client reaching the server directly writes its own X-Forwarded-For and so picks its own key: the rate
 * limit, CPU budget and per-client WebSocket cap are each a fresh budget per forged address (issue 44 #5). Safe:
 * the proxies' addresses, subnets or names, which proxy-addr believes only from those peers.
 */
export function trustProxyWarning(setting: TrustProxySetting): string | undefined {
  if (setting === true) {
    return 'trust_proxy: true believes X-Forwarded-For from any peer: a client that reaches this server directly chooses its own address, '
      + 'and with it a fresh rate limit, CPU budget and WebSocket cap per request. Set trust_proxy to your proxies\' addresses or subnets '
      + '(e.g. "10.0.0.0/8", "loopback"), and let only them reach this port. Connections are counted per peer (max_connections_per_client), the proxy\'s too.';
  }
  if (typeof setting === 'number' && setting > 0) {
    return `trust_proxy: ${setting} (a hop count) believes the last ${setting} X-Forwarded-For entries from any peer: a client that reaches this server directly `
      + 'chooses its own address, and with it a fresh rate limit, CPU budget and WebSocket cap per request. Set trust_proxy to your proxies\' addresses or '
      + 'subnets (e.g. "10.0.0.0/8", "loopback"), and let only them reach this port. Connections are counted per peer (max_connections_per_client), the proxy\'s too.';
  }
  return undefined;
}

const BUDGET_EXTENSION = 'client-budget';

/** The one ClientBudget of an App, from its ServerConfig (created on first use). */
export function clientBudgetOf(host: { readonly config: Readonly<ServerConfig>; readonly logger?: Pick<Logger, 'debug' | 'warn'>; readonly extensions: Map<string, unknown> }): ClientBudget {
  let budget = host.extensions.get(BUDGET_EXTENSION) as ClientBudget | undefined;
  if (!budget) {
    const c = host.config;
    budget = new ClientBudget({
      maxConnectionsPerClient: c.max_connections_per_client,
      messagesPerSecond: c.ws_client_messages_per_second,
      messageBurst: c.ws_client_message_burst,
      trustProxy: c.trust_proxy,
      logger: host.logger,
    });
    host.extensions.set(BUDGET_EXTENSION, budget);
  }
  return budget;
}

/**
 * Marks a socket accepted past its client's connection limit: it is answered "try later" and closed. A
 * property, not a WeakSet: an HTTP/2 session hands out a Proxy of its socket, which forwards reads.
 */
const OVER_BUDGET = Symbol('keel.overClientBudget');

/** Whether `socket` (or an HTTP/2 session's proxy of it) was accepted past its client's connection limit. */
export function isOverClientBudget(socket: object | null | undefined): boolean {
  return socket != null && (socket as Record<symbol, unknown>)[OVER_BUDGET] === true;
}

/** How long a socket over its client's limit may take to send its request (and get its refusal), ms: 2000. */
export const OVER_BUDGET_GRACE_MS = 2_000;

/**
 * Count every accepted TCP connection of `server` against its client (the 'connection' event: HTTP/1.1,
 * WebSocket and h2c alike). One past the limit is marked (isOverClientBudget), so its first request is
 * refused in its protocol, and destroyed after OVER_BUDGET_GRACE_MS whatever it sends.
 */
export function countConnections(server: { on(event: 'connection', fn: (socket: Socket) => void): unknown }, budget: ClientBudget): void {
  if (!budget.limitsConnections) return;
  server.on('connection', (socket: Socket) => {
    const key = budget.connectionKey(socket);
    if (key === undefined) return;
    if (budget.acquire(key, 'connection')) {
      socket.once('close', () => budget.release(key));
      return;
    }
    (socket as unknown as Record<symbol, unknown>)[OVER_BUDGET] = true;
    const timer = setTimeout(() => socket.destroy(), OVER_BUDGET_GRACE_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}
