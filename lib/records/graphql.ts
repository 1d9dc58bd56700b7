/**
 * GraphQL records: schema configs, SDL route config, field-error injection, the route builder.
 */
import { defineRecord, fail, t, type InputOf } from './define.js';
import { parseMethod, type HttpMethod } from './protocol.js';

/**
 * SchemaConfig.max_response_bytes / DynamicSchemaConfig.max_response_bytes: 1 MiB, the default GraphQL
 * request body cap. An answer estimated past it is refused before execution, one that turns out past
 * it is replaced by an error (docs/graphql.md, "Response size").
 */
export const DEFAULT_GRAPHQL_MAX_RESPONSE_BYTES = 1024 * 1024;

export interface SchemaConfig {
  introspection_enabled: boolean;
  complexity_limit: number | null;
  depth_limit: number | null;
  max_response_bytes: number | null;
}
export type QueryOnlyConfig = SchemaConfig;
export type QueryMutationConfig = SchemaConfig;
export type FullSchemaConfig = SchemaConfig;

const schemaFields = {
  introspection_enabled: { type: t.boolean(), default: true },
  complexity_limit: { type: t.integer(1), nullable: true, doc: 'null = unlimited' },
  depth_limit: { type: t.integer(1), nullable: true, doc: 'null = unlimited' },
  max_response_bytes: { type: t.integer(1), nullable: true, default: DEFAULT_GRAPHQL_MAX_RESPONSE_BYTES, doc: 'Serialized answer cap, estimated before execution and checked after; null = unlimited' },
};
export const SchemaConfig = defineRecord<SchemaConfig>()('SchemaConfig', schemaFields);
export const QueryOnlyConfig = defineRecord<QueryOnlyConfig>()('QueryOnlyConfig', schemaFields);
export const QueryMutationConfig = defineRecord<QueryMutationConfig>()('QueryMutationConfig', schemaFields);
export const FullSchemaConfig = defineRecord<FullSchemaConfig>()('FullSchemaConfig', schemaFields);

/** QueryOnlyConfig with defaults. */
export function schemaQueryOnly(): Readonly<QueryOnlyConfig> {
  return QueryOnlyConfig.defaults();
}
/** QueryMutationConfig with defaults. */
export function schemaQueryMutation(): Readonly<QueryMutationConfig> {
  return QueryMutationConfig.defaults();
}
/** FullSchemaConfig with defaults. */
export function schemaFull(): Readonly<FullSchemaConfig> {
  return FullSchemaConfig.defaults();
}

export interface FieldErrorSpec { path: string; message: string }
export const FieldErrorSpec = defineRecord<FieldErrorSpec>()('FieldErrorSpec', {
  path: { type: t.string({ pattern: /^[_A-Za-z][_0-9A-Za-z]*(\.[_A-Za-z][_0-9A-Za-z]*)*$/, hint: 'a dot-separated field path such as "user.email"' }), required: true },
  message: { type: t.string({ minLength: 1 }), required: true },
});

export interface DynamicSchemaConfig {
  introspection_enabled: boolean;
  max_complexity: number | null;
  max_depth: number | null;
  max_response_bytes: number | null;
  field_errors: readonly Readonly<FieldErrorSpec>[];
}
export const DynamicSchemaConfig = defineRecord<DynamicSchemaConfig>()('DynamicSchemaConfig', {
  introspection_enabled: { type: t.boolean(), required: true, doc: 'Controls __schema and __type queries' },
  max_complexity: { type: t.integer(1), nullable: true },
  max_depth: { type: t.integer(1), nullable: true },
  max_response_bytes: { type: t.integer(1), nullable: true, default: DEFAULT_GRAPHQL_MAX_RESPONSE_BYTES, doc: 'Serialized answer cap, estimated before execution and checked after; null = unlimited' },
  field_errors: { type: t.list(t.record(FieldErrorSpec)), default: () => [] },
});

export interface GraphQlSubscriptionSnapshot {
  operation_id: string;
  acknowledged: boolean;
  event: unknown;
  errors: unknown[];
  complete_received: boolean;
}

export interface GraphQlRouteConfigData {
  path: string;
  method: HttpMethod;
  enable_playground: boolean;
  description: string | null;
}
const GraphQlRouteRecord = defineRecord<GraphQlRouteConfigData>()('GraphQlRouteConfig', {
  path: { type: t.string({ pattern: /^\//, hint: 'a path starting with "/"' }), default: '/graphql' },
  method: { type: t.string(), default: 'POST' },
  enable_playground: { type: t.boolean(), default: false },
  description: { type: t.string(), nullable: true },
});

/**
 * Builder for a GraphQL route: setters return the configuration, getters read it.
 *
 * @example
 * const route = new GraphQlRouteConfig().path('/gql').enablePlayground(true);
 * route.getPath(); // '/gql'
 */
export class GraphQlRouteConfig {
  #data: GraphQlRouteConfigData;

  constructor(input: unknown = {}) {
    const d = GraphQlRouteRecord.parse(input);
    this.#data = { ...d, method: parseMethod(d.method, 'GraphQlRouteConfig.method') };
  }

  static jsonSchema(): Record<string, unknown> {
    return GraphQlRouteRecord.jsonSchema();
  }

  path(path: string): this {
    if (typeof path !== 'string' || !path.startsWith('/')) fail('GraphQlRouteConfig', 'GraphQlRouteConfig', 'path', path, 'a path starting with "/"');
    this.#data.path = path;
    return this;
  }
  method(method: string): this {
    this.#data.method = parseMethod(method, 'GraphQlRouteConfig.method');
    return this;
  }
  enablePlayground(enabled: boolean): this {
    if (typeof enabled !== 'boolean') fail('GraphQlRouteConfig', 'GraphQlRouteConfig', 'enable_playground', enabled, 'true or false');
    this.#data.enable_playground = enabled;
    return this;
  }
  description(description: string): this {
    if (typeof description !== 'string') fail('GraphQlRouteConfig', 'GraphQlRouteConfig', 'description', description, 'a string');
    this.#data.description = description;
    return this;
  }
  getPath(): string {
    return this.#data.path;
  }
  getMethod(): HttpMethod {
    return this.#data.method;
  }
  isPlaygroundEnabled(): boolean {
    return this.#data.enable_playground;
  }
  getDescription(): string | null {
    return this.#data.description;
  }
  toJSON(): GraphQlRouteConfigData {
    return { ...this.#data };
  }
}

// ---------------------------------------------------------------- input types (generated from the fields above)
export type SchemaConfigInput = InputOf<typeof SchemaConfig>;
export type DynamicSchemaConfigInput = InputOf<typeof DynamicSchemaConfig>;
export type GraphQlRouteConfigInput = InputOf<typeof GraphQlRouteRecord>;
