/**
 * Every configuration record of the specification, its parser and its JSON Schema.
 */
export * from './define.js';
export * from './server.js';
export * from './protocol.js';
export * from './route.js';
export * from './graphql.js';
export * from './observability.js';
export * from './work.js';

import { ServerConfig } from './server.js';
import { CorsConfig, RequestIdConfig, JwtAuthConfig, ApiKeyAuthConfig, AuthorizationConfig, LifecycleHooksConfig } from './route.js';
import { DynamicSchemaConfig, SchemaConfig, GraphQlRouteConfig } from './graphql.js';
import { JsonRpcMethodInfo } from './protocol.js';

/**
 * JSON Schemas (draft 2020-12) for ServerConfig and the per-route records, for editors and other
 * implementations of the specification. `npm run schemas` writes them to `schemas/`.
 */
export function recordJsonSchemas(): Record<string, Record<string, unknown>> {
  return {
    ServerConfig: ServerConfig.jsonSchema(),
    CorsConfig: CorsConfig.jsonSchema(),
    RequestIdConfig: RequestIdConfig.jsonSchema(),
    JwtAuthConfig: JwtAuthConfig.jsonSchema(),
    ApiKeyAuthConfig: ApiKeyAuthConfig.jsonSchema(),
    AuthorizationConfig: AuthorizationConfig.jsonSchema(),
    LifecycleHooksConfig: LifecycleHooksConfig.jsonSchema(),
    SchemaConfig: SchemaConfig.jsonSchema(),
    DynamicSchemaConfig: DynamicSchemaConfig.jsonSchema(),
    GraphQlRouteConfig: GraphQlRouteConfig.jsonSchema(),
    JsonRpcMethodInfo: JsonRpcMethodInfo.jsonSchema(),
  };
}
