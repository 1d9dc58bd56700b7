/**
 * Configuration records: the specification's defaults, camelCase input, every rejection rule and
 * the ConfigError they raise (record, path, key, value), and deep-frozen results.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../lib/http/errors.js';
import {
  ServerConfig, CompressionConfig, RateLimitConfig, JwtConfig, ApiKeyConfig, StaticFilesConfig,
  AsyncApiConfig, OpenApiConfig, ContactInfo, LicenseInfo, ServerInfo, JsonRpcConfig, JsonRpcMethodInfo,
  GrpcConfig, BackgroundTaskConfig, BackgroundJobMetadata, ResponseRecord, ParseRequest, ValidateRequest,
  CorsConfig, RequestIdConfig, JwtAuthConfig, ApiKeyAuthConfig, AuthorizationConfig, LifecycleHooksConfig, LifecycleHookRef,
  SchemaConfig, QueryOnlyConfig, QueryMutationConfig, FullSchemaConfig, DynamicSchemaConfig, FieldErrorSpec,
  GraphQlRouteConfig, schemaQueryOnly, schemaQueryMutation, schemaFull, parseMethod, assertApiKeysPresent,
  LIFECYCLE_HOOK_PHASES, HOOK_PHASES, METHODS,
} from '../lib/records/index.js';

/** Run `fn`, assert it throws a ConfigError, return it. */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a ConfigError, nothing was thrown');
}

function isDeepFrozen(v: unknown): boolean {
  if (v === null || typeof v !== 'object') return true;
  if (!Object.isFrozen(v)) return false;
  return Object.values(v).every(isDeepFrozen);
}

describe('when records are parsed from an empty object', () => {
  it('should give ServerConfig the specification defaults', () => {
    assert.deepEqual({ ...ServerConfig.defaults() }, {
      host: '127.0.0.1',
      port: 8000,
      workers: 1,
      enable_request_id: false,
      max_body_size: 10485760,
      multipart_max_parts: 1000, multipart_max_files: 100, multipart_max_fields: 1000, multipart_max_field_size: 1_048_576,
      max_uri_length: 8192, // keel's own (RFC 9110 §15.5.15's 414), not in the specification
      on_proto_poisoning: 'error',
      on_constructor_poisoning: 'error',
      response_validation: 'strict',
      request_timeout: null,
      compression: null,
      rate_limit: null,
      jwt_auth: null,
      api_key_auth: null,
      static_files: [],
      graceful_shutdown: true,
      shutdown_timeout: 30,
      send_timeout: 30, // keel's own (issue 26: slow readers), not in the specification
      // keel's own (issue 26: WebSocket floods and slow readers), not in the specification.
      // keel's own (issue 35: one budget per client across connections).
      max_connections_per_client: 100,
      max_connections: 'auto',
      shed_event_loop_delay_ms: 200,
      shed_event_loop_utilization: 0,
      fair_read_event_loop_delay_ms: 0,
      fair_read_turn_ms: 10,
      h2_resets_per_second: 33,
      h2_reset_burst: 200,
      h2_client_resets_per_second: 100,
      h2_client_reset_burst: 1000,
      h2_streams_per_second: null,
      h2_stream_burst: 1000,
      h2_client_streams_per_second: null,
      h2_client_stream_burst: 2000,
      h2_unproven_streams: 10,
      ws_client_messages_per_second: 1000,
      ws_client_message_burst: 2000,
      ws_messages_per_second: 100,
      ws_message_burst: 200,
      ws_on_rate_exceeded: 'close',
      ws_max_buffered_bytes: 1_048_576,
      ws_on_send_buffer_full: 'close',
      ws_idle_timeout: 120,
      asyncapi: null,
      openapi: null,
      jsonrpc: null,
      grpc: null,
      background_tasks: { enabled: false, max_queue_size: 1024, max_concurrent_tasks: 128, drain_timeout_secs: 30 },
      enable_http_trace: false,
      // keel extension (Express's 'trust proxy' for the rate limit's client address): off.
      trust_proxy: false,
      cors: null,
      // keel's operations endpoints (docs/operations.md): off unless given.
      readiness: null,
      metrics: null,
      opentelemetry: null,
      // keel extension (issue 35): expensive work paid for by its measured time, on by default.
      work_limits: {
        cpu_ms_per_second: 250, cpu_ms_burst: 5000, max_concurrent: 4, max_queued: 8, max_loop_share: 0.5,
        max_event_loop_delay_ms: 100, max_event_loop_utilization: 0, sample_interval_ms: 500,
      },
    });
  });

  const cases: Array<[string, () => unknown, unknown]> = [
    ['CompressionConfig', () => CompressionConfig.defaults(), { gzip: true, brotli: true, min_size: 1024, quality: 6, enabled: true }],
    ['RateLimitConfig', () => RateLimitConfig.defaults(), { per_second: 100, burst: 200, ip_based: true, enabled: true }],
    // max_expanded_nodes / max_response_bytes: keel's work budget (issue 26), not in the specification.
    ['AsyncApiConfig', () => AsyncApiConfig.defaults(), { enabled: false, spec: null, max_expanded_nodes: 100_000, max_response_bytes: 4_194_304 }],
    ['OpenApiConfig', () => OpenApiConfig.defaults(), {
      enabled: false, title: 'API', version: '1.0.0', description: null, swagger_ui_path: '/docs', redoc_path: '/redoc',
      openapi_json_path: '/openapi.json', contact: null, license: null, servers: [], security_schemes: {},
    }],
    ['ContactInfo', () => ContactInfo.defaults(), { name: null, email: null, url: null }],
    ['JsonRpcConfig', () => JsonRpcConfig.defaults(), { enabled: true, endpoint_path: '/rpc', enable_batch: true, max_batch_size: 100, max_response_bytes: 4_194_304 }],
    ['GrpcConfig', () => GrpcConfig.defaults(), {
      enabled: true, max_message_size: 4194304, enable_compression: true, request_timeout: null, max_concurrent_streams: 100,
      enable_keepalive: true, keepalive_interval: 75, keepalive_timeout: 20, max_stream_response_bytes: null,
      h2_idle_timeout: 120, max_h2_sessions: 1000, max_h2_sessions_per_client: 100, max_calls_per_client: 100,
      max_stream_request_bytes: 16_777_216, max_stream_request_messages: 10_000, shutdown_stream_grace: 5,
    }],
    ['BackgroundTaskConfig', () => BackgroundTaskConfig.defaults(), { enabled: false, max_queue_size: 1024, max_concurrent_tasks: 128, drain_timeout_secs: 30 }],
    ['BackgroundJobMetadata', () => BackgroundJobMetadata.defaults(), { name: 'background_task', request_id: null }],
    ['Response', () => ResponseRecord.defaults(), { content: null, status_code: 200, headers: {} }],
    ['CorsConfig', () => CorsConfig.defaults().toJSON(), {
      allowed_origins: ['*'], allowed_methods: ['*'], allowed_headers: [], expose_headers: null, max_age: null, allow_credentials: null,
    }],
    ['JwtAuthConfig', () => JwtAuthConfig.defaults(), { enabled: true, algorithm: 'HS256', audience: null, issuer: null, leeway: 0, claims: null }],
    ['ApiKeyAuthConfig', () => ApiKeyAuthConfig.defaults(), { enabled: true, keys: [], header_name: 'X-API-Key' }],
    ['AuthorizationConfig', () => AuthorizationConfig.defaults(), { required_roles: [], required_scopes: [], required_permissions: [], require_all: true }],
    ['LifecycleHooksConfig', () => LifecycleHooksConfig.defaults(), { on_request: [], pre_validation: [], pre_handler: [], on_response: [], on_error: [] }],
    ['SchemaConfig', () => SchemaConfig.defaults(), { introspection_enabled: true, complexity_limit: null, depth_limit: null, max_response_bytes: 1_048_576 }],
    ['QueryOnlyConfig (schema_query_only())', () => schemaQueryOnly(), { introspection_enabled: true, complexity_limit: null, depth_limit: null, max_response_bytes: 1_048_576 }],
    ['QueryMutationConfig (schema_query_mutation())', () => schemaQueryMutation(), { introspection_enabled: true, complexity_limit: null, depth_limit: null, max_response_bytes: 1_048_576 }],
    ['FullSchemaConfig (schema_full())', () => schemaFull(), { introspection_enabled: true, complexity_limit: null, depth_limit: null, max_response_bytes: 1_048_576 }],
    ['GraphQlRouteConfig', () => new GraphQlRouteConfig().toJSON(), { path: '/graphql', method: 'POST', enable_playground: false, description: null }],
  ];
  for (const [name, get, expected] of cases) {
    it(`should give ${name} the specification defaults`, () => {
      assert.deepEqual(JSON.parse(JSON.stringify(get())), expected);
    });
  }

  it('should leave JwtAuthConfig secret and public_key absent (not null)', () => {
    const d = JwtAuthConfig.defaults();
    assert.equal('secret' in d, false);
    assert.equal('public_key' in d, false);
  });

  it('should give the QueryOnly/QueryMutation/Full records separately parsed values', () => {
    assert.notEqual(QueryOnlyConfig.defaults(), QueryOnlyConfig.defaults());
    assert.deepEqual(QueryMutationConfig.defaults(), FullSchemaConfig.defaults());
  });

  it('should default the nested records only when their key is given', () => {
    const c = ServerConfig.parse({ compression: {}, rate_limit: {}, grpc: {}, jsonrpc: {}, openapi: {}, asyncapi: {} });
    assert.deepEqual(c.compression, CompressionConfig.defaults());
    assert.deepEqual(c.rate_limit, RateLimitConfig.defaults());
    assert.deepEqual(c.grpc, GrpcConfig.defaults());
    assert.deepEqual(c.jsonrpc, JsonRpcConfig.defaults());
    assert.deepEqual(c.openapi, OpenApiConfig.defaults());
    assert.deepEqual(c.asyncapi, AsyncApiConfig.defaults());
  });

  it('should fill StaticFilesConfig defaults beside its required keys', () => {
    assert.deepEqual({ ...StaticFilesConfig.parse({ directory: './public', route_prefix: '/static' }) }, {
      directory: './public', route_prefix: '/static', index_file: true, cache_control: null,
    });
  });

  it('should fill ApiKeyConfig header_name and JwtConfig algorithm/leeway beside their required keys', () => {
    assert.deepEqual({ ...ApiKeyConfig.parse({ keys: ['k1'] }) }, { keys: ['k1'], header_name: 'X-API-Key' });
    assert.deepEqual({ ...JwtConfig.parse({ secret: 's3cret' }) }, { secret: 's3cret', algorithm: 'HS256', audience: null, issuer: null, leeway: 0, claims: null });
  });

  it('should fill JsonRpcMethodInfo, LicenseInfo, LifecycleHookRef and DynamicSchemaConfig defaults beside required keys', () => {
    assert.deepEqual({ ...JsonRpcMethodInfo.parse({ method_name: 'add' }) }, {
      method_name: 'add', description: null, params_schema: null, result_schema: null, deprecated: false, tags: [],
    });
    assert.deepEqual({ ...LicenseInfo.parse({ name: 'MIT' }) }, { name: 'MIT', url: null });
    assert.deepEqual({ ...LifecycleHookRef.parse({ name: 'auth', handler: 'check' }) }, {
      name: 'auth', handler: 'check', dependencies: [], config: null, order: null,
    });
    assert.deepEqual({ ...DynamicSchemaConfig.parse({ introspection_enabled: false }) }, {
      introspection_enabled: false, max_complexity: null, max_depth: null, max_response_bytes: 1_048_576, field_errors: [],
    });
  });

  it('should give fresh default lists per parse (no shared mutable default)', () => {
    const a = ServerConfig.defaults();
    const b = ServerConfig.defaults();
    assert.notEqual(a.static_files, b.static_files);
    assert.notEqual(a.background_tasks, b.background_tasks);
  });
});

describe('when records are given camelCase keys', () => {
  it('should accept camelCase for every ServerConfig key and nested record', () => {
    const c = ServerConfig.parse({
      enableRequestId: true, maxBodySize: 1024, requestTimeout: 5, gracefulShutdown: false, shutdownTimeout: 3,
      enableHttpTrace: true, rateLimit: { perSecond: 5, ipBased: false }, compression: { minSize: 10 },
      backgroundTasks: { maxQueueSize: 8, drainTimeoutSecs: 1 }, staticFiles: [{ directory: 'd', routePrefix: '/s', indexFile: false }],
      apiKeyAuth: { keys: ['k'], headerName: 'X-Key' },
    });
    assert.equal(c.enable_request_id, true);
    assert.equal(c.max_body_size, 1024);
    assert.equal(c.request_timeout, 5);
    assert.equal(c.graceful_shutdown, false);
    assert.equal(c.shutdown_timeout, 3);
    assert.equal(c.enable_http_trace, true);
    assert.deepEqual({ ...c.rate_limit }, { per_second: 5, burst: 200, ip_based: false, enabled: true });
    assert.equal(c.compression?.min_size, 10);
    assert.equal(c.background_tasks.max_queue_size, 8);
    assert.equal(c.background_tasks.drain_timeout_secs, 1);
    assert.equal(c.static_files[0]?.route_prefix, '/s');
    assert.equal(c.static_files[0]?.index_file, false);
    assert.equal(c.api_key_auth?.header_name, 'X-Key');
  });

  it('should return snake_case keys only', () => {
    const c = RateLimitConfig.parse({ perSecond: 5 });
    assert.deepEqual(Object.keys(c).sort(), ['burst', 'enabled', 'ip_based', 'per_second']);
  });

  it('should accept camelCase for the per-route records', () => {
    assert.deepEqual(CorsConfig.parse({ allowedOrigins: ['https://a.example'], maxAge: 60, allowCredentials: true }).toJSON(), {
      allowed_origins: ['https://a.example'], allowed_methods: ['*'], allowed_headers: [], expose_headers: null, max_age: 60, allow_credentials: true,
    });
    assert.equal(JwtAuthConfig.parse({ publicKey: 'PEM', algorithm: 'RS256' }).public_key, 'PEM');
    assert.equal(ApiKeyAuthConfig.parse({ headerName: 'X-Key' }).header_name, 'X-Key');
    assert.deepEqual(AuthorizationConfig.parse({ requiredScopes: ['read'], requireAll: false }).required_scopes, ['read']);
    assert.equal(LifecycleHooksConfig.parse({ onRequest: [{ name: 'a', handler: 'h' }] }).on_request.length, 1);
    assert.equal(DynamicSchemaConfig.parse({ introspectionEnabled: false, fieldErrors: [{ path: 'user.email', message: 'x' }] }).field_errors.length, 1);
  });
});

describe('when a feature record carries enabled, as the reference\'s records do', () => {
  it('should accept enabled: true and false on CompressionConfig and RateLimitConfig', () => {
    assert.equal(RateLimitConfig.parse({ enabled: true, per_second: 1, burst: 1 }).enabled, true);
    assert.equal(RateLimitConfig.parse({ enabled: false }).enabled, false);
    assert.equal(CompressionConfig.parse({ enabled: false, min_size: 0 }).enabled, false);
    assert.equal(ServerConfig.parse({ compression: { enabled: false } }).compression?.enabled, false);
  });
  it('should reject an enabled that is not a boolean', () => {
    const err = configError(() => RateLimitConfig.parse({ enabled: 'yes' }));
    assert.equal(err.key, 'enabled');
  });
  it('should still reject a key the reference does not have either (requests_per_second), suggesting per_second', () => {
    const err = configError(() => RateLimitConfig.parse({ enabled: true, requests_per_second: 10 }));
    assert.equal(err.key, 'requests_per_second');
    assert.match(err.message, /Did you mean "per_second"\?/);
  });
});

describe('when a record is given an unknown key', () => {
  const typos: Array<[string, () => unknown, string, string]> = [
    ['ServerConfig "prot"', () => ServerConfig.parse({ prot: 1 }), 'prot', 'port'],
    ['ServerConfig "max_body_sise"', () => ServerConfig.parse({ max_body_sise: 1 }), 'max_body_sise', 'max_body_size'],
    ['ServerConfig camelCase "maxBodySise"', () => ServerConfig.parse({ maxBodySise: 1 }), 'maxBodySise', 'max_body_size'],
    ['CompressionConfig "gzp" nested in ServerConfig', () => ServerConfig.parse({ compression: { gzp: true } }), 'gzp', 'gzip'],
    ['CorsConfig "allowed_origin"', () => CorsConfig.parse({ allowed_origin: ['*'] }), 'allowed_origin', 'allowed_origins'],
    ['AuthorizationConfig "required_scope"', () => AuthorizationConfig.parse({ required_scope: 'x' }), 'required_scope', 'required_scopes'],
    ['ApiKeyAuthConfig "header" (another spelling, not the reference\'s header_name)', () => ApiKeyAuthConfig.parse({ enabled: true, header: 'X-API-Key' }), 'header', 'header_name'],
    ['LifecycleHookRef "dependencys"', () => LifecycleHookRef.parse({ name: 'a', handler: 'h', dependencys: [] }), 'dependencys', 'dependencies'],
  ];
  for (const [what, fn, key, suggestion] of typos) {
    it(`should reject ${what} and suggest "${suggestion}"`, () => {
      const err = configError(fn);
      assert.equal(err.key, key);
      assert.match(err.message, new RegExp(`Unknown key "${key}"`));
      assert.match(err.message, new RegExp(`Did you mean "${suggestion}"\\?`));
    });
  }

  it('should list the allowed keys when nothing is close', () => {
    const err = configError(() => RateLimitConfig.parse({ zzzzzzzzzz: 1 }));
    assert.match(err.message, /Allowed keys: per_second, burst, ip_based, enabled\./);
  });

  it('should name the nested path of the unknown key', () => {
    const err = configError(() => ServerConfig.parse({ rate_limit: { brust: 3 } }));
    assert.equal(err.record, 'RateLimitConfig');
    assert.equal(err.path, 'ServerConfig.rate_limit.brust');
    assert.match(err.message, /at ServerConfig\.rate_limit/);
  });
});

describe('when a record is given a value of the wrong type or range', () => {
  const invalid: Array<[string, () => unknown, string, unknown]> = [
    ['port as a string', () => ServerConfig.parse({ port: '8000' }), 'ServerConfig.port', '8000'],
    ['port above 65535', () => ServerConfig.parse({ port: 65536 }), 'ServerConfig.port', 65536],
    ['port below 0', () => ServerConfig.parse({ port: -1 }), 'ServerConfig.port', -1],
    ['port as a fraction', () => ServerConfig.parse({ port: 80.5 }), 'ServerConfig.port', 80.5],
    ['port as null', () => ServerConfig.parse({ port: null }), 'ServerConfig.port', null],
    ['workers of 0', () => ServerConfig.parse({ workers: 0 }), 'ServerConfig.workers', 0],
    ['host as an empty string', () => ServerConfig.parse({ host: '' }), 'ServerConfig.host', ''],
    ['enable_request_id as "true"', () => ServerConfig.parse({ enable_request_id: 'true' }), 'ServerConfig.enable_request_id', 'true'],
    ['max_body_size negative', () => ServerConfig.parse({ max_body_size: -1 }), 'ServerConfig.max_body_size', -1],
    ['request_timeout of 0', () => ServerConfig.parse({ request_timeout: 0 }), 'ServerConfig.request_timeout', 0],
    ['shutdown_timeout as a string', () => ServerConfig.parse({ shutdown_timeout: '30s' }), 'ServerConfig.shutdown_timeout', '30s'],
    ['static_files as an object', () => ServerConfig.parse({ static_files: {} }), 'ServerConfig.static_files', {}],
    ['compression quality 12', () => ServerConfig.parse({ compression: { quality: 12 } }), 'ServerConfig.compression.quality', 12],
    ['rate_limit per_second 0', () => ServerConfig.parse({ rate_limit: { per_second: 0 } }), 'ServerConfig.rate_limit.per_second', 0],
    ['jwt algorithm "none"', () => ServerConfig.parse({ jwt_auth: { secret: 's', algorithm: 'none' } }), 'ServerConfig.jwt_auth.algorithm', 'none'],
    ['CorsConfig max_age negative', () => CorsConfig.parse({ max_age: -5 }), 'CorsConfig.max_age', -5],
    ['CorsConfig max_age beyond 32 bits', () => CorsConfig.parse({ max_age: 2 ** 31 }), 'CorsConfig.max_age', 2 ** 31],
    ['CorsConfig allowed_origins as a string', () => CorsConfig.parse({ allowed_origins: '*' }), 'CorsConfig.allowed_origins', '*'],
    ['CorsConfig allowed_methods item a number', () => CorsConfig.parse({ allowed_methods: ['GET', 1] }), 'CorsConfig.allowed_methods[1]', 1],
    ['GrpcConfig max_concurrent_streams beyond 32 bits', () => GrpcConfig.parse({ max_concurrent_streams: 2 ** 32 }), 'GrpcConfig.max_concurrent_streams', 2 ** 32],
    ['OpenApiConfig docs path without "/"', () => OpenApiConfig.parse({ swagger_ui_path: 'docs' }), 'OpenApiConfig.swagger_ui_path', 'docs'],
    ['StaticFilesConfig route_prefix without "/"', () => StaticFilesConfig.parse({ directory: 'd', route_prefix: 's' }), 'StaticFilesConfig.route_prefix', 's'],
    ['Response status_code 600', () => ResponseRecord.parse({ status_code: 600 }), 'Response.status_code', 600],
    ['FieldErrorSpec path with a space', () => FieldErrorSpec.parse({ path: 'user email', message: 'x' }), 'FieldErrorSpec.path', 'user email'],
    ['LifecycleHookRef order as a string', () => LifecycleHookRef.parse({ name: 'a', handler: 'h', order: '1' }), 'LifecycleHookRef.order', '1'],
  ];
  for (const [what, fn, path, value] of invalid) {
    it(`should reject ${what}, naming the path and the value`, () => {
      const err = configError(fn);
      assert.equal(err.path, path);
      assert.deepEqual(err.value, value);
      assert.ok(err.message.includes(path), err.message);
      assert.ok(err.message.includes(JSON.stringify(value)), err.message);
    });
  }

  it('should name the record in the message and on the error', () => {
    const err = configError(() => ServerConfig.parse({ compression: { quality: 12 } }));
    assert.equal(err.record, 'CompressionConfig');
    assert.equal(err.key, 'quality');
    assert.equal(err.message, 'Invalid CompressionConfig at ServerConfig.compression.quality: expected an integer from 0 to 11, got 12.');
  });

  it('should suggest the closest enum value', () => {
    const err = configError(() => JwtConfig.parse({ secret: 's', algorithm: 'HS265' }));
    assert.match(err.message, /Did you mean "HS256"\?/);
  });

  it('should reject input that is not an object', () => {
    for (const input of [null, 42, 'config', [], true]) {
      const err = configError(() => ServerConfig.parse(input));
      assert.equal(err.record, 'ServerConfig');
    }
  });

  it('should use the path the caller gives', () => {
    const err = configError(() => RateLimitConfig.parse({ burst: 0 }, 'routes[3].rate_limit'));
    assert.equal(err.path, 'routes[3].rate_limit.burst');
  });
});

describe('when required keys are missing', () => {
  const missing: Array<[string, () => unknown, string]> = [
    ['ApiKeyConfig.keys', () => ApiKeyConfig.parse({}), 'keys'],
    ['StaticFilesConfig.directory', () => StaticFilesConfig.parse({ route_prefix: '/s' }), 'directory'],
    ['StaticFilesConfig.route_prefix', () => StaticFilesConfig.parse({ directory: 'd' }), 'route_prefix'],
    ['LicenseInfo.name', () => LicenseInfo.parse({}), 'name'],
    ['ServerInfo.url', () => ServerInfo.parse({}), 'url'],
    ['JsonRpcMethodInfo.method_name', () => JsonRpcMethodInfo.parse({}), 'method_name'],
    ['RequestIdConfig.enabled', () => RequestIdConfig.parse({}), 'enabled'],
    ['LifecycleHookRef.name', () => LifecycleHookRef.parse({ handler: 'h' }), 'name'],
    ['LifecycleHookRef.handler', () => LifecycleHookRef.parse({ name: 'a' }), 'handler'],
    ['DynamicSchemaConfig.introspection_enabled', () => DynamicSchemaConfig.parse({}), 'introspection_enabled'],
    ['FieldErrorSpec.message', () => FieldErrorSpec.parse({ path: 'a' }), 'message'],
    ['ParseRequest.spec', () => ParseRequest.parse({}), 'spec'],
    ['ValidateRequest.payload', () => ValidateRequest.parse({ spec: {}, channel: 'c', message: 'm' }), 'payload'],
    ['JwtConfig.secret for HS256', () => JwtConfig.parse({}), 'secret'],
    ['JwtConfig.public_key for RS256', () => JwtConfig.parse({ algorithm: 'RS256' }), 'public_key'],
  ];
  for (const [what, fn, key] of missing) {
    it(`should reject a missing ${what}`, () => {
      const err = configError(fn);
      assert.equal(err.key, key);
    });
  }
});

describe('when both the snake_case and camelCase spelling of a key are given', () => {
  const both: Array<[string, () => unknown]> = [
    ['ServerConfig max_body_size', () => ServerConfig.parse({ max_body_size: 1, maxBodySize: 2 })],
    ['RateLimitConfig per_second', () => RateLimitConfig.parse({ per_second: 1, perSecond: 2 })],
    ['CorsConfig allowed_origins', () => CorsConfig.parse({ allowed_origins: ['a'], allowedOrigins: ['b'] })],
    ['AuthorizationConfig required_roles', () => AuthorizationConfig.parse({ required_roles: ['a'], requiredRoles: ['b'] })],
    ['AuthorizationConfig required_role', () => AuthorizationConfig.parse({ required_role: 'a', requiredRole: 'b' })],
    ['AuthorizationConfig required_roles beside required_role', () => AuthorizationConfig.parse({ required_role: 'x', required_roles: ['a'], requiredRoles: ['b'] })],
  ];
  for (const [what, fn] of both) {
    it(`should reject ${what} given twice`, () => {
      const err = configError(fn);
      assert.match(err.message, /given twice/);
    });
  }
});

describe('when nullable keys are given null', () => {
  it('should accept max_body_size: null as unlimited', () => {
    assert.equal(ServerConfig.parse({ max_body_size: null }).max_body_size, null);
  });
  it('should accept request_timeout: null as no timeout', () => {
    assert.equal(ServerConfig.parse({ request_timeout: null }).request_timeout, null);
  });
  it('should accept null for the optional nested records', () => {
    const c = ServerConfig.parse({ compression: null, rate_limit: null, jwt_auth: null, api_key_auth: null, openapi: null, grpc: null });
    assert.equal(c.compression, null);
    assert.equal(c.grpc, null);
  });
  it('should reject null for background_tasks, which is always present', () => {
    const err = configError(() => ServerConfig.parse({ background_tasks: null }));
    assert.equal(err.key, 'background_tasks');
  });
});

describe('when per-route records follow their special rules', () => {
  it('should let required_role fill required_roles', () => {
    assert.deepEqual(AuthorizationConfig.parse({ required_role: 'admin' }).required_roles, ['admin']);
    assert.deepEqual(AuthorizationConfig.parse({ requiredRole: 'admin' }).required_roles, ['admin']);
    assert.deepEqual(AuthorizationConfig.parse({ required_role: 'admin', required_roles: ['ops'] }).required_roles, ['ops', 'admin']);
  });

  it('should reject required_role of the wrong type', () => {
    const err = configError(() => AuthorizationConfig.parse({ required_role: 42 }));
    assert.equal(err.key, 'required_role');
  });

  it('should reject a bare boolean RequestIdConfig', () => {
    for (const v of [true, false]) {
      const err = configError(() => RequestIdConfig.parse(v));
      assert.equal(err.record, 'RequestIdConfig');
      assert.equal(err.value, v);
    }
  });

  it('should accept RequestIdConfig {enabled: false}', () => {
    assert.deepEqual({ ...RequestIdConfig.parse({ enabled: false }) }, { enabled: false });
  });

  it('should parse an ApiKeyAuthConfig with only enabled and header_name', () => {
    assert.deepEqual({ ...ApiKeyAuthConfig.parse({ enabled: true, header_name: 'X-Key' }) }, { enabled: true, keys: [], header_name: 'X-Key' });
  });

  it('should refuse an enabled ApiKeyAuthConfig with no keys at start-up (never an open gate)', () => {
    const v = ApiKeyAuthConfig.parse({ enabled: true });
    const err = configError(() => assertApiKeysPresent(v));
    assert.equal(err.key, 'keys');
    assert.doesNotThrow(() => assertApiKeysPresent(ApiKeyAuthConfig.parse({ enabled: false })));
  });

  it('should accept a JwtAuthConfig with public_key and no secret', () => {
    const v = JwtAuthConfig.parse({ public_key: '-----BEGIN PUBLIC KEY-----\nMFk=\n-----END PUBLIC KEY-----', algorithm: 'ES256' });
    assert.equal(v.algorithm, 'ES256');
    assert.equal('secret' in v, false);
  });

  it('should reject the documentation placeholders as secrets and keys', () => {
    assert.equal(configError(() => JwtConfig.parse({ secret: '<JWT_SECRET>' })).key, 'secret');
    assert.equal(configError(() => ApiKeyConfig.parse({ keys: ['<API_KEY>'] })).key, 'keys[0]');
    assert.equal(configError(() => ApiKeyAuthConfig.parse({ keys: ['<API_KEY>'] })).key, 'keys[0]');
  });

  it('should reject unknown keys in LifecycleHookRef and AuthorizationConfig', () => {
    configError(() => LifecycleHookRef.parse({ name: 'a', handler: 'h', priority: 1 }));
    configError(() => AuthorizationConfig.parse({ roles: ['a'] }));
  });

  it('should accept any JSON as a hook config', () => {
    assert.deepEqual(LifecycleHookRef.parse({ name: 'a', handler: 'h', config: { limit: [1, 2] } }).config, { limit: [1, 2] });
  });

  it('should keep the five hook phases in run order', () => {
    assert.deepEqual([...HOOK_PHASES], ['on_request', 'pre_validation', 'pre_handler', 'on_response', 'on_error']);
    assert.deepEqual([...LIFECYCLE_HOOK_PHASES], ['OnRequest', 'PreValidation', 'PreHandler', 'OnResponse', 'OnError']);
  });
});

describe('when OpenAPI security schemes are given', () => {
  it('should accept the http and apiKey variants', () => {
    const c = OpenApiConfig.parse({
      security_schemes: { bearer: { type: 'http', scheme: 'bearer', bearer_format: 'JWT' }, key: { type: 'apiKey', location: 'header', name: 'X-API-Key' } },
    });
    assert.deepEqual(c.security_schemes.bearer, { type: 'http', scheme: 'bearer', bearer_format: 'JWT' });
    assert.deepEqual(c.security_schemes.key, { type: 'apiKey', location: 'header', name: 'X-API-Key' });
  });
  it('should reject an unknown variant tag', () => {
    const err = configError(() => OpenApiConfig.parse({ security_schemes: { x: { type: 'oauth2' } } }));
    assert.equal(err.value, 'oauth2');
  });
});

describe('when Method values are parsed', () => {
  it('should accept the spec names in any case and return the HTTP spelling', () => {
    for (const m of METHODS) {
      assert.equal(parseMethod(m), m.toUpperCase());
      assert.equal(parseMethod(m.toLowerCase()), m.toUpperCase());
    }
  });
  it('should reject an unknown method with a suggestion', () => {
    const err = configError(() => parseMethod('GTE'));
    assert.match(err.message, /Did you mean "GET"\?/);
  });
});

describe('when GraphQlRouteConfig is built', () => {
  it('should chain setters and read them back through the getters', () => {
    const r = new GraphQlRouteConfig().path('/gql').method('get').enablePlayground(true).description('d');
    assert.equal(r.getPath(), '/gql');
    assert.equal(r.getMethod(), 'GET');
    assert.equal(r.isPlaygroundEnabled(), true);
    assert.equal(r.getDescription(), 'd');
  });
  it('should reject a path without a leading slash and an unknown method', () => {
    configError(() => new GraphQlRouteConfig().path('gql'));
    configError(() => new GraphQlRouteConfig().method('FETCH'));
    configError(() => new GraphQlRouteConfig({ method: 'FETCH' }));
  });
});

describe('when a record has been parsed', () => {
  it('should be deeply frozen', () => {
    const c = ServerConfig.parse({ compression: {}, static_files: [{ directory: 'd', route_prefix: '/s' }], openapi: { servers: [{ url: 'http://x' }] } });
    assert.ok(isDeepFrozen(c));
    assert.throws(() => {
      (c as { port: number }).port = 1;
    }, TypeError);
    assert.throws(() => {
      (c.static_files as unknown[]).push({});
    }, TypeError);
  });

  it('should freeze a parsed CorsConfig and hook refs', () => {
    const cors = CorsConfig.parse({ allowed_origins: ['https://a.example'] });
    assert.ok(Object.isFrozen(cors));
    assert.ok(Object.isFrozen(cors.allowed_origins));
    assert.ok(isDeepFrozen(LifecycleHooksConfig.parse({ on_request: [{ name: 'a', handler: 'h', config: { x: [1] } }] })));
  });

  it('should not freeze or alias the caller input', () => {
    const input = { static_files: [{ directory: 'd', route_prefix: '/s' }] };
    const c = ServerConfig.parse(input);
    assert.equal(Object.isFrozen(input.static_files), false);
    assert.notEqual(c.static_files, input.static_files);
  });

  it('should parse an already parsed record to an equal value', () => {
    const c = ServerConfig.parse({ port: 0, compression: {} });
    assert.deepEqual(ServerConfig.parse(c), c);
  });
});

describe('when CorsConfig operations are used', () => {
  it('should join allowed methods and headers with ", "', () => {
    const c = CorsConfig.parse({ allowed_methods: ['GET', 'POST', 'PUT'], allowed_headers: ['Content-Type', 'Authorization'] });
    assert.equal(c.allowedMethodsJoined(), 'GET, POST, PUT');
    assert.equal(c.allowedHeadersJoined(), 'Content-Type, Authorization');
  });

  it('should join empty header lists to an empty string', () => {
    assert.equal(CorsConfig.defaults().allowedHeadersJoined(), '');
  });

  it('should allow any origin and method with the wildcard', () => {
    const c = CorsConfig.defaults();
    assert.equal(c.isOriginAllowed('https://anything.example'), true);
    assert.equal(c.isMethodAllowed('PATCH'), true);
  });

  it('should allow only exact matches without the wildcard', () => {
    const c = CorsConfig.parse({ allowed_origins: ['https://a.example'], allowed_methods: ['GET', 'POST'] });
    assert.equal(c.isOriginAllowed('https://a.example'), true);
    assert.equal(c.isOriginAllowed('https://a.example.evil'), false);
    assert.equal(c.isOriginAllowed('https://A.example'), false);
    assert.equal(c.isOriginAllowed('http://a.example'), false);
    assert.equal(c.isMethodAllowed('GET'), true);
    assert.equal(c.isMethodAllowed('DELETE'), false);
    assert.equal(c.isMethodAllowed('get'), false);
  });

  it('should keep the joined caches out of the wire form', () => {
    const c = CorsConfig.parse({ allowed_methods: ['GET'] });
    assert.deepEqual(Object.keys(JSON.parse(JSON.stringify(c))).sort(), [
      'allow_credentials', 'allowed_headers', 'allowed_methods', 'allowed_origins', 'expose_headers', 'max_age',
    ]);
  });

  it('should return the same instance when given a parsed CorsConfig', () => {
    const c = CorsConfig.parse({});
    assert.equal(CorsConfig.parse(c), c);
  });
});
