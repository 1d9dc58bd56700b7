/**
 * API-key authentication: the request must carry one of the configured keys in a header (and, when
 * the keel extension `allow_query` is on, in a query parameter).
 *
 * Keys are compared in constant time over SHA-256 digests, so neither the key bytes nor its length
 * leak through response timing, and every configured key is compared on every request so the
 * position of a matching key does not leak either.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { problemType } from '../../lib/http/errors.js';
import { problem } from '../../lib/http/problem.js';
import { rejecter, takeOnReject, type OnRejectOption } from '../../lib/http/reject.js';
import { ApiKeyAuthConfig, ApiKeyConfig, assertApiKeysPresent, fail } from '../../lib/records/index.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';

export { DEFAULT_API_KEY_HEADER } from '../../lib/records/index.js';
export { DEFAULT_ON_REJECT } from '../../lib/http/reject.js';

/** Default query parameter read when `allow_query` is on. */
export const DEFAULT_API_KEY_QUERY_PARAM = 'api_key';
/** Default for `allow_query`: keys in URLs end up in access logs and browser history (RFC 6750 §5.3 gives the same advice for tokens). */
export const DEFAULT_API_KEY_ALLOW_QUERY = false;
/**
 * Auth scheme of the `WWW-Authenticate` challenge. No API-key scheme is registered with IANA; RFC 9110
 * §11.6.1 still requires a challenge on every 401, so keel sends `ApiKey header="<header_name>"`
 * (plus `query="<param>"` when query keys are allowed), which tells a client where the key goes.
 */
export const API_KEY_AUTH_SCHEME = 'ApiKey';

/**
 * A server ApiKeyConfig (`keys`, `header_name`) or a per-route ApiKeyAuthConfig (plus `enabled`), in
 * snake_case or camelCase, plus keel's query-parameter extension.
 */
export type ApiKeyAuthOptions = (ApiKeyConfigInput | ApiKeyAuthConfigInput) & ApiKeyQueryOptions & OnRejectOption;
import type { ApiKeyConfigInput, ApiKeyAuthConfigInput } from '../../lib/records/index.js';
/** keel's query-parameter extension (not part of the ApiKeyConfig / ApiKeyAuthConfig records). */
export interface ApiKeyQueryOptions {
  /** keel extension: also accept the key in a query parameter. Default `DEFAULT_API_KEY_ALLOW_QUERY` (false). */
  allow_query?: boolean;
  allowQuery?: boolean;
  /** keel extension: the query parameter's name. Default `DEFAULT_API_KEY_QUERY_PARAM` ('api_key'). */
  query_param?: string;
  queryParam?: string;
}

/** Problem title for a request that carries no key (the reference implementation's words). */
export const API_KEY_MISSING_TITLE = 'Missing API key';
/** Problem title for a key that is not one of `keys` (the reference implementation's words). */
export const API_KEY_INVALID_TITLE = 'Invalid API key';

/** RFC 9110 §5.1 field-name / §5.6.2 token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

function extension<T>(options: Record<string, unknown>, record: string, snake: string, camel: string, fallback: T, valid: (v: unknown) => boolean, expected: string): T {
  if (snake in options && camel in options) fail(record, record, snake, options[camel], `only one of "${snake}" and "${camel}"`);
  const value = snake in options ? options[snake] : camel in options ? options[camel] : undefined;
  if (value === undefined) return fallback;
  if (!valid(value)) fail(record, record, snake, value, expected);
  return value as T;
}

/**
 * Require one of `keys` in the `header_name` header (and optionally in the `api_key` query parameter).
 * Sets `req.apiKey = { source: 'header' | 'query', index }` (the index of the matching key in `keys`,
 * never the key itself).
 *
 * A missing key and a wrong key are both 401 problems (type `unauthorized`) titled "Missing API key"
 * (detail "Expected 'X-API-Key' header with valid API key") and "Invalid API key" (detail "The
 * provided API key is not valid"), as the reference implementation words them, with a
 * `WWW-Authenticate: ApiKey header="X-API-Key"` challenge. When the header
 * is present it alone is checked: a bad header key is not rescued by a query parameter.
 *
 * @example
 * import express from 'express';
 * import { apiKeyAuth } from 'keel/middleware/api-key-auth';
 *
 * const app = express();
 * app.use(apiKeyAuth({ keys: [process.env.API_KEY!], header_name: 'X-API-Key' }));
 * app.get('/data', (_req, res) => res.json({ ok: true }));
 *
 * With `onReject: 'next'` the 401 goes to `next(err)` as an HttpError carrying the challenge in `headers`.
 */
export function apiKeyAuth(options: ApiKeyAuthOptions): Middleware {
  const routeLevel = typeof options === 'object' && options !== null && 'enabled' in options;
  const record = routeLevel ? 'ApiKeyAuthConfig' : 'ApiKeyConfig';
  const { onReject, rest } = takeOnReject(options, record);
  const reject = rejecter(onReject);
  const raw: Record<string, unknown> = { ...(rest as Record<string, unknown>) };
  const allowQuery = extension(raw, record, 'allow_query', 'allowQuery', DEFAULT_API_KEY_ALLOW_QUERY, (v) => typeof v === 'boolean', 'true or false');
  const queryParam = extension(raw, record, 'query_param', 'queryParam', DEFAULT_API_KEY_QUERY_PARAM, (v) => typeof v === 'string' && TOKEN.test(v), 'a non-empty parameter name');
  for (const k of ['allow_query', 'allowQuery', 'query_param', 'queryParam']) delete raw[k];

  const config = routeLevel ? ApiKeyAuthConfig.parse(raw, record) : { enabled: true, ...ApiKeyConfig.parse(raw, record) };
  if (!config.enabled) {
    return function apiKeyAuthDisabled(_req: KeelRequest, _res: ServerResponse, next: NextFunction): void {
      next();
    };
  }
  assertApiKeysPresent(config, record);
  if (!TOKEN.test(config.header_name)) fail(record, record, 'header_name', config.header_name, 'an HTTP header name (RFC 9110 §5.1)');
  const digests = config.keys.map(digest);
  digests.forEach((d, i) => {
    const first = digests.findIndex((other) => other.equals(d));
    // The key itself is not shown: configuration errors end up in logs.
    if (first !== i) fail(record, record, `keys[${i}]`, '<redacted>', `a key different from keys[${first}]`, 'Remove the duplicate.');
  });

  const headerName = config.header_name.toLowerCase();
  // The reference's wording; the query parameter is only named when keel reads it (allow_query), so
  // no client is told to put its key in a URL that will not be accepted anyway.
  const where = `'${config.header_name}' header${allowQuery ? ` or '${queryParam}' query parameter` : ''}`;
  const challenge = { 'WWW-Authenticate': `${API_KEY_AUTH_SCHEME} header="${config.header_name}"${allowQuery ? `, query="${queryParam}"` : ''}` };
  const unauthorized = problemType('KEEL_UNAUTHORIZED');
  const missing = Object.freeze(problem(401, `Expected ${where} with valid API key`, { title: API_KEY_MISSING_TITLE, type: unauthorized }));
  const invalid = Object.freeze(problem(401, 'The provided API key is not valid', { title: API_KEY_INVALID_TITLE, type: unauthorized }));
  const ambiguous = Object.freeze(problem(401, `The '${queryParam}' query parameter is given more than once`, { title: API_KEY_INVALID_TITLE, type: unauthorized }));

  /** Index of the matching key or -1; compares against every key whatever the outcome. */
  function match(presented: string): number {
    const d = digest(presented);
    let found = -1;
    for (let i = 0; i < digests.length; i++) {
      if (timingSafeEqual(d, digests[i]!) && found < 0) found = i;
    }
    return found;
  }

  function queryValues(url: string | undefined): string[] {
    const q = url?.indexOf('?') ?? -1;
    return q < 0 ? [] : new URLSearchParams(url!.slice(q + 1)).getAll(queryParam);
  }

  return function apiKeyAuthMiddleware(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    const header = req.headers[headerName];
    let presented = Array.isArray(header) ? header.join(', ') : header;
    let source: 'header' | 'query' = 'header';
    if ((presented === undefined || presented === '') && allowQuery) {
      const values = queryValues(req.url);
      if (values.length > 1) return reject.refuse(req, res, next, ambiguous, challenge);
      presented = values[0];
      source = 'query';
    }
    if (presented === undefined || presented === '') return reject.refuse(req, res, next, missing, challenge);
    const index = match(presented);
    if (index < 0) return reject.refuse(req, res, next, invalid, challenge);
    req.apiKey = { source, index };
    next();
  };
}
