/**
 * Which middleware a route runs: server-level features from ServerConfig, overridden or extended
 * by the route's records, in the documented order (docs/architecture.md):
 *
 *   requestId → httpTrace → securityHeaders → cors → rateLimit → jwtAuth / apiKeyAuth →
 *   authorization → timeout → compression → route middleware → core (hooks, body, validation, handler)
 *
 * Server-level instances are created once per App, so state such as a global rate-limit bucket is
 * shared by every route. A feature that is off is simply absent from the chain.
 */
import type { AppCore as App, Mount, MountOptions } from './plugin.js';
import type { Middleware } from '../http/request.js';
import type { RouteDefinition } from './route-definition.js';
import { requestId } from '../../middleware/request-id/index.js';
import { httpTrace } from '../../middleware/http-trace/index.js';
import { securityHeaders, type SecurityHeadersOptions } from '../../middleware/security-headers/index.js';
import { cors } from '../../middleware/cors/index.js';
import { rateLimit, type RateLimitExtensions, type RateLimitStore } from '../../middleware/rate-limit/index.js';
import { jwtAuth } from '../../middleware/jwt-auth/index.js';
import { apiKeyAuth } from '../../middleware/api-key-auth/index.js';
import { authorization } from '../../middleware/authorization/index.js';
import { timeout } from '../../middleware/timeout/index.js';
import { compression } from '../../middleware/compression/index.js';
import { staticFiles } from '../../middleware/static-files/index.js';

interface ServerFeatureSet {
  requestId?: Middleware;
  trace?: Middleware;
  security?: Middleware;
  rateLimit?: Middleware;
  jwt?: Middleware;
  apiKey?: Middleware;
  timeout?: Middleware;
  compression?: Middleware;
  staticFiles?: Middleware;
}

const cache = new WeakMap<App, ServerFeatureSet>();

/** ServerConfig.trust_proxy for the rate limit's client address (nothing when off, the default). */
function trustOf(app: App): { trustProxy?: App['config']['trust_proxy'] } {
  return app.config.trust_proxy === false ? {} : { trustProxy: app.config.trust_proxy };
}

/** Server-level feature instances, built once per App from its ServerConfig. */
function serverSet(app: App): ServerFeatureSet {
  let set = cache.get(app);
  if (set) return set;
  const c = app.config;
  const sec = app.securityHeaders;
  set = {
    requestId: c.enable_request_id ? requestId({ enabled: true }) : undefined,
    trace: c.enable_http_trace ? httpTrace({ logger: app.logger }) : undefined,
    security: sec === false ? undefined : securityHeaders(sec),
    rateLimit: c.rate_limit?.enabled ? rateLimit(c.rate_limit, { ...trustOf(app), ...app.rateLimitOptions }) : undefined,
    jwt: c.jwt_auth ? jwtAuth({ ...c.jwt_auth, logger: app.logger }) : undefined,
    apiKey: c.api_key_auth ? apiKeyAuth(c.api_key_auth) : undefined,
    timeout: c.request_timeout !== null ? timeout({ request_timeout: c.request_timeout }) : undefined,
    compression: c.compression?.enabled ? compression(c.compression) : undefined,
    staticFiles: c.static_files.length ? staticFiles(c.static_files) : undefined,
  };
  cache.set(app, set);
  return set;
}

function present(list: (Middleware | undefined | false | null)[]): Middleware[] {
  return list.filter((m): m is Middleware => typeof m === 'function');
}

/** The chain for requests that match no keel route: static files, then merged Express routers. */
export function fallbackFeatures(app: App, uses: readonly Middleware[]): Middleware[] {
  const s = serverSet(app);
  return present([s.requestId, s.trace, s.security, s.rateLimit, s.jwt, s.apiKey, s.timeout, s.compression, ...uses]);
}

/** The server-level rate limit (one bucket store per App), so gRPC calls draw from the same buckets as HTTP. */
export function serverRateLimit(app: App): Middleware | undefined {
  return serverSet(app).rateLimit;
}

/** Static-file mounts of the ServerConfig, tried before merged routers and the 404. */
export function staticFeature(app: App): Middleware | undefined {
  return serverSet(app).staticFiles;
}

/** The chain of a keel route: server features (unless the route overrides them), then its records. */
export function routeFeatures(app: App, route: RouteDefinition, uses: readonly Middleware[]): Middleware[] {
  const s = serverSet(app);
  const rid = route.requestId ? requestId({ enabled: route.requestId.enabled }) : s.requestId;
  const jwt = route.jwtAuth ? (route.jwtAuth.enabled ? jwtAuth({ ...route.jwtAuth, logger: app.logger }) : undefined) : s.jwt;
  const apiKey = route.apiKeyAuth ? (route.apiKeyAuth.enabled ? apiKeyAuth(route.apiKeyAuth) : undefined) : s.apiKey;
  const to = route.requestTimeout !== undefined ? (route.requestTimeout === null ? undefined : timeout({ request_timeout: route.requestTimeout })) : s.timeout;
  return present([
    rid,
    s.trace,
    s.security,
    corsFor(app, route),
    rateLimitFor(app, route, s),
    jwt,
    apiKey,
    // Without JWT authentication nothing on this route produces claims: a 403, not a Bearer challenge.
    route.authorization ? authorization({ ...route.authorization, challenge: jwt !== undefined }) : undefined,
    to,
    route.compression ? (route.compression.enabled ? compression(route.compression) : undefined) : s.compression,
    ...uses,
    ...route.middleware,
  ]);
}

/**
 * A route's own rate limit takes the server-level options (AppOptions.rateLimit: store, key,
 * ipv6Subnet, passOnStoreError), so a shared RedisStore limits the route across instances too. Its
 * keys are namespaced by route (`route:<methods> <path>:<client>`): the route's bucket is neither the
 * server-level one nor another route's. Without a store each route limit keeps its own memory store.
 */
function routeRateLimitOptions(app: App, route: RouteDefinition): RateLimitExtensions {
  const base = app.rateLimitOptions;
  if (!base.store) return base;
  return { ...base, store: namespacedStore(base.store, `route:${route.methods.join(',')} ${route.path}:`) };
}

function namespacedStore(store: RateLimitStore, prefix: string): RateLimitStore {
  return { take: (key, policy) => store.take(prefix + key, policy) };
}

/** The chain of a mounted protocol handler (JSON-RPC, GraphQL, docs pages). */
export function mountFeatures(app: App, mount: Mount, uses: readonly Middleware[]): Middleware[] {
  const s = serverSet(app);
  const o: MountOptions = mount.options;
  const security = o.securityHeaders === undefined ? s.security : o.securityHeaders === false ? undefined : securityHeaders(o.securityHeaders);
  return present([
    s.requestId,
    s.trace,
    security,
    s.rateLimit,
    o.public ? undefined : s.jwt,
    o.public ? undefined : s.apiKey,
    s.timeout,
    s.compression,
    ...uses,
    ...(o.middleware ?? []),
  ]);
}

const corsInstances = new WeakMap<RouteDefinition, Middleware>();
const serverCors = new WeakMap<App, Middleware>();
/**
 * A route's CORS: its own `cors` record, else ServerConfig.cors (one instance per App), else none.
 * A CorsConfig answers an actual request from a disallowed origin with a 403, as the reference does
 * (spikard-http cors.rs, validate_cors_request): the browser would block the response anyway, and
 * refusing also stops the side effects of a cross-origin "simple" POST. A request from the app's own
 * origin (trust_proxy decides whether X-Forwarded-Proto/-Host count) is not a CORS request and is
 * never refused. The Express factory keeps the cors package's default (pass on without CORS headers).
 */
function corsFor(app: App, route: RouteDefinition): Middleware | undefined {
  const own = route.cors;
  const cache: WeakMap<object, Middleware> = own ? corsInstances : serverCors;
  const key: object = own ? route : app;
  const record = own ? own.toJSON() : app.config.cors;
  if (!record) return undefined;
  let mw = cache.get(key);
  if (!mw) {
    mw = cors({ ...record, rejectDisallowedOrigins: true, ...trustOf(app) });
    cache.set(key, mw);
  }
  return mw;
}

/** A route's own rate limit (one instance, shared by the route and its preflights), else the server's. */
const routeRateLimits = new WeakMap<RouteDefinition, Middleware>();
function rateLimitFor(app: App, route: RouteDefinition, s: ServerFeatureSet): Middleware | undefined {
  if (!route.rateLimit) return s.rateLimit;
  // A route's record replaces the server's; `enabled: false` turns the limit off for the route.
  if (!route.rateLimit.enabled) return undefined;
  let mw = routeRateLimits.get(route);
  if (!mw) {
    mw = rateLimit(route.rateLimit, { ...trustOf(app), ...routeRateLimitOptions(app, route) });
    routeRateLimits.set(route, mw);
  }
  return mw;
}

/**
 * The chain answering CORS preflights (OPTIONS) for a route with a CorsConfig (its own or ServerConfig.cors): the route's request id,
 * tracing, security headers and rate limit, so a preflight answer carries the same always-present
 * headers as any other (docs/middleware.md) and a preflight flood draws from the same bucket (as the
 * reference, whose rate-limit layer wraps its preflight routes). The rate limit runs before CORS here,
 * since CORS answers the preflight itself; a refused preflight fails in the browser either way.
 * Preflights carry no credentials (Fetch standard), so authentication is not applied to them.
 */
export function preflightFeatures(app: App, route: RouteDefinition): Middleware[] | undefined {
  const corsMw = corsFor(app, route);
  if (!corsMw) return undefined;
  const s = serverSet(app);
  return present([route.requestId ? requestId({ enabled: route.requestId.enabled }) : s.requestId, s.trace, s.security, rateLimitFor(app, route, s), corsMw]);
}

export type { SecurityHeadersOptions };
