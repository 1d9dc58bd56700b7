/**
 * `keel`: the core (App, records, errors, problem details, handlers, hooks, background tasks).
 */
export * from './records/index.js';
export * from './errors.js';
export * from './problem.js';
export type { KeelRequest, KeelRequestExtensions, Middleware, NextFunction } from './request.js';
export { DEFAULT_ON_REJECT, type OnReject, type OnRejectOption, type RejectHandler } from './reject.js';
export type { ExpressFactoryLike, MergeRouterOptions } from './merge.js';
export { App, createApp, type AppOptions, type WorkerHandle, type ExpressRouterLike, type ServerConfigInput } from './app.js';
export type { KeelRouter, MountOptions, RawHandler, UpgradeHandler, ServerHandle, ServerFactory, ProtocolHost, ProtocolPlugin, ProtocolRegistration, ProtocolName } from './plugin.js';
export type { AppWebSocketHandler, AppWebSocketOptions, AppGraphqlRouteOptions, WebSocketSessionApi, WebSocketMessage } from './protocol-api.js';
export type { ListenOptions } from './server.js';
export { documentationPages } from './server.js';
export type { InjectOptions, InjectResponse, InjectChain } from './inject.js';
export * from './connections.js';
export {
  KeelResponse, HandlerResult, response, handlerResultFromResponse, handlerError, intoHandler,
  type Handler, type HandlerFunction, type BackgroundApi, type HandlerFlags, type RequestData, type ResponseCookie, type ResponseOptions,
} from './handler.js';
export { UploadFile } from './multipart.js';
export { HOOK_PHASES, HookRegistry, type Hook, type HookContext } from './hooks.js';
export type { RouteDefinitionInput, RouteOptionsInput, RouteDefinition, OperationInfo } from './route-definition.js';
export type { RouteData, RouteHandler, RouteOutcome, PathParamsOf, ParamValues, SchemaType, TypedRouteOptions, RouteParameters, HandlerObject } from './typed-route.js';
export type {
  ResponsesInput, NoContentStatus, DefaultAuth, AuthTypes, DefaultAuthTypes, ApiKeyInfo, ClaimsOf, ServerAuthOf, GrantClaims, RouteAuth, RouteApiKey, RouteRequest,
} from './typed-route.js';
export type { TypedRouteDefinition } from './app.js';
export { readRawBody } from './body.js';
export { ACCEPTED_CONTENT_CODINGS } from './content-encoding.js';
export {
  POISONING_ACTIONS, DEFAULT_ON_PROTO_POISONING, DEFAULT_ON_CONSTRUCTOR_POISONING, parseJsonText,
  type PoisoningAction, type JsonPoisoning,
} from './json-parse.js';
export { runChain, compose } from './chain.js';
export { parseCookies, parseQuery } from './query.js';
export { compilePattern, openApiPath } from './router.js';
export { validationError, type ValidationIssue } from './validation.js';
export * from './background/index.js';
export * from './pubsub/index.js';
export { parseClusterNodes, type RedisClusterConnection, type RedisConnection } from './redis-connection.js';
// Protocols are subpath exports, loaded only by apps that use them (lib/builtins.ts): keel/graphql,
// keel/grpc, keel/ws, keel/jsonrpc, keel/openapi, keel/asyncapi.
