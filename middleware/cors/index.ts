/**
 * CORS (Fetch standard, "CORS protocol" section) from a CorsConfig record.
 *
 * Written directly rather than on the `cors` package: keel must answer a disallowed preflight with a
 * 403 problem (the conformance cases require it; `cors` answers 204 without headers), must not send
 * `*` wildcards together with credentials (the Fetch standard treats them literally then), and
 * supports Private Network Access preflights, none of which `cors` can express.
 */
import type { ServerResponse } from 'node:http';
import { CorsConfig, type CorsConfigData } from '../../lib/records/route.js';
import { fail } from '../../lib/records/define.js';
import { problemFor } from '../../lib/problem.js';
import { rejecter, takeOnReject, type OnRejectOption } from '../../lib/reject.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/request.js';
import { fromCorsPackage, isPackageStyle, type CorsPackageOptions, type TranslatedCors } from './familiar.js';

export { PACKAGE_DEFAULT_METHODS, type CorsOriginFunction, type CorsPackageOptions } from './familiar.js';

import type { CorsConfigInput as CorsRecordInput } from '../../lib/records/route.js';

/** CorsConfig input: the record's keys in snake_case or camelCase (generated from the record), or a parsed CorsConfig. */
export type CorsConfigInput = CorsRecordInput | CorsConfig;

/** keel extensions beyond the CorsConfig record (not part of the spec's wire form). */
export interface CorsExtensions {
  /**
   * Answer a *non-preflight* request from a disallowed origin with a 403 problem instead of passing
   * it on without CORS headers. Browsers already block the response; rejecting also stops the
   * side effects of "simple" cross-origin requests (form POSTs). Default {@link DEFAULT_REJECT_DISALLOWED_ORIGINS} (false).
   */
  rejectDisallowedOrigins?: boolean;
  /**
   * Grant Private Network Access preflights (`Access-Control-Request-Private-Network: true`) from
   * allowed origins with `Access-Control-Allow-Private-Network: true`. Off by default
   * ({@link DEFAULT_ALLOW_PRIVATE_NETWORK}): with `allowed_origins: ["*"]` it would let any public site
   * reach a server on a private network, which is exactly what PNA guards against.
   */
  allowPrivateNetwork?: boolean;
}

/** keel's CorsConfig or the `cors` package's options (one style per call), plus keel's extensions and `onReject` (lib/reject.ts). */
export type CorsOptions = (CorsConfigInput | CorsPackageOptions) & CorsExtensions & OnRejectOption;

export { DEFAULT_ON_REJECT } from '../../lib/reject.js';

/** Status of an answered preflight: 204 No Content. */
export const DEFAULT_PREFLIGHT_STATUS = 204;
/** Non-preflight requests from disallowed origins pass on without CORS headers: false. */
export const DEFAULT_REJECT_DISALLOWED_ORIGINS = false;
/** Private Network Access preflights are not granted: false. */
export const DEFAULT_ALLOW_PRIVATE_NETWORK = false;

/** RFC 9110 §5.6.2 token: header and method names. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function takeFlag(input: Record<string, unknown>, snake: string, camel: string, fallback: boolean): boolean {
  const present = [snake, camel].filter((k) => k in input);
  if (present.length === 0) return fallback;
  const key = present[0]!;
  const value = input[key];
  delete input[snake];
  delete input[camel];
  if (typeof value !== 'boolean') fail('CorsConfig', 'CorsConfig', key, value, 'true or false');
  return value;
}

function checkConfig(cfg: CorsConfig): CorsConfig {
  cfg.allowed_origins.forEach((o, i) => {
    if (o === '*' || o === 'null') return;
    let serialised: string | undefined;
    try {
      serialised = new URL(o).origin;
    } catch {
      serialised = undefined;
    }
    // Browsers send the serialised origin (RFC 6454 §6.2): lower-case scheme and host, no path, no
    // trailing slash. A configured origin in any other spelling would silently never match.
    if (serialised !== o) {
      const fix = serialised && serialised !== 'null' ? `Write it as ${JSON.stringify(serialised)}.` : 'Write scheme://host[:port].';
      fail('CorsConfig', 'CorsConfig', `allowed_origins[${i}]`, o, 'a serialised origin such as "https://example.com", "*" or "null"', fix);
    }
  });
  cfg.allowed_methods.forEach((m, i) => {
    if (!TOKEN.test(m)) fail('CorsConfig', 'CorsConfig', `allowed_methods[${i}]`, m, 'an HTTP method name or "*"');
  });
  for (const key of ['allowed_headers', 'expose_headers'] as const) {
    (cfg[key] ?? []).forEach((h, i) => {
      if (!TOKEN.test(h)) fail('CorsConfig', 'CorsConfig', `${key}[${i}]`, h, 'a header name or "*"');
    });
  }
  // Methods are compared case-sensitively (Fetch); browsers upper-case the standard ones.
  if (cfg.allowed_methods.some((m) => m !== m.toUpperCase())) {
    return CorsConfig.parse({ ...cfg.toJSON(), allowed_methods: cfg.allowed_methods.map((m) => m.toUpperCase()) });
  }
  return cfg;
}

/** Add `value` to the Vary header once, keeping what other middleware put there. */
function appendVary(res: ServerResponse, value: string): void {
  const current = res.getHeader('Vary');
  // The common case, nothing there yet: no parsing.
  if (current === undefined) {
    res.setHeader('Vary', value);
    return;
  }
  const text = Array.isArray(current) ? current.join(', ') : current === undefined ? '' : String(current);
  const parts = text.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (parts.includes('*') || parts.includes(value.toLowerCase())) return;
  res.setHeader('Vary', text ? `${text}, ${value}` : value);
}

/**
 * CORS for Express 5 and keel: answers preflights (204, or a 403 problem for a disallowed origin,
 * method or header) and decorates actual responses for allowed origins.
 *
 * - `allowed_origins` (default `["*"]`), `allowed_methods` (default `["*"]`): exact matches; `*` allows any.
 *   With `allow_credentials: true` an origin listed by name is echoed with `Access-Control-Allow-Credentials: true`
 *   and the method is echoed, never `*` (Fetch standard); an origin allowed only through `*` gets `*` without
 *   credentials (as the `cors` package answers), so browsers refuse its credentialed requests.
 * - `allowed_headers` (default `[]`): a non-empty list is strict (any other requested header is a
 *   403). Empty, or `*`, echoes the requested headers, matching the wildcard defaults of origins and
 *   methods (and the Express `cors` package); list the headers to restrict them.
 * - `expose_headers` (default null), `max_age` seconds (default null: header not sent), `allow_credentials` (default null).
 * - Non-preflight requests from a disallowed origin get no CORS headers (the browser blocks the
 *   response) unless `rejectDisallowedOrigins` is true (then 403).
 * - `onReject` (default `'respond'`): `'next'` hands each 403 to `next(err)` as an HttpError instead.
 *
 * @example
 * import express from 'express';
 * import { cors } from 'keel/middleware/cors';
 * const app = express();
 * app.use(cors({ allowedOrigins: ['https://app.example.com'], allowedHeaders: ['Content-Type'], maxAge: 600 }));
 * app.get('/api/data', (req, res) => res.json({ ok: true }));
 */
export function cors(options: CorsOptions = {}): Middleware {
  const { onReject, rest } = takeOnReject(options, 'CorsConfig');
  const reject = rejecter(onReject);
  const input: Record<string, unknown> = rest instanceof CorsConfig ? rest.toJSON() as never : { ...(rest as object) };
  const rejectDisallowed = takeFlag(input, 'reject_disallowed_origins', 'rejectDisallowedOrigins', DEFAULT_REJECT_DISALLOWED_ORIGINS);
  const allowPrivateNetwork = takeFlag(input, 'allow_private_network', 'allowPrivateNetwork', DEFAULT_ALLOW_PRIVATE_NETWORK);
  const familiar: TranslatedCors | undefined = options instanceof CorsConfig || !isPackageStyle(input) ? undefined : fromCorsPackage(input);
  if (familiar?.disabled) {
    return function corsDisabled(_req: KeelRequest, _res: ServerResponse, next: NextFunction): void {
      next();
    };
  }
  const cfg = checkConfig(CorsConfig.parse(familiar ? familiar.record : input));
  // A RegExp / function / `true` origin from the cors package; undefined keeps the record's exact matches.
  const matchOrigin = familiar?.matchOrigin;
  const preflightStatus = familiar?.preflightStatus ?? DEFAULT_PREFLIGHT_STATUS;
  const preflightContinue = familiar?.preflightContinue ?? false;

  const credentials = cfg.allow_credentials === true;
  const anyOrigin = cfg.allowed_origins.includes('*');
  const anyMethod = cfg.allowed_methods.includes('*');
  const allowedHeaders = new Set(cfg.allowed_headers.map((h) => h.toLowerCase()));
  const reflectHeaders = allowedHeaders.size === 0 || allowedHeaders.has('*');
  // Credentials are only granted to origins listed by name. An origin that matches only through `*`
  // gets a literal `*` (as from the `cors` package) and no Allow-Credentials: browsers then refuse
  // credentialed requests (Fetch, CORS check) instead of every site reading responses with the
  // user's cookies, which reflecting the origin would allow.
  const namedOrigins = credentials ? new Set(cfg.allowed_origins.filter((o) => o !== '*')) : new Set<string>();
  // With `*` and no named credentialed origin the Allow-Origin value is the same for every request: no Vary needed.
  const staticOrigin = anyOrigin && namedOrigins.size === 0;
  const exposeJoined = cfg.expose_headers && cfg.expose_headers.length > 0 ? cfg.expose_headers.join(', ') : undefined;
  const maxAge = cfg.max_age === null ? undefined : String(cfg.max_age);

  function allowOrigin(res: ServerResponse, origin: string): void {
    if (anyOrigin && !namedOrigins.has(origin)) {
      res.setHeader('Access-Control-Allow-Origin', '*');
      return;
    }
    res.setHeader('Access-Control-Allow-Origin', origin);
    if (credentials) res.setHeader('Access-Control-Allow-Credentials', 'true');
  }

  function forbid(req: KeelRequest, res: ServerResponse, next: NextFunction, detail: string): void {
    reject.refuse(req, res, next, problemFor('KEEL_FORBIDDEN', detail));
  }

  const middleware = function corsMiddleware(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    if (!staticOrigin) appendVary(res, 'Origin');
    const origin = req.headers.origin;
    if (origin === undefined) {
      next();
      return;
    }
    const requestMethod = req.headers['access-control-request-method'];
    const preflight = req.method === 'OPTIONS' && typeof requestMethod === 'string';
    const originAllowed = matchOrigin === undefined ? cfg.isOriginAllowed(origin) : matchOrigin(origin, req);

    if (!preflight) {
      if (!originAllowed) {
        if (rejectDisallowed) forbid(req, res, next, `CORS request from origin '${origin}' not allowed`);
        else next();
        return;
      }
      allowOrigin(res, origin);
      if (exposeJoined) res.setHeader('Access-Control-Expose-Headers', exposeJoined);
      next();
      return;
    }

    // The reference's words for a refused origin, preflight or not (cors.rs handle_preflight).
    if (!originAllowed) return forbid(req, res, next, `CORS request from origin '${origin}' not allowed`);
    const method = requestMethod.trim();
    if (!cfg.isMethodAllowed(method)) return forbid(req, res, next, `CORS preflight for method '${method}' not allowed`);
    const rawHeaders = req.headers['access-control-request-headers'];
    const requested = typeof rawHeaders === 'string' ? rawHeaders.split(',').map((h) => h.trim()).filter(Boolean) : [];
    if (!reflectHeaders) {
      const refused = requested.filter((h) => !allowedHeaders.has(h.toLowerCase()));
      if (refused.length > 0) return forbid(req, res, next, `CORS preflight for header(s) ${refused.map((h) => `'${h}'`).join(', ')} not allowed`);
    }

    allowOrigin(res, origin);
    // `*` is only a wildcard for requests without credentials (Fetch); echo the method otherwise.
    res.setHeader('Access-Control-Allow-Methods', anyMethod ? (credentials ? method : '*') : cfg.allowedMethodsJoined());
    // No `Vary: Access-Control-Request-Headers` for the echo: OPTIONS responses are not cacheable
    // (RFC 9110 §9.3.7), and browsers key their preflight cache on the request itself.
    if (reflectHeaders) {
      if (requested.length > 0) res.setHeader('Access-Control-Allow-Headers', requested.join(', '));
    } else {
      res.setHeader('Access-Control-Allow-Headers', cfg.allowedHeadersJoined());
    }
    if (maxAge !== undefined) res.setHeader('Access-Control-Max-Age', maxAge);
    if (allowPrivateNetwork && req.headers['access-control-request-private-network'] === 'true') {
      res.setHeader('Access-Control-Allow-Private-Network', 'true');
    }
    if (preflightContinue) return next();
    res.statusCode = preflightStatus;
    res.setHeader('Content-Length', '0');
    res.end();
  };
  const decide = familiar?.decide;
  if (decide === undefined) return middleware;
  // A function origin (cors package) decides first, possibly later; then the same middleware runs.
  return function corsMiddleware(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    decide(req, res, next, () => middleware(req, res, next));
  };
}
