/**
 * Records of the built-in protocols: OpenAPI, AsyncAPI, JSON-RPC, gRPC, background tasks,
 * plus Response and Method.
 */
import { defineRecord, t, type InputOf, type RecordDef } from './define.js';

// ---------------------------------------------------------------- OpenAPI
export interface ContactInfo { name: string | null; email: string | null; url: string | null }
export const ContactInfo = defineRecord<ContactInfo>()('ContactInfo', {
  name: { type: t.string(), nullable: true },
  email: { type: t.string(), nullable: true },
  url: { type: t.string(), nullable: true },
});

export interface LicenseInfo { name: string; url: string | null }
export const LicenseInfo = defineRecord<LicenseInfo>()('LicenseInfo', {
  name: { type: t.string({ minLength: 1 }), required: true, doc: 'SPDX identifier or display name' },
  url: { type: t.string(), nullable: true },
});

/** The spec leaves ServerInfo's fields open; keel uses OpenAPI's Server Object members. */
export interface ServerInfo { url: string; description: string | null }
export const ServerInfo = defineRecord<ServerInfo>()('ServerInfo', {
  url: { type: t.string({ minLength: 1 }), required: true },
  description: { type: t.string(), nullable: true },
});

export interface HttpSecurityScheme { type: 'http'; scheme: string; bearer_format: string }
export interface ApiKeySecurityScheme { type: 'apiKey'; location: string; name: string }
/** Tagged choice on `type`: `http` or `apiKey`. */
export type SecuritySchemeInfo = HttpSecurityScheme | ApiKeySecurityScheme;
const HttpSchemeRecord = defineRecord<Omit<HttpSecurityScheme, 'type'>>()('HttpSecurityScheme', {
  scheme: { type: t.string({ minLength: 1 }), required: true, doc: 'e.g. "bearer"' },
  bearer_format: { type: t.string(), required: true, doc: 'e.g. "JWT"' },
});
const ApiKeySchemeRecord = defineRecord<Omit<ApiKeySecurityScheme, 'type'>>()('ApiKeySecurityScheme', {
  location: { type: t.string({ enum: ['header', 'query', 'cookie'] }), required: true },
  name: { type: t.string({ minLength: 1 }), required: true },
});
export const SecuritySchemeInfo = {
  name: 'SecuritySchemeInfo',
  type: { kind: 'tagged', tag: 'type', variants: { http: HttpSchemeRecord, apiKey: ApiKeySchemeRecord } } as const,
};

export interface OpenApiConfig {
  enabled: boolean;
  title: string;
  version: string;
  description: string | null;
  swagger_ui_path: string | null;
  redoc_path: string | null;
  openapi_json_path: string;
  contact: Readonly<ContactInfo> | null;
  license: Readonly<LicenseInfo> | null;
  servers: readonly Readonly<ServerInfo>[];
  security_schemes: Readonly<Record<string, SecuritySchemeInfo>>;
}
const path = (hint = 'a path starting with "/"') => t.string({ pattern: /^\//, hint });
export const OpenApiConfig = defineRecord<OpenApiConfig>()('OpenApiConfig', {
  enabled: { type: t.boolean(), default: false },
  title: { type: t.string(), default: 'API' },
  version: { type: t.string(), default: '1.0.0' },
  description: { type: t.string(), nullable: true },
  swagger_ui_path: { type: path(), default: '/docs', nullable: true, doc: 'Swagger UI page (needs swagger-ui-express); null: off' },
  redoc_path: { type: path(), default: '/redoc', nullable: true, doc: 'Redoc page (needs redoc); null: off' },
  openapi_json_path: { type: path(), default: '/openapi.json' },
  contact: { type: t.record(ContactInfo), nullable: true },
  license: { type: t.record(LicenseInfo), nullable: true },
  servers: { type: t.list(t.record(ServerInfo)), default: () => [] },
  security_schemes: { type: t.map(SecuritySchemeInfo.type), default: () => ({}), doc: 'Detected from JWT / API-key middleware when empty' },
});

// ---------------------------------------------------------------- AsyncAPI
/** AsyncApiConfig.max_expanded_nodes: most JSON values one parse / validate request may expand `$ref`s to. */
export const DEFAULT_ASYNCAPI_MAX_EXPANDED_NODES = 100_000;
/** AsyncApiConfig.max_response_bytes: most bytes of JSON one `/asyncapi/parse` answer may hold, 4 MiB. */
export const DEFAULT_ASYNCAPI_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
export interface AsyncApiConfig { enabled: boolean; spec: unknown; max_expanded_nodes: number; max_response_bytes: number }
export const AsyncApiConfig = defineRecord<AsyncApiConfig>()('AsyncApiConfig', {
  enabled: { type: t.boolean(), default: false },
  spec: { type: t.json(), nullable: true, doc: 'Served from GET /asyncapi.json' },
  max_expanded_nodes: { type: t.integer(1), default: DEFAULT_ASYNCAPI_MAX_EXPANDED_NODES, doc: 'Budget of one parse / validate request: JSON values all its $ref expansions may produce (422 work-budget-exceeded)' },
  max_response_bytes: { type: t.integer(1), default: DEFAULT_ASYNCAPI_MAX_RESPONSE_BYTES, doc: 'Budget of one parse / validate request: bytes of JSON its answer may hold (422 work-budget-exceeded)' },
});

export interface ParseRequest { spec: unknown }
export const ParseRequest = defineRecord<ParseRequest>()('ParseRequest', { spec: { type: t.json(), required: true } });
export interface ParsedChannel { name: string; address: string; messages: readonly string[]; bindings: unknown }
export interface ParsedOperation { name: string; action: 'send' | 'receive'; channel: string }
export interface ParsedMessage { name: string; schema: unknown }
export interface ParseResult {
  spec_version: string;
  title: string;
  api_version: string;
  channels: readonly ParsedChannel[];
  operations: readonly ParsedOperation[];
  messages: readonly ParsedMessage[];
}
export interface ValidateRequest { spec: unknown; channel: string; message: string; payload: unknown }
export const ValidateRequest = defineRecord<ValidateRequest>()('ValidateRequest', {
  spec: { type: t.json(), required: true },
  channel: { type: t.string(), required: true },
  message: { type: t.string(), required: true },
  payload: { type: t.json(), required: true },
});
export interface ValidationResponse { valid: boolean; errors: readonly string[] }

// ---------------------------------------------------------------- JSON-RPC
/** JsonRpcConfig.max_response_bytes: most bytes of serialized results one request (a batch: all its calls) may answer, 4 MiB. */
export const DEFAULT_JSONRPC_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;
export interface JsonRpcConfig { enabled: boolean; endpoint_path: string; enable_batch: boolean; max_batch_size: number; max_response_bytes: number }
export const JsonRpcConfig = defineRecord<JsonRpcConfig>()('JsonRpcConfig', {
  enabled: { type: t.boolean(), default: true },
  endpoint_path: { type: path(), default: '/rpc' },
  enable_batch: { type: t.boolean(), default: true },
  max_batch_size: { type: t.integer(1), default: 100 },
  max_response_bytes: { type: t.integer(1), default: DEFAULT_JSONRPC_MAX_RESPONSE_BYTES, doc: 'Serialized results of one request, a batch\'s together; a result past it is a -32603 error' },
});

export interface JsonRpcMethodInfo {
  method_name: string;
  description: string | null;
  params_schema: unknown;
  result_schema: unknown;
  deprecated: boolean;
  tags: readonly string[];
}
export const JsonRpcMethodInfo = defineRecord<JsonRpcMethodInfo>()('JsonRpcMethodInfo', {
  method_name: { type: t.string({ minLength: 1 }), required: true },
  description: { type: t.string(), nullable: true },
  params_schema: { type: t.json(), nullable: true },
  result_schema: { type: t.json(), nullable: true },
  deprecated: { type: t.boolean(), default: false },
  tags: { type: t.list(t.string()), default: () => [] },
});

// ---------------------------------------------------------------- gRPC
/**
 * Seconds an HTTP/2 connection with no open stream stays open, PINGs or not: 120. Longer than the idle
 * timeouts of the proxies usually in front (AWS ALB 60 s, nginx 75 s), so they close first.
 */
export const DEFAULT_H2_IDLE_TIMEOUT = 120;
/** The longest h2_idle_timeout, seconds: node's longest timer (2^31 - 1 ms; a longer one fires at once). */
export const MAX_H2_IDLE_TIMEOUT = 2_147_483;
/** HTTP/2 connections open at once on one server: 1000. */
export const DEFAULT_MAX_H2_SESSIONS = 1000;
/** HTTP/2 connections open at once from one client address: 100. */
export const DEFAULT_MAX_H2_SESSIONS_PER_CLIENT = 100;

/**
 * gRPC calls one client (address) may have in flight at once across all its HTTP/2 sessions: 100, one session's
 * max_concurrent_streams. 100 sessions × 100 calls from one address stalled `/health` 2.1–6.1 s (issue 35).
 */
export const DEFAULT_MAX_GRPC_CALLS_PER_CLIENT = 100;
/**
 * Bytes one call's client stream (client-streaming and bidi requests) may send in all, counted after
 * decompression: 16 MiB, four messages of the default max_message_size. One client stream of 1 MiB names to a
 * handler that kept them all took the server from 132 MB to a 4.2 GB heap crash in 17.8 s (issue 44).
 */
export const DEFAULT_MAX_STREAM_REQUEST_BYTES = 16 * 1024 * 1024;
/** Messages one call's client stream may send in all: 10,000 (issue 44). */
export const DEFAULT_MAX_STREAM_REQUEST_MESSAGES = 10_000;
/**
 * At shutdown, seconds a call whose client is still sending (a client or bidi stream it has not ended) may go on
 * before it ends UNAVAILABLE: 5. Unary and server-streaming calls in flight are not cut by it (they have until
 * shutdown_timeout). One idle client stream held a server's shutdown for 28 s of its 30 (issue 44).
 */
export const DEFAULT_GRPC_SHUTDOWN_STREAM_GRACE = 5;

export interface GrpcConfig {
  enabled: boolean;
  max_message_size: number;
  enable_compression: boolean;
  request_timeout: number | null;
  max_concurrent_streams: number;
  enable_keepalive: boolean;
  keepalive_interval: number;
  keepalive_timeout: number;
  max_stream_response_bytes: number | null;
  h2_idle_timeout: number;
  max_h2_sessions: number;
  max_h2_sessions_per_client: number;
  max_calls_per_client: number | null;
  max_stream_request_bytes: number | null;
  max_stream_request_messages: number | null;
  shutdown_stream_grace: number;
}
export const GrpcConfig = defineRecord<GrpcConfig>()('GrpcConfig', {
  enabled: { type: t.boolean(), default: true },
  max_message_size: { type: t.integer(1), default: 4_194_304 },
  enable_compression: { type: t.boolean(), default: true },
  request_timeout: { type: t.integer(1), nullable: true },
  max_concurrent_streams: { type: t.integer(1, 2 ** 32 - 1), default: 100 },
  enable_keepalive: { type: t.boolean(), default: true },
  keepalive_interval: { type: t.integer(1), default: 75 },
  keepalive_timeout: { type: t.integer(1), default: 20 },
  max_stream_response_bytes: { type: t.integer(1), nullable: true },
  h2_idle_timeout: { type: t.integer(1, MAX_H2_IDLE_TIMEOUT), default: DEFAULT_H2_IDLE_TIMEOUT, doc: 'Seconds an HTTP/2 connection with no open stream stays open (PINGs do not count); then GOAWAY and close' },
  max_h2_sessions: { type: t.integer(1), default: DEFAULT_MAX_H2_SESSIONS, doc: 'HTTP/2 connections open at once on the server; more get GOAWAY REFUSED_STREAM' },
  max_h2_sessions_per_client: { type: t.integer(1), default: DEFAULT_MAX_H2_SESSIONS_PER_CLIENT, doc: 'HTTP/2 connections open at once from one client address; more get GOAWAY ENHANCE_YOUR_CALM' },
  max_calls_per_client: { type: t.integer(1), nullable: true, default: DEFAULT_MAX_GRPC_CALLS_PER_CLIENT, doc: 'gRPC calls one client address may have in flight across all its HTTP/2 sessions; more end at once with RESOURCE_EXHAUSTED (no guard, no handler); null = no limit' },
  max_stream_request_bytes: { type: t.integer(1), nullable: true, default: DEFAULT_MAX_STREAM_REQUEST_BYTES, doc: 'Bytes one call\'s client stream (client-streaming and bidi requests) may send in all, after decompression; past it the call ends with RESOURCE_EXHAUSTED; null = no limit' },
  max_stream_request_messages: { type: t.integer(1), nullable: true, default: DEFAULT_MAX_STREAM_REQUEST_MESSAGES, doc: 'Messages one call\'s client stream may send in all; past it the call ends with RESOURCE_EXHAUSTED; null = no limit' },
  shutdown_stream_grace: { type: t.integer(0, MAX_H2_IDLE_TIMEOUT), default: DEFAULT_GRPC_SHUTDOWN_STREAM_GRACE, doc: 'At shutdown, seconds a call whose client is still sending (an open client or bidi stream) may go on before it ends UNAVAILABLE; unary calls have until shutdown_timeout' },
});

// ---------------------------------------------------------------- background tasks
export interface BackgroundTaskConfig { enabled: boolean; max_queue_size: number; max_concurrent_tasks: number; drain_timeout_secs: number }
export const BackgroundTaskConfig = defineRecord<BackgroundTaskConfig>()('BackgroundTaskConfig', {
  enabled: { type: t.boolean(), default: false },
  max_queue_size: { type: t.integer(1), default: 1024 },
  max_concurrent_tasks: { type: t.integer(1), default: 128 },
  drain_timeout_secs: { type: t.integer(0), default: 30 },
});

export interface BackgroundJobMetadata { name: string; request_id: string | null }
export const BackgroundJobMetadata = defineRecord<BackgroundJobMetadata>()('BackgroundJobMetadata', {
  name: { type: t.string({ minLength: 1 }), default: 'background_task' },
  request_id: { type: t.string(), nullable: true },
});

// ---------------------------------------------------------------- Response, Method
/** The spec's Method values; keel's routes use the upper-case HTTP spelling. */
export const METHODS = ['Get', 'Post', 'Put', 'Patch', 'Delete', 'Head', 'Options', 'Connect', 'Trace'] as const;
export type Method = (typeof METHODS)[number];
export type HttpMethod = Uppercase<Method>;

/** Accepts `Get`, `GET` or `get`; returns the HTTP spelling (`GET`). */
export function parseMethod(input: unknown, where = 'Method'): HttpMethod {
  if (typeof input === 'string') {
    const m = METHODS.find((v) => v.toLowerCase() === input.toLowerCase());
    if (m) return m.toUpperCase() as HttpMethod;
  }
  return MethodRecord.parse({ method: input }, where).method as never;
}
const MethodRecord: RecordDef<{ method: string }> = defineRecord('Method', { method: { type: t.string({ enum: METHODS.map((m) => m.toUpperCase()) }), required: true } });

export interface ResponseRecord { content: unknown; status_code: number; headers: Readonly<Record<string, string>> }
export const ResponseRecord = defineRecord<ResponseRecord>()('Response', {
  content: { type: t.json(), nullable: true },
  status_code: { type: t.integer(100, 599), default: 200 },
  headers: { type: t.map(t.string()), default: () => ({}) },
});

// ---------------------------------------------------------------- input types (generated from the fields above)
export type OpenApiConfigInput = InputOf<typeof OpenApiConfig>;
export type AsyncApiConfigInput = InputOf<typeof AsyncApiConfig>;
export type JsonRpcConfigInput = InputOf<typeof JsonRpcConfig>;
export type JsonRpcMethodInfoInput = InputOf<typeof JsonRpcMethodInfo>;
export type GrpcConfigInput = InputOf<typeof GrpcConfig>;
export type BackgroundTaskConfigInput = InputOf<typeof BackgroundTaskConfig>;
