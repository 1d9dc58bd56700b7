/**
 * `keel`: the core (App, records, errors, problem details, handlers, hooks, background tasks).
 */
export * from './records/index.js';
export { queryRedactor, untracedRequestHook, REDACTED } from './observability/redact.js';
export * from './http/errors.js';
export * from './http/problem.js';
export type { KeelRequest, KeelRequestExtensions, Middleware, NextFunction } from './http/request.js';
export { DEFAULT_ON_REJECT, type OnReject, type OnRejectOption, type RejectHandler } from './http/reject.js';
export type { ExpressFactoryLike, MergeRouterOptions } from './app/merge.js';
export { App, createApp, type AppOptions, type WorkerHandle, type ExpressRouterLike, type ServerConfigInput } from './app/app.js';
export type { KeelRouter, MountOptions, RawHandler, UpgradeHandler, ServerHandle, ServerFactory, ProtocolHost, ProtocolPlugin, ProtocolRegistration, ProtocolName } from './app/plugin.js';
export type { AppWebSocketHandler, AppWebSocketOptions, AppGraphqlRouteOptions, WebSocketSessionApi, WebSocketMessage } from './app/protocol-api.js';
export type { ListenOptions } from './server/server.js';
export { documentationPages } from './server/server.js';
export type { InjectOptions, InjectResponse, InjectChain } from './app/inject.js';
export { ResponseContractError } from './app/inject.js';
export * from './server/connections.js';
export { onShed, publishShed, SHED_CHANNEL, SHED_RETRY_AFTER_SECONDS, type ShedEvent } from './server/shedding.js';
export {
  KeelResponse, HandlerResult, response, handlerResultFromResponse, handlerError, intoHandler,
  type Handler, type HandlerFunction, type BackgroundApi, type HandlerFlags, type RequestData, type ResponseCookie, type ResponseOptions,
} from './app/handler.js';
export { UploadFile } from './http/multipart.js';
export { HOOK_PHASES, HookRegistry, type Hook, type HookContext } from './app/hooks.js';
export type { RouteDefinitionInput, RouteOptionsInput, RouteDefinition, OperationInfo } from './app/route-definition.js';
export type { RouteData, RouteHandler, RouteOutcome, PathParamsOf, ParamValues, SchemaType, TypedRouteOptions, RouteParameters, HandlerObject } from './app/typed-route.js';
export type {
  ResponsesInput, NoContentStatus, DefaultAuth, AuthTypes, DefaultAuthTypes, ApiKeyInfo, ClaimsOf, ServerAuthOf, GrantClaims, RouteAuth, RouteApiKey, RouteRequest,
} from './app/typed-route.js';
export type { TypedRouteDefinition } from './app/app.js';
export { readRawBody } from './http/body.js';
export { ACCEPTED_CONTENT_CODINGS } from './http/content-encoding.js';
export {
  POISONING_ACTIONS, DEFAULT_ON_PROTO_POISONING, DEFAULT_ON_CONSTRUCTOR_POISONING, parseJsonText,
  type PoisoningAction, type JsonPoisoning,
} from './http/json-parse.js';
export { runChain, compose } from './app/chain.js';
export { parseCookies, parseQuery } from './http/query.js';
export { compilePattern, openApiPath } from './app/router.js';
export { validationError, type ValidationIssue } from './http/validation.js';
export * from './background/index.js';
export * from './pubsub/index.js';
export { parseClusterNodes, pingEverySlot, type RedisClusterConnection, type RedisConnection } from './ops/redis-connection.js';
// Protocols are subpath exports, loaded only by apps that use them (lib/app/builtins.ts): keel/graphql,
// keel/grpc, keel/ws, keel/jsonrpc, keel/openapi, keel/asyncapi.
