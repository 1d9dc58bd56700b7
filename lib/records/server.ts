/**
 * ServerConfig and the records it nests, with the specification's defaults (each stated once here).
 */
import { isIP } from 'node:net';
import { defineRecord, fail, t, type FieldType, type InputOf } from './define.js';
import { OpenApiConfig, AsyncApiConfig, JsonRpcConfig, GrpcConfig, BackgroundTaskConfig } from './protocol.js';
import type * as P from './protocol.js';
import { CorsConfig, type CorsConfigData } from './cors.js';
import { MetricsConfig, OpenTelemetryConfig, ReadinessConfig } from './observability.js';
import { WorkLimitsConfig } from './work.js';
import { DEFAULT_RESPONSE_VALIDATION, RESPONSE_VALIDATION_MODES, type ResponseValidationMode } from '../http/response-validation.js';
import { DEFAULT_ON_CONSTRUCTOR_POISONING, DEFAULT_ON_PROTO_POISONING, POISONING_ACTIONS, type PoisoningAction } from '../http/json-parse.js';

/** Default bind host. */
export const DEFAULT_HOST = '127.0.0.1';
/** Default bind port. */
export const DEFAULT_PORT = 8000;
/** Default request-body cap: 10 MiB. */
export const DEFAULT_MAX_BODY_SIZE = 10_485_760;
/**
 * Default parts one multipart/form-data body may hold: 1000 (Starlette's max_files / max_fields). 20,000 tiny file
 * parts (under the 1 MiB body cap) at 10 requests/s from one address held a CPU for 21 s and `/health` p99 2.3 s
 * (issue 44); past the bound the body is refused (413) before busboy parses a part.
 */
export const DEFAULT_MULTIPART_MAX_PARTS = 1000;
/** Default file parts one multipart body may hold: 100. */
export const DEFAULT_MULTIPART_MAX_FILES = 100;
/** Default non-file fields one multipart body may hold: 1000. */
export const DEFAULT_MULTIPART_MAX_FIELDS = 1000;
/** Default bytes of one multipart non-file field's value: 1 MiB (busboy's own default, which truncated silently). */
export const DEFAULT_MULTIPART_MAX_FIELD_SIZE = 1_048_576;
/**
 * Default longest request target (path and query), characters: 8192. RFC 9112 §3 asks for request lines
 * of at least 8000 octets; a longer target is a 414 problem (RFC 9110 §15.5.15) before routing. Below
 * node's header-section limit (16 KiB, start line included), which answers 431 first past it.
 */
export const DEFAULT_MAX_URI_LENGTH = 8192;
/** Default graceful-shutdown timeout, seconds. */
export const DEFAULT_SHUTDOWN_TIMEOUT = 30;
/**
 * Default send (write) timeout, seconds: 30. An HTTP/1.1 answer whose client reads none of it for this
 * long is cut (the socket destroyed): 50 clients that stopped reading a 4 MB answer pinned ~265 MB (issue 26).
 */
export const DEFAULT_SEND_TIMEOUT = 30;
/**
 * Default sustained WebSocket message rate per socket (messages per second; token refill rate): 100.
 * One socket sending 200k small valid messages held a CPU 4–6 s and `/health` up to 5.6 s (issue 26);
 * the same figure as the HTTP rate limit's DEFAULT_RATE_PER_SECOND.
 */
export const DEFAULT_WS_MESSAGES_PER_SECOND = 100;
/** Default WebSocket message burst per socket (bucket size): 200, as DEFAULT_RATE_BURST. */
export const DEFAULT_WS_MESSAGE_BURST = 200;
/**
 * Default connections one client (one address, lib/server/client-budget.ts) may hold open at once, across HTTP/1.1,
 * WebSockets and h2c sessions: 100, as DEFAULT_MAX_H2_SESSIONS_PER_CLIENT. 400 sockets from one address took
 * every file descriptor under `ulimit -n 256` (issue 35). Clients behind one NAT share it: raise it, or set
 * trust_proxy to the proxy's addresses (its own connections are then not counted; under `true` or a hop count every peer is).
 */
export const DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 100;
/**
 * Default connections open at once on one server (every protocol): 'auto', 80 % of the process's soft file-descriptor
 * limit (Linux; elsewhere none). At the cap an address holding fewer connections than the heaviest one is still
 * admitted, and the heaviest gives up its oldest idle connection (lib/server/connection-cap.ts): 3 addresses × 90
 * idle WebSockets took every descriptor under `ulimit -n 256` from a fourth (issue 44).
 */
export const DEFAULT_MAX_CONNECTIONS = 'auto' as const;
/**
 * Default mean event-loop delay (ms, over 500 ms windows) past which every new HTTP request but the health, readiness
 * and metrics paths is answered 503 `overloaded` before routing (lib/server/shedding.ts): 200. Twice work_limits'
 * threshold for expensive work, so expensive work is shed first; a loop this late already makes every request wait.
 */
export const DEFAULT_SHED_EVENT_LOOP_DELAY_MS = 200;
/** Default event-loop utilisation past which cheap requests are shed: 0, not checked (busy is not late). */
export const DEFAULT_SHED_EVENT_LOOP_UTILIZATION = 0;
/**
 * Default event-loop delay (ms: how late a timer due every 100 ms fires) past which a loop turn answers clients above
 * their fair share for at most `fair_read_turn_ms` and holds the rest, their sockets unread, for later turns
 * (lib/server/fair-reads.ts): 0, off. 20 is the value measured (issue 44's botnet replay, paired with it off): at
 * load 5–9 `/health` p99 fell in every pair (median 217 → 164 ms), but at load 3–4 it engaged on a scheduling blip
 * and some runs were worse than without it (p99 18 → 216 ms, 816 polite requests held past the shedding threshold
 * answered 503). Until that is understood it is a setting to turn on, not a default.
 */
export const DEFAULT_FAIR_READ_EVENT_LOOP_DELAY_MS = 0;
/**
 * Default CPU time a loop turn spends answering clients above their fair share while fair reading applies, ms: 10 (in
 * the poll phase, and again answering held ones in the check phase). A server whose turns are shorter holds nothing;
 * CPU, not wall-clock, time: a process preempted mid-turn on a shared machine is not "over".
 */
export const DEFAULT_FAIR_READ_TURN_MS = 10;
/**
 * Default streams ending in RST_STREAM one HTTP/2 connection may have per second (token refill): 33, nghttp2's own
 * rate. HTTP/2 rapid reset (CVE-2023-44487) from 100 connections stalled `/health` 11.7 s (issue 44); past the rate
 * or burst the connection gets GOAWAY ENHANCE_YOUR_CALM and is closed (lib/grpc/h2-abuse.ts).
 */
export const DEFAULT_H2_RESETS_PER_SECOND = 33;
/** Default reset burst of one HTTP/2 connection (bucket size): 200, Netty's budget (200 per 30 s); nghttp2 allows 1000. */
export const DEFAULT_H2_RESET_BURST = 200;
/** Default resets per second across one client's HTTP/2 connections: 100 (three connections' worth). */
export const DEFAULT_H2_CLIENT_RESETS_PER_SECOND = 100;
/** Default reset burst across one client's HTTP/2 connections: 1000 (while it is spent, its new connections are refused). */
export const DEFAULT_H2_CLIENT_RESET_BURST = 1_000;
/**
 * Default streams one HTTP/2 connection may open per second: null, no limit. A stream the client resets after the
 * server answered is no reset (the answer was sent): under load rapid reset becomes a request flood, which this
 * bounds when set (e.g. 500 on a public h2c port). Off by default: one gRPC channel legitimately carries thousands of
 * calls a second (test/hostile/grpc-fairness.test.ts), and the reset budgets above already stop rapid reset itself.
 */
export const DEFAULT_H2_STREAMS_PER_SECOND = null;
/** Default stream burst of one HTTP/2 connection: 1000. */
export const DEFAULT_H2_STREAM_BURST = 1_000;
/** Default streams per second across one client's HTTP/2 connections: null, no limit (as DEFAULT_H2_STREAMS_PER_SECOND). */
export const DEFAULT_H2_CLIENT_STREAMS_PER_SECOND = null;
/** Default stream burst across one client's HTTP/2 connections: 2000. */
export const DEFAULT_H2_CLIENT_STREAM_BURST = 2_000;
/**
 * Default SETTINGS_MAX_CONCURRENT_STREAMS of a new HTTP/2 connection, and the streams it may hand to the App, until
 * it has answered the server's first PING (one round trip): 10; then `grpc.max_concurrent_streams`. A client's
 * first write can carry its HEADERS and its RST_STREAMs come in a later one (node's own client does so): rapid
 * reset from 100 new connections had ~100 streams each answered by the App before a reset counted.
 */
export const DEFAULT_H2_UNPROVEN_STREAMS = 10;
/**
 * Default messages per second one client may send across all its WebSockets and GraphQL subscriptions: 1000.
 * 400 sockets each under the per-socket rate sent 35,700 msg/s and `/health` waited 1.0–2.5 s (issue 35).
 * Past it the client's sockets are not read for a while (TCP backpressure), nothing is dropped or closed.
 */
export const DEFAULT_WS_CLIENT_MESSAGES_PER_SECOND = 1_000;
/** Default messages one client may send at once across its WebSockets (bucket size): 2000. */
export const DEFAULT_WS_CLIENT_MESSAGE_BURST = 2_000;
/** What a socket over its message rate gets: close 1008, an error frame per dropped message, or a silent drop. */
export const WS_RATE_ACTIONS = ['close', 'error', 'drop'] as const;
export type WsRateAction = (typeof WS_RATE_ACTIONS)[number];
/** Default action over the message rate: 'close' (1008 policy violation, RFC 6455 §7.4.1); the burst is the grace. */
export const DEFAULT_WS_ON_RATE_EXCEEDED: WsRateAction = 'close';
/**
 * Default bound of one socket's send buffer (ws `bufferedAmount`), bytes: 1 MiB, the default largest
 * message, so one message of any accepted size can always be queued on an idle socket.
 */
export const DEFAULT_WS_MAX_BUFFERED_BYTES = 1_048_576;
/** What a message that would overflow a socket's send buffer does: close 1013, or drop that message. */
export const WS_SEND_BUFFER_ACTIONS = ['close', 'drop'] as const;
export type WsSendBufferAction = (typeof WS_SEND_BUFFER_ACTIONS)[number];
/** Default action on a full send buffer: 'close' (1013 try again later, RFC 6455 §7.4.1). */
export const DEFAULT_WS_ON_SEND_BUFFER_FULL: WsSendBufferAction = 'close';
/**
 * Default seconds a WebSocket may stay open without a frame from its client (message, ping or pong): 120, as
 * DEFAULT_H2_IDLE_TIMEOUT; then close 1001 (going away). 3 addresses × 90 idle WebSockets held every file descriptor
 * of a server at `ulimit -n 256` for as long as they liked (issue 44). Longer than the idle timeouts of the proxies
 * usually in front (AWS ALB 60 s, nginx 60 s), so clients that live behind one already send keepalives.
 */
export const DEFAULT_WS_IDLE_TIMEOUT = 120;
/** Default compression threshold, bytes. */
export const DEFAULT_COMPRESSION_MIN_SIZE = 1024;
/** Default compression quality (0-9 gzip, 0-11 brotli). */
export const DEFAULT_COMPRESSION_QUALITY = 6;
/** Default sustained rate, requests per second. */
export const DEFAULT_RATE_PER_SECOND = 100;
/** Default burst allowance. */
export const DEFAULT_RATE_BURST = 200;
/** Default JWT algorithm. */
export const DEFAULT_JWT_ALGORITHM = 'HS256';
/** Default API-key header. */
export const DEFAULT_API_KEY_HEADER = 'X-API-Key';

/** Algorithms keel verifies. `none` is deliberately absent (RFC 8725 §3.1). */
export const JWT_ALGORITHMS = [
  'HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA',
] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

/** `<JWT_SECRET>` / `<API_KEY>` are the spec's placeholders: shipping one is a configuration error. */
const PLACEHOLDER = /^<[A-Z0-9_]+>$/;
export const secretString = (what: string) => t.string({ minLength: 1, hint: `a non-empty ${what} (not a <PLACEHOLDER>)` });
export function rejectPlaceholder(record: string, path: string, key: string, value: string | undefined): void {
  if (value !== undefined && PLACEHOLDER.test(value)) {
    fail(record, path, key, value, `a real ${key}`, `${value} is the documentation placeholder; load the real value from the environment.`);
  }
}

export interface CompressionConfig {
  /** `false` turns compression off (for a route: overrides the server's). The reference's records carry it too. */
  enabled: boolean;
  gzip: boolean;
  brotli: boolean;
  min_size: number;
  quality: number;
}
export const CompressionConfig = defineRecord<CompressionConfig>()('CompressionConfig', {
  gzip: { type: t.boolean(), default: true, doc: 'Enable gzip' },
  brotli: { type: t.boolean(), default: true, doc: 'Enable brotli' },
  min_size: { type: t.integer(0), default: DEFAULT_COMPRESSION_MIN_SIZE, doc: 'Minimum response size to compress, bytes' },
  quality: { type: t.integer(0, 11), default: DEFAULT_COMPRESSION_QUALITY, doc: '0-11 for brotli, 0-9 for gzip (gzip uses min(quality, 9))' },
  enabled: { type: t.boolean(), default: true, doc: 'false: no compression (a route: not even the server\'s)' },
});

export interface RateLimitConfig {
  /** `false` turns the limit off (for a route: overrides the server's). The reference's records carry it too. */
  enabled: boolean;
  per_second: number;
  burst: number;
  ip_based: boolean;
}
/** Slowest refill keel accepts: one request per day (below that, a bucket is a permanent ban). */
export const MIN_RATE_PER_SECOND = 1 / 86_400;
/**
 * `per_second` may be fractional, so rates below one per second are expressible: "N per window W
 * seconds" is `burst: N, per_second: N / W` (3 per 15 minutes: `burst: 3, per_second: 3 / 900`).
 */
export const RateLimitConfig = defineRecord<RateLimitConfig>()(
  'RateLimitConfig',
  {
    per_second: { type: t.number(0), default: DEFAULT_RATE_PER_SECOND, doc: 'Sustained requests per second (token refill rate); fractional for slower rates, e.g. 3/900 for 3 per 15 minutes' },
    burst: { type: t.integer(1), default: DEFAULT_RATE_BURST, doc: 'Bucket size: requests allowed at once' },
    ip_based: { type: t.boolean(), default: true, doc: 'Limit per client IP (false: one global limit)' },
    enabled: { type: t.boolean(), default: true, doc: 'false: no rate limit (a route: not even the server\'s)' },
  },
  {
    check: (v, path) => {
      if (!(v.per_second >= MIN_RATE_PER_SECOND)) {
        fail('RateLimitConfig', path, 'per_second', v.per_second, `a number >= ${MIN_RATE_PER_SECOND} (one per day)`, 'For N requests per W seconds write burst: N, per_second: N / W.');
      }
    },
  },
);

export interface JwtConfig {
  secret?: string;
  /** keel extension: PEM/JWK public key for RS*, PS*, ES*, EdDSA. */
  public_key?: string;
  algorithm: JwtAlgorithm;
  audience: readonly string[] | null;
  issuer: string | null;
  leeway: number;
  /** JSON Schema the verified claims must match (a mismatch is a 401 like a bad token); types `data.auth`. */
  claims: Readonly<Record<string, unknown>> | null;
}
export const jwtFields = {
  algorithm: { type: t.string({ enum: JWT_ALGORITHMS }), default: DEFAULT_JWT_ALGORITHM, doc: 'Required algorithm' },
  audience: { type: t.list(t.string()), nullable: true, doc: 'Accepted audiences (any one must match)' },
  issuer: { type: t.string(), nullable: true, doc: 'Required issuer' },
  leeway: { type: t.integer(0), default: 0, doc: 'Clock leeway for exp/nbf, seconds' },
  claims: { type: t.json(), nullable: true, doc: 'JSON Schema the verified claims must match (401 otherwise); types data.auth' },
};
/** HS* need a shared secret; every other algorithm a public key (no algorithm confusion, RFC 8725 §3.1). */
export function checkJwtKeys(record: string, v: { secret?: string | null; public_key?: string | null; algorithm: string }, path: string): void {
  rejectPlaceholder(record, path, 'secret', v.secret ?? undefined);
  const symmetric = v.algorithm.startsWith('HS');
  if (symmetric && !v.secret) fail(record, path, 'secret', v.secret, `a secret for ${v.algorithm}`, 'HS* algorithms verify with "secret".');
  if (!symmetric && !v.public_key) fail(record, path, 'public_key', v.public_key, `a public key for ${v.algorithm}`, 'RS*/PS*/ES*/EdDSA verify with "public_key".');
}
export const JwtConfig = defineRecord<JwtConfig>()(
  'JwtConfig',
  {
    secret: { type: secretString('secret'), doc: 'Verification secret for HS* (placeholder <JWT_SECRET>)' },
    public_key: { type: secretString('public key'), doc: 'keel extension: PEM public key for asymmetric algorithms' },
    ...jwtFields,
  },
  { check: (v, path) => checkJwtKeys('JwtConfig', v, path) },
);

export interface ApiKeyConfig {
  keys: readonly string[];
  header_name: string;
}
export const ApiKeyConfig = defineRecord<ApiKeyConfig>()(
  'ApiKeyConfig',
  {
    keys: { type: t.list(secretString('key'), 1), required: true, doc: 'Valid API keys (placeholder <API_KEY>)' },
    header_name: { type: t.string({ minLength: 1 }), default: DEFAULT_API_KEY_HEADER, doc: 'Header carrying the key' },
  },
  { check: (v, path) => v.keys.forEach((k, i) => rejectPlaceholder('ApiKeyConfig', path, `keys[${i}]`, k)) },
);

export interface StaticFilesConfig {
  directory: string;
  route_prefix: string;
  index_file: boolean;
  cache_control: string | null;
}
export const StaticFilesConfig = defineRecord<StaticFilesConfig>()('StaticFilesConfig', {
  directory: { type: t.string({ minLength: 1 }), required: true, doc: 'Directory to serve' },
  route_prefix: { type: t.string({ pattern: /^\//, hint: 'a path starting with "/"' }), required: true, doc: 'URL path prefix' },
  index_file: { type: t.boolean(), default: true, doc: 'Serve index.html for directory requests' },
  cache_control: { type: t.string(), nullable: true, doc: 'Cache-Control header value sent' },
});

/**
 * Express's `trust proxy` setting as data: `false` (the socket's peer is the client), `true` (the
 * left-most X-Forwarded-For address), a number of proxy hops to trust, or the proxies' addresses /
 * subnets / names (`loopback`, `linklocal`, `uniquelocal`) as a comma-separated string or a list.
 */
export type TrustProxySetting = boolean | number | string | readonly string[];
/** No proxy is trusted: the client address is the socket's peer. false. */
export const DEFAULT_TRUST_PROXY: TrustProxySetting = false;

const TRUST_NAMES = ['loopback', 'linklocal', 'uniquelocal'];
/** Rejects a trust_proxy value Express would not understand (proxy-addr would throw at request time). */
export function checkTrustProxy(record: string, path: string, key: string, value: unknown): void {
  const expected = "false, true, a hop count (integer >= 0), or proxy addresses / subnets / 'loopback' | 'linklocal' | 'uniquelocal' as a string or a list";
  if (typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0) fail(record, path, key, value, expected);
    return;
  }
  const list = typeof value === 'string' ? value.split(',').map((s) => s.trim()) : Array.isArray(value) ? value : null;
  if (list === null) fail(record, path, key, value, expected);
  list.forEach((entry, i) => {
    if (typeof entry !== 'string' || entry === '') fail(record, path, `${key}[${i}]`, entry, 'an address, a subnet or a name');
    if (TRUST_NAMES.includes(entry)) return;
    const [ip, bits, ...rest] = entry.split('/');
    const okIp = isIP(ip!) !== 0;
    const okBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (isIP(ip!) === 4 ? 32 : 128)) || isIP(bits) === 4;
    if (!okIp || !okBits || rest.length > 0) fail(record, path, Array.isArray(value) ? `${key}[${i}]` : key, entry, expected);
  });
}

export interface ServerConfig {
  host: string;
  port: number;
  workers: number;
  enable_request_id: boolean;
  max_body_size: number | null;
  multipart_max_parts: number | null;
  multipart_max_files: number | null;
  multipart_max_fields: number | null;
  multipart_max_field_size: number | null;
  max_uri_length: number | null;
  on_proto_poisoning: PoisoningAction;
  on_constructor_poisoning: PoisoningAction;
  response_validation: ResponseValidationMode;
  request_timeout: number | null;
  compression: Readonly<CompressionConfig> | null;
  rate_limit: Readonly<RateLimitConfig> | null;
  jwt_auth: Readonly<JwtConfig> | null;
  api_key_auth: Readonly<ApiKeyConfig> | null;
  static_files: readonly Readonly<StaticFilesConfig>[];
  graceful_shutdown: boolean;
  shutdown_timeout: number;
  send_timeout: number;
  max_connections_per_client: number | null;
  max_connections: number | 'auto' | null;
  shed_event_loop_delay_ms: number;
  shed_event_loop_utilization: number;
  fair_read_event_loop_delay_ms: number;
  fair_read_turn_ms: number;
  h2_resets_per_second: number | null;
  h2_reset_burst: number;
  h2_client_resets_per_second: number | null;
  h2_client_reset_burst: number;
  h2_streams_per_second: number | null;
  h2_stream_burst: number;
  h2_client_streams_per_second: number | null;
  h2_client_stream_burst: number;
  h2_unproven_streams: number | null;
  ws_messages_per_second: number | null;
  ws_message_burst: number;
  ws_client_messages_per_second: number | null;
  ws_client_message_burst: number;
  ws_on_rate_exceeded: WsRateAction;
  ws_max_buffered_bytes: number | null;
  ws_on_send_buffer_full: WsSendBufferAction;
  ws_idle_timeout: number | null;
  asyncapi: Readonly<P.AsyncApiConfig> | null;
  openapi: Readonly<P.OpenApiConfig> | null;
  jsonrpc: Readonly<P.JsonRpcConfig> | null;
  grpc: Readonly<P.GrpcConfig> | null;
  background_tasks: Readonly<P.BackgroundTaskConfig>;
  enable_http_trace: boolean;
  trust_proxy: TrustProxySetting;
  /** CORS for every route; a route's own `cors` record replaces it. */
  cors: Readonly<CorsConfigData> | null;
  /** Readiness endpoint (docs/operations.md); null: none. */
  readiness: Readonly<ReadinessConfig> | null;
  /** Prometheus endpoint and request metrics (prom-client); null: none. */
  metrics: Readonly<MetricsConfig> | null;
  /** One OpenTelemetry server span per request (@opentelemetry/api); null: none. */
  opentelemetry: Readonly<OpenTelemetryConfig> | null;
  /** Client CPU budgets, the queue of expensive work and overload shedding (lib/server/cost.ts); null: none. */
  work_limits: Readonly<WorkLimitsConfig> | null;
}

export const ServerConfig = defineRecord<ServerConfig>()('ServerConfig', {
  host: { type: t.string({ minLength: 1 }), default: DEFAULT_HOST, doc: 'Bind host' },
  port: { type: t.integer(0, 65535), default: DEFAULT_PORT, doc: 'Bind port (0 = any free port)' },
  workers: { type: t.integer(1, 1024), default: 1, doc: 'Processes (node:cluster) when > 1' },
  enable_request_id: { type: t.boolean(), default: false, doc: 'Generate and propagate X-Request-ID' },
  max_body_size: { type: t.integer(0), nullable: true, default: DEFAULT_MAX_BODY_SIZE, doc: 'Maximum request body, bytes; null = unlimited' },
  multipart_max_parts: { type: t.integer(1), nullable: true, default: DEFAULT_MULTIPART_MAX_PARTS, doc: 'Parts (files and fields) one multipart/form-data body may hold; more: 413 problem naming the setting, before any part is parsed; null = no limit' },
  multipart_max_files: { type: t.integer(0), nullable: true, default: DEFAULT_MULTIPART_MAX_FILES, doc: 'File parts one multipart body may hold; more: 413 problem; null = no limit' },
  multipart_max_fields: { type: t.integer(0), nullable: true, default: DEFAULT_MULTIPART_MAX_FIELDS, doc: 'Non-file fields one multipart body may hold; more: 413 problem; null = no limit' },
  multipart_max_field_size: { type: t.integer(1), nullable: true, default: DEFAULT_MULTIPART_MAX_FIELD_SIZE, doc: 'Bytes of one multipart non-file field value; longer: 413 problem (never truncated); null = no limit' },
  max_uri_length: { type: t.integer(1), nullable: true, default: DEFAULT_MAX_URI_LENGTH, doc: 'Longest request target (path and query), characters; a longer one is a 414 problem before routing; null = only node\'s header-section limit (431)' },
  on_proto_poisoning: { type: t.string({ enum: POISONING_ACTIONS }), default: DEFAULT_ON_PROTO_POISONING, doc: 'JSON bodies (routes, JSON-RPC, GraphQL) with a "__proto__" key: error (400), remove or ignore' },
  on_constructor_poisoning: { type: t.string({ enum: POISONING_ACTIONS }), default: DEFAULT_ON_CONSTRUCTOR_POISONING, doc: 'JSON bodies with a "constructor": {"prototype": …} key: error (400), remove or ignore' },
  response_validation: { type: t.string({ enum: RESPONSE_VALIDATION_MODES }), default: DEFAULT_RESPONSE_VALIDATION, doc: 'Routes\' response schemas: strict (checked and serialised from the schema; a violation is a 500 problem), strip (serialised only) or off; a route may set its own' },
  request_timeout: { type: t.integer(1), nullable: true, doc: 'Request timeout, seconds; null = none' },
  compression: { type: t.record(CompressionConfig), nullable: true },
  rate_limit: { type: t.record(RateLimitConfig), nullable: true },
  jwt_auth: { type: t.record(JwtConfig), nullable: true },
  api_key_auth: { type: t.record(ApiKeyConfig), nullable: true },
  static_files: { type: t.list(t.record(StaticFilesConfig)), default: () => [] },
  graceful_shutdown: { type: t.boolean(), default: true, doc: 'Graceful shutdown on SIGTERM/SIGINT' },
  shutdown_timeout: { type: t.integer(0), default: DEFAULT_SHUTDOWN_TIMEOUT, doc: 'Graceful shutdown timeout, seconds' },
  send_timeout: { type: t.integer(0), default: DEFAULT_SEND_TIMEOUT, doc: 'HTTP/1.1 answers: a client that reads none of the pending answer for this long is disconnected, seconds; 0 = none' },
  max_connections_per_client: { type: t.integer(1), nullable: true, default: DEFAULT_MAX_CONNECTIONS_PER_CLIENT, doc: 'Connections one client address may hold open at once (HTTP/1.1, WebSocket, h2c); more get 503 / GOAWAY ENHANCE_YOUR_CALM; the own connections of a proxy named in trust_proxy by address are not counted (under true or a hop count every peer is), its WebSockets count per forwarded client (close 1013); null = no limit' },
  max_connections: { type: t.json(), nullable: true, default: DEFAULT_MAX_CONNECTIONS, doc: "Connections open at once on the server (HTTP/1.1, WebSocket, h2c): 'auto' = 80 % of the soft file-descriptor limit (Linux), a number, or null = none; at the cap an address with fewer connections than the heaviest is admitted and the heaviest loses its oldest idle one, a connection from the heaviest is closed" },
  shed_event_loop_delay_ms: { type: t.number(0), default: DEFAULT_SHED_EVENT_LOOP_DELAY_MS, doc: 'Every new HTTP request (cheap ones too; not the health, readiness and metrics paths) is answered 503 overloaded with Retry-After while the mean event-loop delay of the last 500 ms passes this, ms; 0 = not checked' },
  shed_event_loop_utilization: { type: t.number(0, 1), default: DEFAULT_SHED_EVENT_LOOP_UTILIZATION, doc: 'The same shedding while event-loop utilisation over the last 500 ms passes this (0-1); 0 = not checked' },
  fair_read_event_loop_delay_ms: { type: t.number(0), default: DEFAULT_FAIR_READ_EVENT_LOOP_DELAY_MS, doc: 'HTTP/1.1: while a timer due every 100 ms fires later than this (two or more connections open), a loop turn answers requests of clients above their fair share for at most fair_read_turn_ms; their other requests wait unread in their sockets (TCP backpressure) and are answered on later turns, one socket per client in turn; clients at or under their fair share are never held; nothing is refused but a request held longer than shed_event_loop_delay_ms (503 overloaded), ms; 0 = off' },
  fair_read_turn_ms: { type: t.integer(1), default: DEFAULT_FAIR_READ_TURN_MS, doc: 'CPU time a loop turn spends answering clients above their fair share while fair reading applies (fair_read_event_loop_delay_ms), ms' },
  h2_resets_per_second: { type: t.number(0), nullable: true, default: DEFAULT_H2_RESETS_PER_SECOND, doc: 'HTTP/2 (h2c, the gRPC port): streams ending in RST_STREAM one connection may have per second (rapid reset, CVE-2023-44487); past it and its burst GOAWAY ENHANCE_YOUR_CALM and close; null = no limit' },
  h2_reset_burst: { type: t.integer(1), default: DEFAULT_H2_RESET_BURST, doc: 'HTTP/2: resets one connection may have at once (bucket size)' },
  h2_client_resets_per_second: { type: t.number(0), nullable: true, default: DEFAULT_H2_CLIENT_RESETS_PER_SECOND, doc: 'HTTP/2: resets per second across the connections of one client address; past it the connection that breaks it is closed and new ones refused (GOAWAY ENHANCE_YOUR_CALM) until the bucket refills; null = no limit' },
  h2_client_reset_burst: { type: t.integer(1), default: DEFAULT_H2_CLIENT_RESET_BURST, doc: 'HTTP/2: resets one client address may have at once across its connections (bucket size)' },
  h2_streams_per_second: { type: t.number(0), nullable: true, default: DEFAULT_H2_STREAMS_PER_SECOND, doc: 'HTTP/2: streams one connection may open per second; past it and its burst GOAWAY ENHANCE_YOUR_CALM and close; null = no limit' },
  h2_stream_burst: { type: t.integer(1), default: DEFAULT_H2_STREAM_BURST, doc: 'HTTP/2: streams one connection may open at once (bucket size)' },
  h2_client_streams_per_second: { type: t.number(0), nullable: true, default: DEFAULT_H2_CLIENT_STREAMS_PER_SECOND, doc: 'HTTP/2: streams per second across the connections of one client address (as h2_client_resets_per_second); null = no limit' },
  h2_client_stream_burst: { type: t.integer(1), default: DEFAULT_H2_CLIENT_STREAM_BURST, doc: 'HTTP/2: streams one client address may open at once across its connections (bucket size)' },
  h2_unproven_streams: { type: t.integer(1), nullable: true, default: DEFAULT_H2_UNPROVEN_STREAMS, doc: 'HTTP/2: a new connection\'s SETTINGS_MAX_CONCURRENT_STREAMS, and the streams it may hand to the App, until it has answered the server\'s first PING (one round trip); then grpc.max_concurrent_streams; streams reset meanwhile reach no handler; null = no wait' },
  ws_client_messages_per_second: { type: t.number(0), nullable: true, default: DEFAULT_WS_CLIENT_MESSAGES_PER_SECOND, doc: 'WebSocket and GraphQL-over-WebSocket: messages per second one client may send across all its sockets; past it its sockets are not read for a while (backpressure); null = no limit' },
  ws_client_message_burst: { type: t.integer(1), default: DEFAULT_WS_CLIENT_MESSAGE_BURST, doc: 'WebSocket: messages one client may send at once across its sockets (bucket size)' },
  ws_messages_per_second: { type: t.number(0), nullable: true, default: DEFAULT_WS_MESSAGES_PER_SECOND, doc: 'WebSocket and GraphQL-over-WebSocket: messages per second one socket may send (token refill); null = no limit' },
  ws_message_burst: { type: t.integer(1), default: DEFAULT_WS_MESSAGE_BURST, doc: 'WebSocket: messages one socket may send at once (bucket size)' },
  ws_on_rate_exceeded: { type: t.string({ enum: WS_RATE_ACTIONS }), default: DEFAULT_WS_ON_RATE_EXCEEDED, doc: 'WebSocket: a message over the rate: close (1008), error (dropped, an error frame sent) or drop (dropped silently)' },
  ws_max_buffered_bytes: { type: t.integer(1), nullable: true, default: DEFAULT_WS_MAX_BUFFERED_BYTES, doc: 'WebSocket: bytes queued for one socket that is not reading (bufferedAmount) before ws_on_send_buffer_full applies; null = no bound' },
  ws_on_send_buffer_full: { type: t.string({ enum: WS_SEND_BUFFER_ACTIONS }), default: DEFAULT_WS_ON_SEND_BUFFER_FULL, doc: 'WebSocket: a message that would overflow a socket\'s send buffer: close (1013) or drop (that message is not sent)' },
  ws_idle_timeout: { type: t.integer(1, 2_147_483), nullable: true, default: DEFAULT_WS_IDLE_TIMEOUT, doc: 'WebSocket: seconds a socket may stay open without a frame from its client (message, ping or pong); then close 1001; null = no limit' },
  asyncapi: { type: t.record(AsyncApiConfig), nullable: true },
  openapi: { type: t.record(OpenApiConfig), nullable: true },
  jsonrpc: { type: t.record(JsonRpcConfig), nullable: true },
  grpc: { type: t.record(GrpcConfig), nullable: true },
  background_tasks: { type: t.record(BackgroundTaskConfig), default: () => BackgroundTaskConfig.defaults() },
  enable_http_trace: { type: t.boolean(), default: false, doc: 'Per-request HTTP tracing' },
  trust_proxy: { type: t.json(), default: DEFAULT_TRUST_PROXY, doc: "Which proxies' X-Forwarded-For to believe for the client address, as Express's 'trust proxy': false, true, a hop count, or addresses / subnets / 'loopback' | 'linklocal' | 'uniquelocal' (string, comma-separated, or a list)" },
  cors: { type: t.record(CorsConfig.record), nullable: true, doc: "CORS for every route (a CorsConfig); a route's own cors record replaces it" },
  readiness: { type: t.record(ReadinessConfig), nullable: true, doc: 'Readiness endpoint (GET /ready): 200 when the dependencies the App uses are up, 503 problem+json listing those down' },
  metrics: { type: t.record(MetricsConfig), nullable: true, doc: 'Prometheus endpoint (GET /metrics) and request metrics; needs prom-client' },
  opentelemetry: { type: t.record(OpenTelemetryConfig), nullable: true, doc: 'One OpenTelemetry server span per request, exported by the app\'s OTel SDK; needs @opentelemetry/api' },
  work_limits: { type: t.record(WorkLimitsConfig), nullable: true, default: () => WorkLimitsConfig.defaults(), doc: 'Expensive work (AsyncAPI parse / validate, GraphQL operations): per-client CPU budgets, a server-wide queue and shedding on event-loop delay / utilisation; null = none' },
}, {
  check: (v, path) => {
    checkTrustProxy('ServerConfig', path, 'trust_proxy', v.trust_proxy);
    const mc = v.max_connections as unknown;
    if (mc !== null && mc !== 'auto' && !(typeof mc === 'number' && Number.isInteger(mc) && mc >= 1)) {
      fail('ServerConfig', path, 'max_connections', mc, "'auto', an integer >= 1, or null", "'auto' takes 80 % of the process's file-descriptor limit.");
    }
    if (v.ws_client_messages_per_second === 0) fail('ServerConfig', path, 'ws_client_messages_per_second', 0, 'a number > 0, or null for no limit', 'At 0 a client could never send again once its burst is spent.');
    for (const key of ['h2_resets_per_second', 'h2_client_resets_per_second', 'h2_streams_per_second', 'h2_client_streams_per_second'] as const) {
      if (v[key] === 0) fail('ServerConfig', path, key, 0, 'a number > 0, or null for no limit', 'At 0 a connection could never reset or open a stream again once its burst is spent.');
    }
    if (v.ws_messages_per_second === 0) fail('ServerConfig', path, 'ws_messages_per_second', 0, 'a number > 0, or null for no limit', 'At 0 a socket could never send again once its burst is spent.');
  },
});

// ---------------------------------------------------------------- input types (generated from the fields above)
/** What `CompressionConfig.parse` accepts: `{ gzip?, brotli?, min_size? | minSize?, quality? }`. */
export type CompressionConfigInput = InputOf<typeof CompressionConfig>;
export type RateLimitConfigInput = InputOf<typeof RateLimitConfig>;
/**
 * A JwtConfig names its key, or it can verify nothing: `secret` for HS*, `public_key` for RS*, PS*, ES*, EdDSA. The key
 * must be written (a compile error without it); its value may come from the environment (`string | undefined`) and is
 * checked at start-up (ConfigError naming JwtConfig.secret).
 */
export type JwtKeyInput = { secret: string | undefined } | { public_key: string | undefined } | { publicKey: string | undefined };
export type JwtConfigInput = InputOf<typeof JwtConfig> & JwtKeyInput;
export type ApiKeyConfigInput = InputOf<typeof ApiKeyConfig>;
export type StaticFilesConfigInput = InputOf<typeof StaticFilesConfig>;
/** What `createApp(config)` / `new App(config)` accept: every ServerConfig key in snake_case or camelCase. */
export type ServerConfigInput = InputOf<typeof ServerConfig> & { jwt_auth?: JwtConfigInput | null; jwtAuth?: JwtConfigInput | null };
