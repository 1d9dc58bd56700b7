/**
 * Putting WebSocket routes on an App (docs/architecture.md: `app.upgrade`, `app.preShutdown`).
 * Upgrades run the App's server-level middleware as a guard (request id, rate limit, JWT / API key
 * auth), then the route's own origin check, before the handshake.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { provideProtocol } from '../builtins.js';
import type { Middleware } from '../request.js';
import { middlewareGuard, originGuard, type UpgradeGuard } from './guard.js';
import { createWebSocketUpgradeHandler, type WebSocketHandler, type WebSocketRouteOptions } from './upgrade.js';

export interface AppWebSocketOptions extends WebSocketRouteOptions {
  /** A CorsConfig (snake_case or camelCase): browser upgrades from other origins get 403. Default: any origin. */
  cors?: unknown;
}

/** What installWebSocketRoute needs from an App. */
export interface WebSocketHost {
  upgrade(path: string, handler: (req: IncomingMessage, socket: Duplex, head: Buffer) => void): unknown;
  preShutdown(fn: () => void | Promise<void>): unknown;
}

/**
 * A guard that runs `chain()` as middleware; the chain is read on the first upgrade, once the App's
 * middleware list is final (routes are registered before `use()` calls may have finished).
 */
export function lazyMiddlewareGuard(chain: () => readonly Middleware[]): UpgradeGuard {
  let guard: UpgradeGuard | undefined;
  return function serverMiddlewareGuard(req) {
    guard ??= middlewareGuard(chain());
    return guard(req);
  };
}

/** Register a WebSocket route on `app` behind `serverGuard`; connections close with 1001 on shutdown. */
export function installWebSocketRoute(app: WebSocketHost, path: string, handler: WebSocketHandler, options: AppWebSocketOptions, serverGuard?: UpgradeGuard): void {
  const { cors, guards = [], ...rest } = options;
  const all: UpgradeGuard[] = [];
  if (serverGuard) all.push(serverGuard);
  // Parsed now: a bad CorsConfig is a ConfigError at registration, not at the first upgrade.
  if (cors !== undefined) all.push(originGuard(cors));
  all.push(...guards);
  const upgrade = createWebSocketUpgradeHandler(handler, { ...rest, guards: all });
  app.upgrade(path, upgrade);
  app.preShutdown(() => upgrade.close());
}

/** What the App calls (lib/builtins.ts); registered on evaluation so the App uses this very copy. */
export const webSocketProtocol = { installWebSocketRoute, lazyMiddlewareGuard };
provideProtocol('ws', webSocketProtocol);
