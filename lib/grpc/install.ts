/**
 * gRPC on an App: `app.grpc(proto, service, handlers)` registers services; the installer (lib/app/builtins.ts)
 * swaps in the dual HTTP/1.1 + h2c server when ServerConfig.grpc is set and enabled, applies the server-level
 * rate limit (the HTTP routes' buckets), JWT / API-key auth and request ids to calls, and drains HTTP/2
 * sessions (GOAWAY) when shutdown begins.
 */
import { isExpectedNetworkError, networkErrorLog } from '../ops/net-errors.js';
import type { ProtocolHost as App, ProtocolPlugin } from '../app/plugin.js';
import { AppError } from '../http/errors.js';
import type { Middleware } from '../http/request.js';
import { jwtAuth } from '../../middleware/jwt-auth/index.js';
import { apiKeyAuth } from '../../middleware/api-key-auth/index.js';
import { guardFromMiddleware } from './guard.js';
import { createGrpcRouter, type GrpcProtoSource, type GrpcRouter, type GrpcServiceHandlers, type GrpcServiceOptions } from './router.js';
import { createDualServer, type GrpcAttachment } from './server.js';
import { h2AbuseLimitsOf } from './h2-abuse.js';
import { grpcTracing } from '../observability/grpc-spans.js';
import { workGateOf } from '../server/cost.js';

/** Key of keel's gRPC state in `app.extensions`. */
export const GRPC_EXTENSION = 'grpc';

export interface GrpcAppState {
  readonly router: GrpcRouter;
  /** Set once the server is created (listen). */
  attachment: GrpcAttachment | undefined;
}

/** The App's gRPC registry, created on first use. */
export function grpcStateOf(app: App): GrpcAppState {
  let state = app.extensions.get(GRPC_EXTENSION) as GrpcAppState | undefined;
  if (!state) {
    state = { router: createGrpcRouter(), attachment: undefined };
    app.extensions.set(GRPC_EXTENSION, state);
  }
  return state;
}

/** What `app.grpc()` does. Throws AppError when ServerConfig.grpc is null: the service would never be served. */
export function registerGrpcService(app: App, source: GrpcProtoSource, serviceName: string, handlers: GrpcServiceHandlers, options?: GrpcServiceOptions): void {
  if (!app.config.grpc) {
    throw new AppError('Route', `gRPC service "${serviceName}" registered while ServerConfig.grpc is null; set grpc (e.g. { grpc: {} }) to serve it`);
  }
  grpcStateOf(app).router.addService(source, serviceName, handlers, options);
}

/** Installer: nothing unless ServerConfig.grpc is enabled and a service was registered. */
export function installGrpc(app: App): void {
  const c = app.config;
  const state = app.extensions.get(GRPC_EXTENSION) as GrpcAppState | undefined;
  if (!c.grpc?.enabled || !state) return;
  // The HTTP order (docs/architecture.md): rate limit, then authentication.
  const guards = [app.serverRateLimit(), c.jwt_auth ? jwtAuth(c.jwt_auth) : undefined, c.api_key_auth ? apiKeyAuth(c.api_key_auth) : undefined].filter((m): m is Middleware => !!m);
  const options = {
    guard: guards.length ? guardFromMiddleware(guards) : undefined,
    requestId: c.enable_request_id,
    // Spans on: a SERVER span per call (lib/observability/grpc-spans.ts).
    tracing: grpcTracing(c.opentelemetry),
    // ServerConfig.work_limits: each call's work charged to its client's CPU budget (lib/server/cost.ts).
    work: workGateOf(app),
    // HTTP/2 connections refused by max_h2_sessions / max_h2_sessions_per_client: one throttled warn line.
    logger: app.logger,
    // ServerConfig.h2_*: reset and stream rates per connection and per client (lib/grpc/h2-abuse.ts).
    h2Limits: h2AbuseLimitsOf(c),
    // A call whose client went away (stream cancelled, connection reset) is not a handler failure.
    onError: (err: unknown, path: string) => (isExpectedNetworkError(err) ? networkErrorLog(app.logger).note('grpc', err) : app.logger.error({ err, path }, 'gRPC handler failed')),
  };
  const grpcConfig = c.grpc;
  app.setServerFactory((listener, httpOptions) => {
    const server = createDualServer(listener, state.router, grpcConfig, { ...options, httpOptions });
    state.attachment = server.grpc;
    return server;
  });
  app.preShutdown(() => state.attachment?.shutdown(c.shutdown_timeout * 1000));
}

/** gRPC as an App protocol (lib/app/plugin.ts): the services of `app.grpc()`. Loaded by `app.ready()` (lib/app/builtins.ts). */
export const protocol: ProtocolPlugin = {
  name: 'grpc',
  install(host, registrations) {
    for (const { args } of registrations) {
      registerGrpcService(host, args[0] as GrpcProtoSource, args[1] as string, args[2] as GrpcServiceHandlers, args[3] as GrpcServiceOptions | undefined);
    }
    installGrpc(host);
  },
};
