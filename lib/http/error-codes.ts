/**
 * The one table of keel's error codes (after fastify's lib/errors.js): each code's status, class, title and
 * problem type, and the lookups from a status to its code and from a code to its problem type. The error
 * classes built on it are lib/http/errors.ts, which exports this table too (import it from there).
 */
import { STATUS_CODES } from 'node:http';

export type ErrorClass = 'config' | 'app' | 'schema' | 'request' | 'graphql' | 'snapshot';

export interface CodeInfo {
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
