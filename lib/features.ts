/**
 * Which middleware a route runs: server-level features from ServerConfig, overridden or extended
 * by the route's records, in the documented order (docs/architecture.md).
 */
import type { App, Mount, MountOptions } from './app.js';
import type { Middleware } from './request.js';
import type { RouteDefinition } from './route-definition.js';

/** The chain for requests that match no keel route (merged Express routers). */
export function serverFeatures(_app: App, uses: readonly Middleware[], _mount?: MountOptions): Middleware[] {
  return [...uses];
}

/** The chain of a keel route: server features (unless overridden) then per-route records. */
export function routeFeatures(_app: App, route: RouteDefinition): Middleware[] {
  return [...route.middleware];
}

export function mountFeatures(_app: App, mount: Mount): Middleware[] {
  return [...(mount.options.perRoute?.middleware ?? [])];
}

/** The CORS preflight middleware of a route with a CorsConfig, answered on OPTIONS. */
export function preflightFor(_app: App, _route: RouteDefinition): Middleware | undefined {
  return undefined;
}
