/**
 * Putting WebSocket routes on an App (docs/architecture.md: `app.upgrade`, `app.preShutdown`).
 * Upgrades run the App's server-level middleware as a guard (request id, rate limit, JWT / API key
 * auth), then the route's own origin check, before the handshake.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ProtocolHost, ProtocolPlugin } from '../app/plugin.js';
import type { Middleware } from '../http/request.js';
import type { PubSub } from '../pubsub/memory.js';
import type { ServerConfig } from '../records/server.js';
import { fairnessOfConfig } from './fairness.js';
import { clientBudgetOf, type ClientBudget } from '../server/client-budget.js';
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
  /** Where `session.subscribe(topic)` listens (the App's pub/sub). */
  readonly pubsub?: PubSub;
  /** The budget of each client across its sockets (lib/server/client-budget.ts). Default none. */
  readonly clientBudget?: ClientBudget;
  /** The App's settings: its `ws_*` keys are the defaults of every route's `fairness`. */
  readonly config?: Readonly<ServerConfig>;
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
  const fairness = { ...fairnessOfConfig(app.config), ...rest.fairness };
  const upgrade = createWebSocketUpgradeHandler(handler, { pubsub: app.pubsub, clientBudget: app.clientBudget, ...rest, fairness, guards: all });
  app.upgrade(path, upgrade);
  app.preShutdown(() => upgrade.close());
}

/** Key of the App's server guard in `host.extensions`. */
const SERVER_GUARD_EXTENSION = 'ws.serverGuard';

/** The App's server-level middleware as one upgrade guard, shared by its WebSocket routes and GraphQL subscriptions. */
export function serverGuardOf(host: ProtocolHost): UpgradeGuard {
  let guard = host.extensions.get(SERVER_GUARD_EXTENSION) as UpgradeGuard | undefined;
  if (!guard) {
    guard = lazyMiddlewareGuard(() => host.serverMiddleware());
    host.extensions.set(SERVER_GUARD_EXTENSION, guard);
  }
  return guard;
}

/** The WebSocketHost view of a ProtocolHost (its methods bound: the spread below copies no prototype). */
function wsHostOf(host: ProtocolHost): WebSocketHost {
  return {
    upgrade: (path, handler) => host.upgrade(path, handler),
    preShutdown: (fn) => host.preShutdown(fn),
    pubsub: host.pubsub,
    config: host.config,
  };
}

/** WebSocket as an App protocol (lib/app/plugin.ts): the routes of `app.ws()`. Loaded by `app.ready()` (lib/app/builtins.ts). */
export const protocol: ProtocolPlugin = {
  name: 'ws',
  install(host, registrations) {
    for (const { args } of registrations) {
      installWebSocketRoute({ ...wsHostOf(host), clientBudget: clientBudgetOf(host) }, args[0] as string, args[1] as WebSocketHandler, (args[2] ?? {}) as AppWebSocketOptions, serverGuardOf(host));
    }
  },
};
