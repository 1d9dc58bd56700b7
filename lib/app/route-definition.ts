/**
 * A route as registered with `app.route({...})`: the handler, its schemas and its per-route records,
 * checked once at registration.
 */
import { AppError, ConfigError } from '../http/errors.js';
import { defineRecord, t } from '../records/define.js';
import {
  ApiKeyAuthConfig, AuthorizationConfig, CorsConfig, JwtAuthConfig, LifecycleHooksConfig, RequestIdConfig,
  RESPONSE_VALIDATION_MODES, type ResponseValidationMode,
} from '../records/route.js';
import type { CorsConfigInput, RequestIdConfigInput, JwtAuthConfigInput, ApiKeyAuthConfigInput, AuthorizationConfigInput, LifecycleHooksConfigInput } from '../records/route.js';
import { CompressionConfig, RateLimitConfig, type CompressionConfigInput, type RateLimitConfigInput } from '../records/server.js';
import { JsonRpcMethodInfo, parseMethod, type HttpMethod, type JsonRpcMethodInfoInput } from '../records/protocol.js';
import { intoHandler, type Handler, type HandlerFunction } from './handler.js';
import type { Middleware } from '../http/request.js';
import { compilePattern, type CompiledPattern } from './router.js';
import { paramSpecs, type ParamSpec, type ParamSource } from '../http/validation.js';
import { fileParamSpecs, type FileParamSpec } from '../http/multipart.js';
import { formBodySchema } from '../http/content.js';
import { checkRouteSchemas, checkSchema } from './schema-check.js';
import { POISONING_ACTIONS, type PoisoningAction } from '../http/json-parse.js';
import type { JwtAlgorithm } from '../records/index.js';
import { importVerificationKey } from '../../middleware/jwt-auth/keys.js';

/** OpenAPI operation metadata for a route. */
export interface OperationInfo {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: readonly string[];
  deprecated?: boolean;
  /** Response schemas by status code. */
  responses?: Readonly<Record<string, { description?: string; schema?: object; contentType?: string }>>;
}

type Schema = Record<string, unknown>;
/** A schema as written by the user (an `as const` literal is readonly). */
type SchemaInput = object;
type ParamMap = Readonly<Record<string, object>>;

/**
 * The per-route options (everything but method, path and handler). Record keys may be snake_case or
 * camelCase; each record's type is generated from its definition (lib/records), so a typo or a wrong
 * value type is a compile error as well as a start-up AppError.
 */
export interface RouteOptionsInput {
  /**
   * Fixture-style parameters: `{ query: { limit: { type: 'integer' } } }`. A parameter is required
   * unless it says `optional: true` or `required: false`, or has a `default` (FastAPI semantics).
   * `files: { image: { content_type: ['image/png'], validate_magic_numbers: true } }` checks uploads;
   * `body: { type: 'multipart/form-data', properties: { file: { type: 'file' } } }` describes a form body.
   */
  parameters?: Partial<Record<'path' | 'query' | 'headers' | 'cookies' | 'files' | 'body', ParamMap | SchemaInput>>;
  /** JSON Schema of the request body (alias `body_schema`). */
  body?: SchemaInput;
  body_schema?: SchemaInput;
  /** Whether a body is required when `body` is set (default true). */
  body_required?: boolean;
  /** JSON Schema of the successful (200 / default) response (documentation; checked outside production). */
  response?: SchemaInput;
  /**
   * JSON Schema per status code (`{ 201: note, 204: null, 404: problem }`; `null`: no content). Types
   * what the handler may answer, is checked per status outside production, and lists each status in
   * the OpenAPI document.
   */
  responses?: Readonly<Record<number, SchemaInput | null>>;
  /**
   * How `response` / `responses` are enforced on this route: `'strict'` (checked, then serialised from
   * the schema: undeclared members dropped, a wrong type or missing required member a 500 problem),
   * `'strip'` (serialised from the schema only) or `'off'`. Default: ServerConfig.response_validation
   * (`'strict'`). docs/routes.md.
   */
  response_validation?: ResponseValidationMode;
  cors?: CorsConfigInput | null;
  request_id?: RequestIdConfigInput | null;
  jwt_auth?: JwtAuthConfigInput | null;
  api_key_auth?: ApiKeyAuthConfigInput | null;
  authorization?: AuthorizationConfigInput | null;
  lifecycle_hooks?: LifecycleHooksConfigInput | null;
  compression?: CompressionConfigInput | null;
  rate_limit?: RateLimitConfigInput | null;
  /** Per-route body cap (bytes; null = unlimited); overrides ServerConfig.max_body_size. */
  max_body_size?: number | null;
  /**
   * Per-route request-target cap (characters of path and query; null = none); overrides
   * ServerConfig.max_uri_length, higher or lower. A longer target is a 414 problem before the route's middleware.
   */
  max_uri_length?: number | null;
  /** Per-route timeout (seconds; null = none); overrides ServerConfig.request_timeout. */
  request_timeout?: number | null;
  /** JSON bodies with a `__proto__` key: 'error' (400), 'remove', 'ignore'; overrides ServerConfig.on_proto_poisoning. */
  on_proto_poisoning?: PoisoningAction;
  /** JSON bodies with `constructor: {prototype}`: 'error' (400), 'remove', 'ignore'; overrides ServerConfig.on_constructor_poisoning. */
  on_constructor_poisoning?: PoisoningAction;
  /** Extra Connect-style middleware for this route, after keel's own. */
  middleware?: readonly Middleware[];
  openapi?: OperationInfo;
  jsonrpc?: JsonRpcMethodInfoInput | null;
}

/** What `app.route()` accepts. */
export interface RouteDefinitionInput extends RouteOptionsInput {
  method: string | readonly string[];
  path: string;
  handler: Handler | HandlerFunction;
}

const RouteRecord = defineRecord<Record<string, unknown>>('Route', {
  method: { type: t.json(), required: true },
  path: { type: t.string(), required: true },
  handler: { type: t.json(), required: true },
  parameters: { type: t.json() },
  body: { type: t.json() },
  body_schema: { type: t.json() },
  body_required: { type: t.boolean() },
  response: { type: t.json() },
  responses: { type: t.json() },
  response_validation: { type: t.string({ enum: RESPONSE_VALIDATION_MODES }) },
  cors: { type: t.json() },
  request_id: { type: t.json() },
  jwt_auth: { type: t.json() },
  api_key_auth: { type: t.json() },
  authorization: { type: t.json() },
  lifecycle_hooks: { type: t.json() },
  compression: { type: t.json() },
  rate_limit: { type: t.json() },
  max_body_size: { type: t.integer(0), nullable: true },
  max_uri_length: { type: t.integer(1), nullable: true },
  request_timeout: { type: t.integer(1), nullable: true },
  on_proto_poisoning: { type: t.string({ enum: POISONING_ACTIONS }) },
  on_constructor_poisoning: { type: t.string({ enum: POISONING_ACTIONS }) },
  middleware: { type: t.json() },
  openapi: { type: t.json() },
  jsonrpc: { type: t.json() },
});

/** A checked route: records parsed, pattern compiled, parameters split. */
export interface RouteDefinition {
  methods: HttpMethod[];
  path: string;
  compiled: CompiledPattern;
  handler: Handler;
  params: ParamSpec[];
  /** `parameters.files`: checks on uploaded files. */
  files: FileParamSpec[];
  body: Schema | undefined;
  bodyRequired: boolean;
  response: Schema | undefined;
  /** `responses` by status code (`null`: answered without content); undefined when not given. */
  responses: Readonly<Record<number, Schema | null>> | undefined;
  /** undefined: the App's ServerConfig.response_validation. */
  responseValidation: ResponseValidationMode | undefined;
  cors: CorsConfig | null;
  requestId: Readonly<RequestIdConfig> | null;
  jwtAuth: Readonly<JwtAuthConfig> | null;
  apiKeyAuth: Readonly<ApiKeyAuthConfig> | null;
  authorization: Readonly<AuthorizationConfig> | null;
  lifecycleHooks: Readonly<LifecycleHooksConfig> | null;
  compression: Readonly<CompressionConfig> | null;
  rateLimit: Readonly<RateLimitConfig> | null;
  /** undefined: inherit the server's value. */
  maxBodySize: number | null | undefined;
  maxUriLength: number | null | undefined;
  requestTimeout: number | null | undefined;
  onProtoPoisoning: PoisoningAction | undefined;
  onConstructorPoisoning: PoisoningAction | undefined;
  middleware: Middleware[];
  openapi: OperationInfo;
  jsonrpc: Readonly<JsonRpcMethodInfo> | null;
}

/** The route input carries `key` (snake_case or camelCase), even as null. */
function given(input: object, key: string): boolean {
  const camel = key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  return (key in input && (input as Record<string, unknown>)[key] !== undefined) || (camel in input && (input as Record<string, unknown>)[camel] !== undefined);
}

function opt<T>(v: unknown, parse: (x: unknown, path: string) => T, path: string): T | null {
  return v === undefined || v === null ? null : parse(v, path);
}

/**
 * `responses`: integer status keys 100-599, each a JSON Schema (checked like every route schema) or
 * null for a status answered without content. `response` already is the 200 schema: both is an error.
 */
function parseResponses(value: unknown, hasResponse: boolean, label: string, where: string): Readonly<Record<number, Schema | null>> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new AppError('Route', `${where}.responses must be an object of status code → JSON Schema (or null), got ${JSON.stringify(value)}; e.g. { 201: note, 204: null }.`);
  }
  const out: Record<number, Schema | null> = {};
  for (const [key, schema] of Object.entries(value)) {
    const status = Number(key);
    if (!/^[1-5]\d\d$/.test(key) || status < 100 || status > 599) {
      throw new AppError('Route', `${where}.responses: "${key}" is not an HTTP status code; use integers from 100 to 599 (RFC 9110 §15).`);
    }
    if (status === 200 && hasResponse) {
      throw new AppError('Route', `${where}: the 200 schema is given twice (response and responses[200]); keep one.`);
    }
    if (schema !== null) checkSchema(label, `responses.${key}`, schema);
    out[status] = schema as Schema | null;
  }
  return Object.freeze(out);
}

/**
 * The JWT verification key checked when the route is registered (a too-short HS secret, a bad PEM), so the error names
 * the route and comes from `app.get(…)`, not from `listen()` or the first `inject()`.
 */
export function withCheckedKey<C extends { enabled?: boolean; algorithm: JwtAlgorithm; secret?: string; public_key?: string } | null | undefined>(config: C, record: string, path: string): C {
  if (config && config.enabled !== false) importVerificationKey(record, path, config.algorithm, config.secret, config.public_key);
  return config;
}

/** Parse a route definition; any problem is an AppError('Route') naming the route. */
export function parseRouteDefinition(input: RouteDefinitionInput): RouteDefinition {
  const label = `${Array.isArray(input?.method) ? input.method.join('|') : String(input?.method)} ${String(input?.path)}`;
  try {
    const r = RouteRecord.parse(input, `Route(${label})`);
    const where = `Route(${label})`;
    const methods = (Array.isArray(r.method) ? r.method : [r.method]).map((m) => parseMethod(m, `${where}.method`));
    const compiled = compilePattern(r.path as string);
    const handler = typeof r.handler === 'function' ? intoHandler(r.handler as HandlerFunction) : (r.handler as Handler);
    if (!handler || typeof handler.call !== 'function') throw new AppError('Route', `${where}: handler must be a function or an object with call(request, data)`);
    const parameters = (r.parameters ?? {}) as Record<string, Record<string, Record<string, unknown>>>;
    for (const k of Object.keys(parameters)) {
      if (!['path', 'query', 'headers', 'cookies', 'files', 'body'].includes(k)) throw new AppError('Route', `${where}.parameters: unknown source "${k}" (use path, query, headers, cookies, files, body)`);
    }
    const sources: [ParamSource, string][] = [['path', 'path'], ['query', 'query'], ['headers', 'headers'], ['cookie', 'cookies']];
    const params = sources.flatMap(([source, key]) => paramSpecs(source, parameters[key]));
    // `{id:int}` placeholders imply a schema unless the route declares one for that name.
    for (const [name, schema] of Object.entries(compiled.typed)) {
      if (!params.some((p) => p.source === 'path' && p.name === name)) params.unshift({ source: 'path', name, schema, required: true });
    }
    for (const p of params) {
      if (p.source === 'path' && !compiled.names.includes(p.name) && compiled.wildcard !== p.name) {
        throw new AppError('Route', `${where}: path parameter "${p.name}" is not in the path`);
      }
    }
    if (r.middleware !== undefined && (!Array.isArray(r.middleware) || !r.middleware.every((m) => typeof m === 'function'))) {
      throw new AppError('Route', `${where}.middleware must be a list of (req, res, next) functions`);
    }
    const body = (r.body ?? r.body_schema ?? (parameters.body ? formBodySchema(parameters.body, `${where}.parameters.body`) : undefined)) as Schema | undefined;
    const openapi = (r.openapi as OperationInfo | undefined) ?? {};
    // Schemas are compiled now, not when the router is built: a bad one names this route and its part.
    checkRouteSchemas(label, { params, body, response: r.response, responses: openapi.responses });
    const responses = parseResponses(r.responses, r.response !== undefined, label, where);
    return {
      methods,
      path: r.path as string,
      compiled,
      handler,
      params,
      files: fileParamSpecs(parameters.files, `${where}.parameters.files`),
      body,
      bodyRequired: (r.body_required as boolean | undefined) ?? true,
      response: r.response as Schema | undefined,
      responses,
      responseValidation: (r.response_validation as ResponseValidationMode | undefined) ?? undefined,
      cors: opt(r.cors, (v, p) => CorsConfig.parse(v, p), `${where}.cors`),
      requestId: opt(r.request_id, RequestIdConfig.parse, `${where}.request_id`),
      jwtAuth: withCheckedKey(opt(r.jwt_auth, JwtAuthConfig.parse, `${where}.jwt_auth`), 'JwtAuthConfig', `${where}.jwt_auth`),
      apiKeyAuth: opt(r.api_key_auth, ApiKeyAuthConfig.parse, `${where}.api_key_auth`),
      authorization: opt(r.authorization, AuthorizationConfig.parse, `${where}.authorization`),
      lifecycleHooks: opt(r.lifecycle_hooks, LifecycleHooksConfig.parse, `${where}.lifecycle_hooks`),
      compression: opt(r.compression, CompressionConfig.parse, `${where}.compression`),
      rateLimit: opt(r.rate_limit, RateLimitConfig.parse, `${where}.rate_limit`),
      // The record fills an absent nullable key with null, which here would mean "unlimited" /
      // "no timeout": only a key the route actually gives overrides the server's value.
      maxBodySize: given(input, 'max_body_size') ? (r.max_body_size as number | null) : undefined,
      maxUriLength: given(input, 'max_uri_length') ? (r.max_uri_length as number | null) : undefined,
      requestTimeout: given(input, 'request_timeout') ? (r.request_timeout as number | null) : undefined,
      onProtoPoisoning: (r.on_proto_poisoning as PoisoningAction | undefined) ?? undefined,
      onConstructorPoisoning: (r.on_constructor_poisoning as PoisoningAction | undefined) ?? undefined,
      middleware: (r.middleware as Middleware[] | undefined) ?? [],
      openapi,
      jsonrpc: opt(r.jsonrpc, JsonRpcMethodInfo.parse, `${where}.jsonrpc`),
    };
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (err instanceof ConfigError) throw new AppError('Route', err.message, { cause: err });
    throw new AppError('Route', `Route ${label}: ${(err as Error).message}`, { cause: err });
  }
}
