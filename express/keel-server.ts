/**
 * keel's server behaviour for app.listen(), opt-in through two app settings (Express has neither):
 *
 * - `app.set('connection limits', true | ConnectionLimitsInput)`: keel's connection limits (docs/operations.md):
 *   headers/request/keep-alive deadlines, and an unread request body bounded after an early answer.
 * - `app.set('graceful shutdown', true | { timeout_ms })`: on SIGTERM or SIGINT the server stops accepting, lets
 *   every in-flight request finish (answers from then on say `Connection: close`, RFC 9112 §9.6), closes idle
 *   connections, then the process exits 0; after `timeout_ms` (default DEFAULT_EXPRESS_SHUTDOWN_TIMEOUT_MS, 10000)
 *   the remaining connections are closed.
 */
import type http from 'node:http';
import net from 'node:net';
import { boundUnreadBody, ConnectionLimits, type ConnectionLimitsInput } from '../lib/server/connections.js';
import { ConfigError } from '../lib/http/errors.js';

/** How long graceful shutdown waits for in-flight requests before closing connections, ms: 10000. */
export const DEFAULT_EXPRESS_SHUTDOWN_TIMEOUT_MS = 10_000;

/** Options of the 'graceful shutdown' setting. */
export interface GracefulShutdownOptions {
  /** Milliseconds in-flight requests get before their connections are closed (default 10000). */
  timeout_ms?: number;
}

/** Applies the app's 'connection limits' and 'graceful shutdown' settings to the server app.listen() created. */
export function applyKeelSettings(app: any, server: http.Server): void {
  const limitsSetting = app.get('connection limits') as boolean | ConnectionLimitsInput | undefined;
  let limits: ConnectionLimits | undefined;
  if (limitsSetting) {
    limits = ConnectionLimits.parse(limitsSetting === true ? {} : limitsSetting, "app.set('connection limits')");
    server.headersTimeout = limits.headers_timeout_ms;
    server.requestTimeout = limits.request_receive_timeout_ms;
    server.keepAliveTimeout = limits.keep_alive_timeout_ms;
    // node reads this when the server starts listening (its deadline timer), so setting it before
    // server.listen() applies it. Left at node's 30 s, a 2 s headers deadline closed a slowloris only
    // after 30 s, and the 30 s / 60 s defaults after 57.7 s / 71 s (issue 35).
    (server as http.Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = limits.connections_check_interval_ms;
    const bounded = limits;
    server.prependListener('request', (req, res) => boundUnreadBody(req, res, bounded));
  }
  const graceful = app.get('graceful shutdown') as boolean | GracefulShutdownOptions | undefined;
  if (!graceful) return;
  const timeoutMs = graceful === true ? DEFAULT_EXPRESS_SHUTDOWN_TIMEOUT_MS : graceful.timeout_ms ?? DEFAULT_EXPRESS_SHUTDOWN_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs < 0) {
    throw new ConfigError(`app.set('graceful shutdown'): timeout_ms must be a non-negative integer of milliseconds, got ${JSON.stringify(timeoutMs)}; pass e.g. { timeout_ms: 10000 }.`,
      { record: 'express app settings', path: "app.set('graceful shutdown')", key: 'timeout_ms', value: timeoutMs });
  }
  const idleGraceMs = limits?.shutdown_idle_grace_ms ?? 500;
  const onSignal = () => {
    void shutdown(server, timeoutMs, idleGraceMs).then(() => process.exit(0));
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  server.once('close', () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  });
}

/** Stops accepting, lets in-flight requests finish, closes idle connections; closes the rest after `timeoutMs`. */
function shutdown(server: http.Server, timeoutMs: number, idleGraceMs: number): Promise<void> {
  // answers from now on (and those not started yet) tell keep-alive clients not to reuse the connection
  server.prependListener('request', (_req, res: http.ServerResponse) => { res.shouldKeepAlive = false; });
  // Not http.Server#close(): it also destroys idle keep-alive connections at once, and a request may already be on
  // the wire to one of them (lib/server/server.ts does the same).
  const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
  const sweep = setInterval(() => server.closeIdleConnections(), Math.max(idleGraceMs, 10));
  let timer: NodeJS.Timeout | undefined;
  const forced = new Promise<void>((resolve) => {
    timer = setTimeout(() => { server.closeAllConnections(); resolve(); }, timeoutMs);
  });
  return Promise.race([closed, forced]).finally(() => {
    clearInterval(sweep);
    clearTimeout(timer);
  });
}
