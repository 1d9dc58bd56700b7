/**
 * WebSocket routes on `ws` in noServer mode: the http server's `upgrade` event is routed by path (the
 * App's router, or `WebSocketRouter` below when used standalone), guards run, then ws completes the
 * handshake. `ws` enforces the frame rules: a message over `maxPayload` closes with 1009 and a text
 * message that is not UTF-8 closes with 1007 (RFC 6455 §7.4.1, §8.1).
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import findMyWay from 'find-my-way';
import { WebSocketServer, type WebSocket } from 'ws';
import { HttpError } from '../http/errors.js';
import type { KeelRequest } from '../http/request.js';
import { handshakeProblem, notFoundUpgrade, rejectUpgrade, runGuards, type UpgradeGuard, type UpgradeHeaders } from './guard.js';
import { WebSocketSession } from './session.js';
import { MemoryPubSub, type PubSub } from '../pubsub/memory.js';
import { applyFairness, CLOSE_TRY_AGAIN_LATER, fairnessOptions, type RateErrorFrame, type WebSocketFairness, type WebSocketFairnessOptions } from './fairness.js';
import { slicedPubSub } from './fanout.js';
import type { ClientBudget } from '../server/client-budget.js';

/** Default largest message accepted, bytes (1 MiB; ws's own default is 100 MiB). */
export const DEFAULT_MAX_PAYLOAD = 1024 * 1024;
/** Close code when a handler throws (RFC 6455 §7.4.1: 1011 internal error). */
export const CLOSE_INTERNAL_ERROR = 1011;
/** Close code sent to open connections on shutdown (RFC 6455 §7.4.1: 1001 going away). */
export const CLOSE_GOING_AWAY = 1001;
/**
 * Open connections per WebSocket route; one more handshake is refused with 503 (problem+json,
 * Retry-After). Each connection holds socket buffers and, on a GraphQL route, up to
 * DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION subscriptions (about 5 KB of heap each).
 */
export const DEFAULT_MAX_CONNECTIONS = 1000;
/**
 * At shutdown, how long a client has to answer the 1001 close frame before its socket is destroyed, ms:
 * 1000. ws waits 30 s for the answer (its closeTimeout), so one client that never answers (gone, or
 * not reading) held a server's whole `shutdown_timeout` (issue 26); RFC 6455 §7.1.1 lets the server
 * close the TCP connection itself once it has sent its close frame.
 */
export const SHUTDOWN_CLOSE_GRACE_MS = 1000;

export type WebSocketHandler = (session: WebSocketSession) => void | Promise<void>;

/** Path parameters found by WebSocketRouter, per upgrade request. */
const routeParams = new WeakMap<IncomingMessage, Record<string, string>>();

export interface WebSocketRouteOptions {
  /** Largest message in bytes; larger ones close the connection with 1009. Default DEFAULT_MAX_PAYLOAD (1 MiB). */
  maxPayload?: number;
  /** Checks run before the handshake (auth, origin, request id). Default none. */
  guards?: readonly UpgradeGuard[];
  /** Subprotocols this route speaks (Sec-WebSocket-Protocol, RFC 6455 §1.9); the client's first match wins. Default none. */
  protocols?: readonly string[];
  /** Open connections at once; more are refused with 503. Default DEFAULT_MAX_CONNECTIONS (1000). */
  maxConnections?: number;
  /** Where `session.subscribe(topic)` listens. Default: a MemoryPubSub of this route (an App passes `AppOptions.pubsub`). */
  pubsub?: PubSub;
  /**
   * Per-socket message rate (control frames included), send-buffer bound and idle timeout (lib/ws/fairness.ts).
   * Default: the App's `ws_*` settings, else DEFAULT_WS_MESSAGES_PER_SECOND (100) / DEFAULT_WS_MESSAGE_BURST (200) /
   * close 1008, DEFAULT_WS_MAX_BUFFERED_BYTES (1 MiB) / close 1013, DEFAULT_WS_IDLE_TIMEOUT (120 s) / close 1001.
   */
  fairness?: WebSocketFairnessOptions;
  /**
   * The budget of each client across its sockets (lib/server/client-budget.ts): its messages per second, and, behind
   * a trusted proxy, its WebSockets (past the limit: close 1013). An App passes its own; default none.
   */
  clientBudget?: ClientBudget;
}

/** `value` (default DEFAULT_MAX_CONNECTIONS) checked as a positive integer. */
export function maxConnectionsOption(value: number | undefined): number {
  const max = value ?? DEFAULT_MAX_CONNECTIONS;
  if (!Number.isInteger(max) || max < 1) throw new TypeError(`maxConnections must be a positive integer, got ${String(value)}`);
  return max;
}

/** A node `upgrade` listener for one route, plus shutdown. */
export interface UpgradeHandler {
  (req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Close every open connection with 1001 and stop accepting. */
  close(): Promise<void>;
  readonly server: WebSocketServer;
}

/**
 * Wrap a noServer WebSocketServer as an upgrade handler that runs `guards` first. Used for plain
 * WebSocket routes and for GraphQL subscriptions (graphql-ws listens on the same kind of server).
 */
export function guardedUpgrade(
  wss: WebSocketServer, guards: readonly UpgradeGuard[], onSocket: (ws: WebSocket, req: KeelRequest) => void,
  maxConnections: number = DEFAULT_MAX_CONNECTIONS,
  fairness: WebSocketFairness = fairnessOptions(),
  rateErrorFrame?: RateErrorFrame,
  budget?: ClientBudget,
): UpgradeHandler {
  const extraHeaders = new WeakMap<IncomingMessage, UpgradeHeaders>();
  wss.on('headers', (headers: string[], req: IncomingMessage) => {
    for (const [k, v] of Object.entries(extraHeaders.get(req) ?? {})) headers.push(`${k}: ${v}`);
  });
  // Malformed handshakes: problem+json instead of ws's text/html (handshakeProblem).
  // The guards' headers (X-Request-ID) go on this answer as they would on the 101.
  wss.on('wsClientError', (err: Error, socket: Duplex, req: IncomingMessage) => rejectUpgrade(socket, handshakeProblem(err, extraHeaders.get(req))));
  let closing = false;
  const handler = function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    // A reset while guards run must not crash the process.
    socket.on('error', () => socket.destroy());
    runGuards(guards, req as KeelRequest).then(
      (headers) => {
        if (socket.destroyed) return;
        // ws would answer a text/html 503 once closed; shutdown is the server's state, so say so.
        if (closing) return rejectUpgrade(socket, new HttpError(503, 'The server is shutting down', { headers: { 'Retry-After': '1' } }));
        // ws tracks open connections (clientTracking); handshakes in flight are few and short.
        if (wss.clients.size >= maxConnections) {
          return rejectUpgrade(socket, new HttpError(503, `This WebSocket route has its ${maxConnections} connections open; try again later`, { headers: { ...headers, 'Retry-After': '5' } }));
        }
        extraHeaders.set(req, headers);
        wss.handleUpgrade(req, socket, head, (ws) => {
          if (!budget) {
            // Before any listener: the rate applies to every message they see, the bound to every send.
            applyFairness(ws, fairness, rateErrorFrame);
            return onSocket(ws, req as KeelRequest);
          }
          const key = budget.requestKey(req);
          // Behind a trusted proxy the TCP connection was not counted (it is the proxy's); the WebSocket is this client's.
          if (budget.limitsConnections && budget.viaTrustedProxy(req)) {
            if (!budget.acquire(key, 'websocket')) return ws.close(CLOSE_TRY_AGAIN_LATER, 'Too many connections from this client');
            ws.once('close', () => budget.release(key));
          }
          applyFairness(ws, fairness, rateErrorFrame, budget.messages(key));
          onSocket(ws, req as KeelRequest);
        });
      },
      (err) => rejectUpgrade(socket, err),
    );
  } as UpgradeHandler;
  Object.defineProperty(handler, 'server', { value: wss });
  handler.close = () => new Promise<void>((resolve) => {
    closing = true;
    for (const client of wss.clients) client.close(CLOSE_GOING_AWAY, 'Server shutting down');
    const cut = setTimeout(() => {
      for (const client of wss.clients) client.terminate();
    }, SHUTDOWN_CLOSE_GRACE_MS);
    cut.unref();
    wss.close(() => {
      clearTimeout(cut);
      resolve();
    });
  });
  return handler;
}

/**
 * An upgrade handler for a WebSocket route: each connection becomes a WebSocketSession given to
 * `handler`. A handler that throws closes the connection with 1011 (the error is not sent).
 *
 * @example
 * const echo = createWebSocketUpgradeHandler(async (ws) => {
 *   for await (const m of ws) if (m.type === 'text' || m.type === 'binary') await ws.send(m);
 * });
 * server.on('upgrade', echo);
 */
export function createWebSocketUpgradeHandler(handler: WebSocketHandler, options: WebSocketRouteOptions = {}): UpgradeHandler {
  const maxPayload = options.maxPayload ?? DEFAULT_MAX_PAYLOAD;
  if (!Number.isInteger(maxPayload) || maxPayload < 1) throw new TypeError(`maxPayload must be a positive integer, got ${String(maxPayload)}`);
  const maxConnections = maxConnectionsOption(options.maxConnections);
  const protocols = options.protocols ?? [];
  const fairness = fairnessOptions(options.fairness);
  // Deliveries to this route's sessions are admitted in slices per turn of the loop (lib/ws/fanout.ts).
  const pubsub = slicedPubSub(options.pubsub ?? new MemoryPubSub());
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload,
    handleProtocols: (offered: Set<string>) => protocols.find((p) => offered.has(p)) ?? false,
  });
  return guardedUpgrade(wss, options.guards ?? [], (ws, req) => {
    const session = new WebSocketSession(ws, req, routeParams.get(req) ?? {}, pubsub);
    Promise.resolve()
      .then(() => handler(session))
      .catch(() => session.close(CLOSE_INTERNAL_ERROR, 'Internal error'));
  }, maxConnections, fairness, undefined, options.clientBudget);
}

/**
 * Path routing for upgrades when no App is involved (an App routes with `app.upgrade`): attach to an
 * http server; unknown paths get a 404 problem.
 */
export class WebSocketRouter {
  readonly #router = findMyWay();
  readonly #handlers: UpgradeHandler[] = [];

  /** Route `path` (find-my-way syntax, e.g. `/rooms/:id`) to `handler`. */
  on(path: string, handler: UpgradeHandler): this {
    this.#router.on('GET', path, () => {}, { handler });
    this.#handlers.push(handler);
    return this;
  }

  /** The `upgrade` listener. */
  readonly handle = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const found = this.#router.find('GET', (req.url ?? '/').split('?')[0]!);
    const handler = (found?.store as { handler?: UpgradeHandler } | undefined)?.handler;
    if (!found || !handler) return notFoundUpgrade(socket, req);
    routeParams.set(req, { ...found.params } as Record<string, string>);
    handler(req, socket, head);
  };

  attach(server: Server): this {
    server.on('upgrade', this.handle);
    return this;
  }

  /** Close every route's connections (1001). */
  async close(): Promise<void> {
    await Promise.all(this.#handlers.map((h) => h.close()));
  }
}
