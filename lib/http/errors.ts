/**
 * Every error keel raises, in one table (after fastify's lib/errors.js).
 *
 * Two families never mix:
 * - configuration / programming errors (ConfigError, AppError, SchemaError): thrown at build or start-up
 *   time, never sent to a client;
 * - request errors (HttpError and the GraphQlError variants): rendered as RFC 9457 problem details.
 */
import { STATUS_CODES } from 'node:http';

export type ErrorClass = 'config' | 'app' | 'schema' | 'request' | 'graphql' | 'snapshot';

interface CodeInfo {
  readonly status: number;
  readonly class: ErrorClass;
  /** Problem `title` for request errors; a short summary otherwise. */
  readonly title: string;
  /** Last path segment of the problem `type` URI (request errors only). */
  readonly slug?: string;
  /** The problem `detail` when the code is answered without one of its own (request errors only). */
  readonly detail?: string;
}

/** Base of every problem `type` URI keel emits; the slug of the error code follows it. */
export const PROBLEM_TYPE_BASE = 'https://keel.dev/errors/';

function code(status: number, cls: ErrorClass, title: string, slug?: string, detail?: string): CodeInfo {
  return Object.freeze({ status, class: cls, title, ...(slug ? { slug } : {}), ...(detail ? { detail } : {}) });
}

/** The one list of error codes: status, class and title. Tested in test/errors.test.ts. */
export const ERROR_CODES = Object.freeze({
  // configuration (start-up)
  KEEL_CONFIG_INVALID: code(500, 'config', 'Invalid configuration'),
  // AppError
  KEEL_APP_ROUTE: code(500, 'app', 'Route registration failed'),
  KEEL_APP_SERVER: code(500, 'app', 'Server or router construction failed'),
  KEEL_APP_DECODE: code(500, 'app', 'Extracting data from the request context failed'),
  KEEL_APP_GRAPHQL: code(500, 'app', 'GraphQL route registration failed'),
  // SchemaError
  KEEL_SCHEMA_BUILDING_FAILED: code(500, 'schema', 'Schema building failed'),
  KEEL_SCHEMA_VALIDATION_ERROR: code(500, 'schema', 'Schema configuration validation failed'),
  KEEL_SCHEMA_COMPLEXITY_LIMIT_EXCEEDED: code(400, 'schema', 'Complexity limit exceeded'),
  KEEL_SCHEMA_DEPTH_LIMIT_EXCEEDED: code(400, 'schema', 'Depth limit exceeded'),
  // SnapshotError
  KEEL_SNAPSHOT_INVALID_HEADER: code(500, 'snapshot', 'Response header is not valid UTF-8'),
  KEEL_SNAPSHOT_DECOMPRESSION: code(500, 'snapshot', 'Response body decompression failed'),
  // request errors (problem details)
  KEEL_BAD_REQUEST: code(400, 'request', 'Bad Request', 'bad-request'),
  KEEL_CONTENT_LENGTH_MISMATCH: code(400, 'request', 'Content-Length header mismatch', 'content-length-mismatch'),
  KEEL_HEADERS_TOO_LARGE: code(431, 'request', 'Request Header Fields Too Large', 'request-header-fields-too-large'),
  KEEL_MALFORMED_JSON: code(400, 'request', 'Malformed JSON', 'malformed-json'),
  KEEL_FORBIDDEN_JSON_KEY: code(400, 'request', 'Forbidden JSON Key', 'forbidden-json-key'),
  KEEL_UNAUTHORIZED: code(401, 'request', 'Unauthorized', 'unauthorized'),
  KEEL_FORBIDDEN: code(403, 'request', 'Forbidden', 'forbidden'),
  KEEL_NOT_FOUND: code(404, 'request', 'Resource Not Found', 'not-found'),
  KEEL_METHOD_NOT_ALLOWED: code(405, 'request', 'Method Not Allowed', 'method-not-allowed'),
  KEEL_NOT_ACCEPTABLE: code(406, 'request', 'Not Acceptable', 'not-acceptable'),
  KEEL_REQUEST_TIMEOUT: code(408, 'request', 'Request Timeout', 'request-timeout'),
  KEEL_PAYLOAD_TOO_LARGE: code(413, 'request', 'Payload Too Large', 'payload-too-large'),
  // A request target longer than ServerConfig.max_uri_length or the route's (RFC 9110 §15.5.15).
  KEEL_URI_TOO_LONG: code(414, 'request', 'URI Too Long', 'uri-too-long'),
  KEEL_UNSUPPORTED_MEDIA_TYPE: code(415, 'request', 'Unsupported Media Type', 'unsupported-media-type'),
  KEEL_UNSUPPORTED_CONTENT_ENCODING: code(415, 'request', 'Unsupported Content Encoding', 'unsupported-content-encoding'),
  KEEL_RANGE_NOT_SATISFIABLE: code(416, 'request', 'Range Not Satisfiable', 'range-not-satisfiable'),
  KEEL_VALIDATION_FAILED: code(422, 'request', 'Request Validation Failed', 'validation-error'),
  // A small document whose processing would cost more than the request's budget (AsyncAPI `$ref` expansion):
  // 422, not 413, because the content itself is within max_body_size (RFC 9110 §15.5.21 vs §15.5.14).
  KEEL_WORK_BUDGET_EXCEEDED: code(422, 'request', 'Work Budget Exceeded', 'work-budget-exceeded'),
  KEEL_RATE_LIMITED: code(429, 'request', 'Too Many Requests', 'rate-limit-exceeded'),
  KEEL_HANDLER_ERROR: code(500, 'request', 'Handler Error', 'handler-error'),
  // The reference's bare 500 says no more than this (spikard-http problem.rs); nothing internal is shown.
  KEEL_INTERNAL: code(500, 'request', 'Internal Server Error', 'internal-server-error', 'Internal server error'),
  KEEL_SERVICE_UNAVAILABLE: code(503, 'request', 'Service Unavailable', 'service-unavailable'),
  // One client holds ServerConfig.max_connections_per_client connections already (lib/server/client-budget.ts).
  KEEL_CLIENT_CONNECTION_LIMIT: code(503, 'request', 'Too Many Connections From This Client', 'client-connection-limit'),
  KEEL_BACKGROUND_QUEUE_FULL: code(503, 'request', 'Background Queue Full', 'background-queue-full'),
  // Expensive work past the client's CPU budget (429) or while the server sheds it (503); lib/server/cost.ts.
  KEEL_CPU_BUDGET_EXCEEDED: code(429, 'request', 'CPU Budget Exceeded', 'cpu-budget-exceeded'),
  KEEL_OVERLOADED: code(503, 'request', 'Server Overloaded', 'overloaded'),
  // GraphQlError (status used when the error is rendered over HTTP; see docs/graphql.md)
  KEEL_GQL_EXECUTION_ERROR: code(200, 'graphql', 'GraphQL execution error', 'graphql-execution-error'),
  KEEL_GQL_SCHEMA_BUILD_ERROR: code(500, 'graphql', 'GraphQL schema build error', 'graphql-schema-build-error'),
  KEEL_GQL_REQUEST_HANDLING_ERROR: code(400, 'graphql', 'GraphQL request handling error', 'graphql-request-handling-error'),
  KEEL_GQL_SERIALIZATION_ERROR: code(500, 'graphql', 'GraphQL serialization error', 'graphql-serialization-error'),
  KEEL_GQL_JSON_ERROR: code(400, 'graphql', 'GraphQL JSON error', 'graphql-json-error'),
  KEEL_GQL_VALIDATION_ERROR: code(400, 'graphql', 'GraphQL validation error', 'graphql-validation-error'),
  KEEL_GQL_PARSE_ERROR: code(400, 'graphql', 'GraphQL parse error', 'graphql-parse-error'),
  KEEL_GQL_AUTHENTICATION_ERROR: code(401, 'graphql', 'GraphQL authentication error', 'graphql-authentication-error'),
  KEEL_GQL_AUTHORIZATION_ERROR: code(403, 'graphql', 'GraphQL authorization error', 'graphql-authorization-error'),
  KEEL_GQL_NOT_FOUND: code(404, 'graphql', 'GraphQL resource not found', 'graphql-not-found'),
  KEEL_GQL_RATE_LIMIT_EXCEEDED: code(429, 'graphql', 'GraphQL rate limit exceeded', 'graphql-rate-limit-exceeded'),
  KEEL_GQL_INVALID_INPUT: code(400, 'graphql', 'GraphQL invalid input', 'graphql-invalid-input'),
  KEEL_GQL_COMPLEXITY_LIMIT_EXCEEDED: code(400, 'graphql', 'GraphQL complexity limit exceeded', 'graphql-complexity-limit-exceeded'),
  KEEL_GQL_DEPTH_LIMIT_EXCEEDED: code(400, 'graphql', 'GraphQL depth limit exceeded', 'graphql-depth-limit-exceeded'),
  KEEL_GQL_INTROSPECTION_DISABLED: code(400, 'graphql', 'GraphQL introspection disabled', 'graphql-introspection-disabled'),
  KEEL_GQL_INTERNAL_ERROR: code(500, 'graphql', 'GraphQL internal error', 'graphql-internal-error'),
});

export type ErrorCode = keyof typeof ERROR_CODES;

/** Where a keel error lists its class and superclass names (a registered symbol, the same in every copy of keel). */
const KEEL_ERROR_CLASSES = Symbol.for('keel.error.classes');

/** `ConfigError` → ['ConfigError', 'KeelError']: the names of a keel error class and of its superclasses. */
function classNames(target: Function): readonly string[] {
  const names: string[] = [];
  for (let c: Function | null = target; c && c !== Error; c = Object.getPrototypeOf(c)) names.push(c.name);
  return Object.freeze(names);
}

/**
 * Base class: a stable `code`, the `status` and `class` from ERROR_CODES. `C` widens the code's type
 * only for HttpError, whose express-jwt-compatible subclass carries express-jwt's codes.
 */
// The members are `declare`d, not class fields: a field is defined on the new error before the
// constructor's own assignment (ES2022 [[DefineOwnProperty]]), which on an Error object V8 does in its
// runtime, ~2,700 instructions per HttpError (issue 48). Assigned in the constructors in the same order,
// the errors carry the same own properties in the same order.
export class KeelError<C extends string = ErrorCode> extends Error {
  declare readonly code: C;
  declare readonly status: number;
  constructor(code: C, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.status = (ERROR_CODES as Record<string, CodeInfo>)[code]?.status ?? 500;
    this.name = new.target.name;
    // The class names live on the class's prototype, listed once per class (not per error): a
    // request error is made per refused request, and `instanceof` reads them through the prototype.
    const proto = new.target.prototype as object;
    if (!Object.hasOwn(proto, KEEL_ERROR_CLASSES)) Object.defineProperty(proto, KEEL_ERROR_CLASSES, { value: classNames(new.target) });
  }
  /**
   * `err instanceof ConfigError` holds for an error of this class or of the same class in another copy of this
   * module: keel/express's CommonJS build (scripts/build.mjs) carries its own copy of lib/http/errors, and an app that
   * imports `ConfigError` from 'keel' must still recognise what `app.listen()` of keel/express throws.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    const names = typeof value === 'object' && value !== null ? (value as Record<symbol, unknown>)[KEEL_ERROR_CLASSES] : undefined;
    return Array.isArray(names) && names.includes(this.name);
  }
  get errorClass(): ErrorClass {
    return (ERROR_CODES as Record<string, CodeInfo>)[this.code]?.class ?? 'request';
  }
}

/** Bad configuration record: names the record, the path, the key and the value. */
export class ConfigError extends KeelError {
  readonly record: string;
  readonly path: string;
  readonly key: string;
  readonly value: unknown;
  constructor(message: string, info: { record: string; path: string; key: string; value?: unknown }) {
    super('KEEL_CONFIG_INVALID', message);
    this.record = info.record;
    this.path = info.path;
    this.key = info.key;
    this.value = info.value;
  }
}

export const APP_ERROR_KINDS = ['Route', 'Server', 'Decode', 'GraphQl'] as const;
export type AppErrorKind = (typeof APP_ERROR_KINDS)[number];
const APP_CODES: Record<AppErrorKind, ErrorCode> = {
  Route: 'KEEL_APP_ROUTE',
  Server: 'KEEL_APP_SERVER',
  Decode: 'KEEL_APP_DECODE',
  GraphQl: 'KEEL_APP_GRAPHQL',
};

/** Build-time failures of the App builder (spec: AppError). */
export class AppError extends KeelError {
  readonly kind: AppErrorKind;
  constructor(kind: AppErrorKind, message: string, options?: { cause?: unknown }) {
    super(APP_CODES[kind], message, options);
    this.kind = kind;
  }
}

export const SCHEMA_ERROR_KINDS = ['BuildingFailed', 'ValidationError', 'ComplexityLimitExceeded', 'DepthLimitExceeded'] as const;
export type SchemaErrorKind = (typeof SCHEMA_ERROR_KINDS)[number];

export class SchemaError extends KeelError {
  readonly kind: SchemaErrorKind;
  constructor(kind: SchemaErrorKind, message: string, options?: { cause?: unknown }) {
    super(`KEEL_SCHEMA_${upperSnake(kind)}` as ErrorCode, message, options);
    this.kind = kind;
  }
}

export const SNAPSHOT_ERROR_KINDS = ['InvalidHeader', 'Decompression'] as const;
export type SnapshotErrorKind = (typeof SNAPSHOT_ERROR_KINDS)[number];

export class SnapshotError extends KeelError {
  readonly kind: SnapshotErrorKind;
  constructor(kind: SnapshotErrorKind, message: string, options?: { cause?: unknown }) {
    super(`KEEL_SNAPSHOT_${upperSnake(kind)}` as ErrorCode, message, options);
    this.kind = kind;
  }
}

export const GRAPHQL_ERROR_KINDS = [
  'ExecutionError', 'SchemaBuildError', 'RequestHandlingError', 'SerializationError', 'JsonError', 'ValidationError',
  'ParseError', 'AuthenticationError', 'AuthorizationError', 'NotFound', 'RateLimitExceeded', 'InvalidInput',
  'ComplexityLimitExceeded', 'DepthLimitExceeded', 'IntrospectionDisabled', 'InternalError',
] as const;
export type GraphQlErrorKind = (typeof GRAPHQL_ERROR_KINDS)[number];

function upperSnake(kind: string): string {
  return kind.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
}

/** Request-time GraphQL failures; `status` is the HTTP status used when rendered. */
export class GraphQlError extends KeelError {
  readonly kind: GraphQlErrorKind;
  /** InvalidInput carries detailed errors. */
  readonly details?: unknown;
  constructor(kind: GraphQlErrorKind, message: string, options?: { cause?: unknown; details?: unknown }) {
    super(`KEEL_GQL_${upperSnake(kind)}` as ErrorCode, message, options);
    this.kind = kind;
    if (options?.details !== undefined) this.details = options.details;
  }
}

/**
 * The codes of express-jwt's `UnauthorizedError` (express-jwt 8, dist/index.js), which keel's JWT
 * rejections carry when they are handed to `next(err)` (see UnauthorizedError).
 */
export const EXPRESS_JWT_ERROR_CODES = ['credentials_required', 'credentials_bad_scheme', 'credentials_bad_format', 'invalid_token', 'revoked_token'] as const;
export type ExpressJwtErrorCode = (typeof EXPRESS_JWT_ERROR_CODES)[number];

/**
 * A request error that reaches the client as problem details. Handlers throw it (or return
 * `handlerError(status, message)`); middleware uses it through `sendProblem`, or hands it to
 * `next(err)` with `onReject: 'next'` (lib/http/reject.ts), so it carries everything the problem needs:
 * `status`, `type`, `title`, `detail`, `extensions` and the `headers` the answer must carry.
 * `statusCode` and `expose` are the http-errors names Express error handlers read.
 */
export class HttpError extends KeelError<ErrorCode | ExpressJwtErrorCode> {
  declare readonly title: string;
  declare readonly type: string;
  declare readonly detail: string | undefined;
  /** RFC 9457 §3.1.5: a URI reference for this occurrence (e.g. the request path), when the thrower gives one. */
  declare readonly instance: string | undefined;
  declare readonly extensions: Readonly<Record<string, unknown>>;
  declare readonly headers: Readonly<Record<string, string>>;
  /**
   * An expected refusal the server chose to make (a full queue, shutdown): a 5xx that is not a server
   * failure, so it is not logged per request as one. Whoever refuses logs it, aggregated.
   */
  declare readonly expected: boolean;
  constructor(
    status: number,
    detail?: string,
    options: { code?: ErrorCode; title?: string; type?: string; instance?: string; extensions?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown; expected?: boolean } = {},
  ) {
    const code = options.code ?? codeForStatus(status);
    // A status keel has no code for (418, 502, ...) gets the reason phrase and `about:blank`: the
    // problem means no more than its status (RFC 9457 §4.2.1), not one of keel's problem types.
    const own = options.code !== undefined || ERROR_CODES[code].status === status;
    // A client error (< 500) is an answer, not a fault: its stack says nothing a log reader needs and
    // capturing it is most of what a refused request would cost (issue 48). `err.stack` is then the
    // "HttpError: message" line alone; a 5xx keeps its frames.
    const limit = Error.stackTraceLimit;
    if (status < 500) Error.stackTraceLimit = 0;
    try {
      // No options object without a cause: Error() then defines no own `cause` (undefined either way), one property less per refused request.
      super(code, detail ?? (own ? ERROR_CODES[code].title : statusTitle(status)), options.cause === undefined ? undefined : { cause: options.cause });
    } finally {
      Error.stackTraceLimit = limit;
    }
    (this as { status: number }).status = status;
    this.title = options.title ?? (ERROR_CODES[code].status === status ? ERROR_CODES[code].title : statusTitle(status));
    this.type = options.type ?? (own ? problemType(code) : 'about:blank');
    this.detail = detail;
    this.instance = options.instance;
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
    this.expected = options.expected ?? false;
  }
  /** http-errors' name for `status` (Express's finalhandler reads either). */
  get statusCode(): number {
    return this.status;
  }
  /** http-errors' convention: the message of a 4xx may be shown to the client, a 5xx's may not. */
  get expose(): boolean {
    return this.status < 500;
  }
}

/**
 * A refused JWT (jwtAuth, or authorization without `req.auth`), shaped like express-jwt's
 * `UnauthorizedError` so that existing Express error handlers keep working: `name` is
 * `'UnauthorizedError'`, `code` is express-jwt's code (`credentials_required`, `invalid_token`, …),
 * `status` 401 and `inner` an Error whose `name` follows jsonwebtoken's (`TokenExpiredError`,
 * `NotBeforeError`, `JsonWebTokenError`). It is still an HttpError (problem members, headers).
 */
export class UnauthorizedError extends HttpError {
  /** What went wrong below the surface, named as jsonwebtoken names its errors (express-jwt's `inner`). */
  readonly inner: Error | { message: string };
  /**
   * `detail` is the message; or, as express-jwt's constructor takes it, an error (or `{ message }`)
   * whose message becomes this one's and which is kept as `inner`:
   * `new UnauthorizedError('invalid_token', { message: 'Invalid token!' })`.
   */
  constructor(jwtCode: ExpressJwtErrorCode, detail: string | Error | { message: string }, options: { title?: string; type?: string; extensions?: Record<string, unknown>; headers?: Record<string, string>; innerName?: string } = {}) {
    const message = typeof detail === 'string' ? detail : String(detail.message);
    super(401, message, { code: 'KEEL_UNAUTHORIZED', title: options.title, type: options.type, extensions: options.extensions, headers: options.headers });
    // express-jwt's code replaces keel's KEEL_UNAUTHORIZED: handlers test `err.code === 'invalid_token'`.
    (this as { code: ErrorCode | ExpressJwtErrorCode }).code = jwtCode;
    if (typeof detail === 'string') {
      const inner = new Error(detail);
      inner.name = options.innerName ?? (jwtCode === 'invalid_token' ? 'JsonWebTokenError' : 'Error');
      this.inner = inner;
    } else this.inner = detail;
  }
}

const problemTypes = new Map<ErrorCode, string>();

/** `https://keel.dev/errors/<slug>` for a request error code; `about:blank` when it has none. */
export function problemType(code: ErrorCode): string {
  // Made once per code: every refused request names its type, and a string built per request is a
  // concatenation the serialiser has to flatten again.
  let type = problemTypes.get(code);
  if (type === undefined) {
    const slug = (ERROR_CODES[code] as CodeInfo).slug;
    type = slug ? PROBLEM_TYPE_BASE + slug : 'about:blank';
    problemTypes.set(code, type);
  }
  return type;
}

const STATUS_CODE: Record<number, ErrorCode> = {
  400: 'KEEL_BAD_REQUEST', 401: 'KEEL_UNAUTHORIZED', 403: 'KEEL_FORBIDDEN', 404: 'KEEL_NOT_FOUND',
  405: 'KEEL_METHOD_NOT_ALLOWED', 406: 'KEEL_NOT_ACCEPTABLE', 408: 'KEEL_REQUEST_TIMEOUT', 413: 'KEEL_PAYLOAD_TOO_LARGE', 414: 'KEEL_URI_TOO_LONG',
  415: 'KEEL_UNSUPPORTED_MEDIA_TYPE', 416: 'KEEL_RANGE_NOT_SATISFIABLE', 422: 'KEEL_VALIDATION_FAILED',
  429: 'KEEL_RATE_LIMITED', 500: 'KEEL_INTERNAL', 503: 'KEEL_SERVICE_UNAVAILABLE',
};

export function codeForStatus(status: number): ErrorCode {
  return STATUS_CODE[status] ?? (status >= 500 ? 'KEEL_HANDLER_ERROR' : 'KEEL_BAD_REQUEST');
}

/** The standard reason phrase (node:http's table) for a status, as the problem title. */
export function statusTitle(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}
