export * from './records/index.js';
export * from './errors.js';
export * from './problem.js';
export type { KeelRequest, KeelRequestExtensions, Middleware, NextFunction } from './request.js';
export { App, createApp, type AppOptions, type MountOptions, type RawHandler, type UpgradeHandler, type ServerConfigInput } from './app.js';
export type { KeelRouter } from './dispatch.js';
export type { ServerHandle, ListenOptions, ServerFactory } from './server.js';
export {
  KeelResponse, HandlerResult, response, handlerResultFromResponse, handlerError, intoHandler,
  type Handler, type HandlerFunction, type HandlerFlags, type RequestData, type ResponseCookie,
} from './handler.js';
export { UploadFile } from './multipart.js';
export { HOOK_PHASES, HookRegistry, type Hook, type HookContext } from './hooks.js';
export type { RouteDefinitionInput, RouteDefinition, OperationInfo } from './route-definition.js';
export { readRawBody } from './body.js';
export { runChain, compose } from './pipeline.js';
export { parseCookies, parseQuery } from './query.js';
export { compilePattern, openApiPath } from './router.js';
export { validationError, type ValidationIssue } from './validation.js';
export * from './background/index.js';
export {
  JsonRpcRegistry, JsonRpcError, JSON_RPC_ERRORS, jsonRpcHandler, openRpcDocument, rpcRegistryOf,
  type RpcHandler, type RpcContext, type JsonRpcId, type JsonRpcMethodInfoInput, type JsonRpcHandlerOptions, type JsonRpcConfigInput,
  type JsonRpcResponse, type JsonRpcErrorObject,
} from './jsonrpc/index.js';
export {
  parseAsyncApi, analyseAsyncApi, PayloadValidator, asyncApiMounts, AsyncApiDocumentError, ASYNCAPI_JSON_PATH, ASYNCAPI_PARSE_PATH, ASYNCAPI_VALIDATE_PATH,
  type AsyncApiHandlersOptions, type AsyncApiConfigInput,
} from './asyncapi/index.js';
export { generateOpenApi, openApiMounts, type OpenApiMountsOptions, type OpenApiConfigInput, type MountSpec } from './openapi/index.js';
export {
  GrpcRouter, createGrpcRouter, GrpcStatus, GrpcError, attachGrpc, createDualServer, guardFromMiddleware, HealthRegistry,
  type GrpcCallContext, type GrpcServiceHandlers, type GrpcServiceOptions, type GrpcProtoSource, type GrpcGuard, type GrpcGuardContext,
  type GrpcServerOptions, type GrpcAttachment, type GrpcStatusObject, type GrpcMetadataInit,
} from './grpc/index.js';
export {
  builtinSchema, buildSdlSchema, createGraphqlHttpHandler, createGraphqlWsUpgradeHandler, graphqlRoute, graphqlSdlRoute,
  installGraphqlRoute, limitRules, measureDepth, measureComplexity, formatGraphqlError, playgroundPage, SCHEMA_TYPES, PLAYGROUND_CSP,
  type SchemaType, type GraphqlLimits, type GraphqlHttpOptions, type GraphqlWsOptions, type GraphqlRoute, type GraphqlRouteOptions, type GraphqlContext,
} from './graphql/index.js';
export {
  WebSocketSession, WebSocketRouter, createWebSocketUpgradeHandler, middlewareGuard, originGuard, DEFAULT_MAX_PAYLOAD,
  type WebSocketMessage, type WebSocketHandler, type WebSocketRouteOptions, type AppWebSocketOptions, type UpgradeGuard,
  type UpgradeHandler as WebSocketUpgradeHandler,
} from './ws/index.js';
