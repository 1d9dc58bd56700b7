/**
 * Every error keel raises: the classes, each code's status, class and title from the one table of codes
 * (./error-codes.ts, after fastify's lib/errors.js; exported from here too).
 *
 * Two families never mix:
 * - configuration / programming errors (ConfigError, AppError, SchemaError): thrown at build or start-up
 *   time, never sent to a client;
 * - request errors (HttpError and the GraphQlError variants): rendered as RFC 9457 problem details.
 */
import { ERROR_CODES, codeForStatus, problemType, statusTitle, type CodeInfo, type ErrorClass, type ErrorCode } from './error-codes.js';

export { ERROR_CODES, PROBLEM_TYPE_BASE, codeForStatus, problemType, statusTitle, type ErrorClass, type ErrorCode } from './error-codes.js';

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
