/**
 * GraphQL routes (spec: GraphQL records, Rules for GraphQL registration): built-in test schemas,
 * SDL schemas over static data, limits, GraphQL over HTTP, GraphiQL, subscriptions over WebSocket.
 */
export { builtinSchema, SCHEMA_TYPES, MAX_COUNTDOWN, DEFAULT_BUILTIN_MAX_BOOKS, DEFAULT_BUILTIN_MAX_LIBRARY_BYTES, BOOK_ADDED_TOPIC, type SchemaType, type BuiltinSchemaOptions } from './builtin-schemas.js';
export { MemoryPubSub, DEFAULT_MAX_QUEUED_EVENTS, type PubSub, type MemoryPubSubOptions } from './pubsub.js';
export { buildSdlSchema, SDL_ALLOWED_KINDS } from './sdl.js';
export {
  limitRules, measureDepth, measureComplexity, introspectionDisabledRule, depthLimitRule, complexityLimitRule,
  PAGINATION_ARGUMENTS, MAX_MEASURE, DocumentMeasure, INTROSPECTION_DEPTH_LIMIT, INTROSPECTION_COMPLEXITY_LIMIT,
  type GraphqlLimits,
} from './limits.js';
export { estimateResponseBytes, responseSizeRule, resultExceeds, DEFAULT_GRAPHQL_MAX_RESPONSE_BYTES, LEAF_BYTES, RESPONSE_SIZE_CODE } from './budget.js';
export { withoutSuggestions } from './suggestions.js';
export { operationFromMultipart, takesUploads, DEFAULT_GRAPHQL_UPLOAD_LIMITS } from './uploads.js';
export { batchOf, batchBody, DEFAULT_GRAPHQL_MAX_BATCH, type GraphqlBatching, type BatchPart } from './batch.js';
export { PersistedQueries, withPersistedQuery, type PersistedQueryOptions, type PersistedOutcome } from './persisted.js';
export { createGraphqlHttpHandler, formatGraphqlError, DEFAULT_GRAPHQL_MAX_BODY_SIZE, type GraphqlHttpOptions, type GraphqlContext } from './http.js';
export {
  createGraphqlWsUpgradeHandler, DEFAULT_CONNECTION_INIT_WAIT_TIMEOUT, DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION, type GraphqlWsOptions,
} from './subscriptions.js';
export { DocumentCache, DEFAULT_MAX_TOKENS, DEFAULT_DOCUMENT_CACHE_ENTRIES, DEFAULT_DOCUMENT_CACHE_TEXT, type DocumentCacheOptions } from './documents.js';
export { graphqlOpenApi, GRAPHQL_OPENAPI_TAG, type GraphqlRouteShape } from './openapi.js';
export { playgroundPage, PLAYGROUND_ASSET_NAMES, PLAYGROUND_ASSET_MAX_AGE, PLAYGROUND_CSP } from './playground.js';
export {
  graphqlRoute, graphqlSdlRoute, graphqlRouteForSchema, installGraphqlRoute, routeOptions, PLAYGROUND_ASSETS_SEGMENT,
  type GraphqlRoute, type GraphqlRouteOptions, type GraphqlHost,
} from './route.js';
