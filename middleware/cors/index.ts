/**
 * CORS (Fetch standard, "CORS protocol" section) from a CorsConfig record, or from the `cors`
 * package's options.
 *
 * Written directly rather than on the `cors` package: keel must answer a disallowed preflight with a
 * 403 problem (the conformance cases require it; `cors` answers 204 without headers), answers a
 * CorsConfig as the reference implementation does (Spikard, crates/spikard-http/src/cors.rs), must
 * not send `*` wildcards together with credentials (the Fetch standard treats them literally then),
 * and supports Private Network Access preflights, none of which `cors` can express. The `cors`
 * package's options are answered as the package answers them (package-mode.ts, checked against the
 * package's own suite by `npm run peer-suites cors`), written out too because keel's additions
 * (rejectDisallowedOrigins, Private Network Access, the same-origin exemption) need the package's
 * per-request origin decision, which it does not expose, and its options are checked at start-up.
 */
import type { ServerResponse } from 'node:http';
import { CorsConfig, type CorsConfigData } from '../../lib/records/route.js';
import { fail } from '../../lib/records/define.js';
import { problemFor } from '../../lib/http/problem.js';
import { rejecter, takeOnReject, type OnRejectOption } from '../../lib/http/reject.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';
import type { TrustProxySetting } from '../../lib/records/server.js';
import { isPackageStyle, SHARED_KEYS, type CorsOptionsDelegate, type CorsPackageOptions } from './familiar.js';
import { packageCors } from './package-mode.js';
import { compileTrust, isSameOrigin } from './same-origin.js';
import { appendVary } from './vary.js';

export {
  PACKAGE_DEFAULT_METHODS, PACKAGE_DEFAULT_OPTIONS_STATUS,
  type CorsOptionsDelegate, type CorsOriginFunction, type CorsPackageOptions, type StaticOrigin,
} from './familiar.js';
export { isSameOrigin, ownOrigin } from './same-origin.js';

import type { CorsConfigInput as CorsRecordInput } from '../../lib/records/route.js';
import { fixedHeader, setFixedHeaders } from '../../lib/http/fixed-headers.js';

/** CorsConfig input: the record's keys in snake_case or camelCase (generated from the record), or a parsed CorsConfig. */
export type CorsConfigInput = CorsRecordInput | CorsConfig;

/** keel extensions beyond the CorsConfig record (not part of the spec's wire form). */
export interface CorsExtensions {
  /**
   * Answer a *non-preflight* request from a disallowed origin with a 403 problem instead of passing
   * it on without CORS headers. Browsers already block the response; rejecting also stops the
   * side effects of "simple" cross-origin requests (form POSTs). With a CorsConfig, an OPTIONS request
   * without `Origin` is refused too (as the reference's preflight handler refuses it). keel's routes
   * turn it on for their `cors` record, as the reference does per route; the factory's default is
   * {@link DEFAULT_REJECT_DISALLOWED_ORIGINS} (false), because `app.use(cors(…))` covers every route and
   * browsers send `Origin` on same-origin form POSTs too.
   */
  rejectDisallowedOrigins?: boolean;
  /**
   * Grant Private Network Access preflights (`Access-Control-Request-Private-Network: true`) from
   * allowed origins with `Access-Control-Allow-Private-Network: true`. Off by default
   * ({@link DEFAULT_ALLOW_PRIVATE_NETWORK}): with `allowed_origins: ["*"]` it would let any public site
   * reach a server on a private network, which is exactly what PNA guards against.
   */
  allowPrivateNetwork?: boolean;
  /**
   * Which proxies' X-Forwarded-Proto / X-Forwarded-Host to believe when deciding whether a request's
   * `Origin` is its own origin (a same-origin request is never refused, and with a CorsConfig gets no
   * CORS headers). As ServerConfig.trust_proxy / Express's 'trust proxy'; keel's routes pass the
   * server's. Default {@link DEFAULT_TRUST_PROXY_FOR_CORS} (false: the socket's scheme and the Host
   * header; under Express, `req.protocol`, which honours the app's own 'trust proxy').
   */
  trustProxy?: TrustProxySetting;
}

/** keel's CorsConfig or the `cors` package's options (one style per call), plus keel's extensions and `onReject` (lib/http/reject.ts). */
export type CorsOptions = (CorsConfigInput | CorsPackageOptions) & CorsExtensions & OnRejectOption;

export { DEFAULT_ON_REJECT } from '../../lib/http/reject.js';

/** Status of an answered preflight: 204 No Content. */
export const DEFAULT_PREFLIGHT_STATUS = 204;
/** Non-preflight requests from disallowed origins pass on without CORS headers: false. */
export const DEFAULT_REJECT_DISALLOWED_ORIGINS = false;
/** Private Network Access preflights are not granted: false. */
export const DEFAULT_ALLOW_PRIVATE_NETWORK = false;
/** X-Forwarded-Proto / -Host are not believed for the same-origin check: false. */
export const DEFAULT_TRUST_PROXY_FOR_CORS: TrustProxySetting = false;

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

/**
 * Access-Control-Request-Headers as a list. Empty elements (`a,,b`, a trailing comma, an empty
 * header) are skipped, as RFC 9110 §5.6.1 asks of every list recipient.
 */
function requestedHeaders(raw: string | string[] | undefined): string[] {
  if (typeof raw !== 'string') return [];
  return raw.split(',').map((h) => h.trim()).filter(Boolean);
}

/** keel's CorsConfig unless every key is one the `cors` package also has (or there is none). */
function isRecordStyle(input: Record<string, unknown>): boolean {
  if (isPackageStyle(input)) return false; // (throws on a mix of both styles)
  // Only `allowedHeaders` / `maxAge`, or nothing: the cors package's `cors()`, which must keep behaving as it does.
  return Object.keys(input).some((k) => input[k] !== undefined && !SHARED_KEYS.includes(k));
}

/**
 * CORS for Express 4 and 5 and keel: answers preflights (204, or a 403 problem for a disallowed
 * origin, method or header) and decorates actual responses for allowed origins. Two styles, one per
 * call (docs/middleware.md, docs/migrating-from-express.md):
 *
 * **keel's CorsConfig** (snake_case or camelCase record keys, or a parsed CorsConfig), answering as the
 * reference implementation does (Spikard, cors.rs):
 * - `allowed_origins` (default `["*"]`): exact matches, `*` allows any. The allowed origin is echoed in
 *   `Access-Control-Allow-Origin` (with `Vary: Origin`), also when it is allowed through `*`. With
 *   `allow_credentials: true`, `Access-Control-Allow-Credentials: true` goes only with origins listed by
 *   name; one allowed only through `*` gets `*` and no credentials (docs/security.md).
 * - Every OPTIONS request carrying an `Origin` is answered as a preflight (with or without
 *   Access-Control-Request-Method, whose check is skipped when it is absent or empty).
 * - `allowed_methods` (default `["*"]`): exact matches; `Access-Control-Allow-Methods` is the list joined
 *   with ", " (`*` stays `*`; with credentials it is literal for browsers, so the requested method is echoed).
 * - `allowed_headers` (default `[]`): the headers a preflight may ask for, compared case-insensitively;
 *   empty allows none (asking for any is a 403), `*` allows all. `Access-Control-Allow-Headers` is the
 *   list joined with ", ", sent even when empty (with credentials, `*` echoes the requested headers).
 * - `expose_headers` (default null): `Access-Control-Expose-Headers` on actual responses, joined with ", ".
 * - `max_age` seconds (default null: no `Access-Control-Max-Age`).
 *
 * - A request whose `Origin` is its own origin (scheme + Host; `trustProxy` for X-Forwarded-Proto/-Host)
 *   is not a CORS request (Fetch standard): it is never refused and gets no CORS headers but `Vary: Origin`.
 *
 * **The `cors` package's options** (`origin`, `methods`, `headers`, `credentials`, …, no options at all,
 * or an options delegate `(req, cb) => cb(null, options)` computing them per request): header for header
 * as the package answers (package-mode.ts, docs/migrating-from-express.md): `*` by default to every
 * request, every OPTIONS answered as a preflight, the requested headers reflected without
 * `allowedHeaders`, a disallowed origin left to the browser (no Access-Control-Allow-Origin).
 *
 * Both styles: an actual request from a disallowed origin passes on without Access-Control-Allow-Origin
 * (the browser blocks the response) unless `rejectDisallowedOrigins` is true (then 403, never for a
 * same-origin request; with a CorsConfig an OPTIONS request without `Origin` is refused too, as the
 * reference refuses it). keel's routes set it for their `cors` record. `onReject` (default
 * `'respond'`): `'next'` hands each 403 to `next(err)` as an HttpError.
 *
 * @example
 * import express from 'express';
 * import { cors } from 'keel/middleware/cors';
 * const app = express();
 * app.use(cors({ allowedOrigins: ['https://app.example.com'], allowedHeaders: ['Content-Type'], maxAge: 600 }));
 * app.get('/api/data', (req, res) => res.json({ ok: true }));
 *
 * @example
 * // The cors package's options delegate: per-request options (here, one allowed origin).
 * app.use(cors((req, cb) => cb(null, { origin: req.headers.origin === 'https://app.example.com' })));
 */
export function cors(options: CorsOptions | CorsOptionsDelegate = {}): Middleware {
  if (typeof options === 'function') {
    return packageCors(options, { rejectDisallowed: DEFAULT_REJECT_DISALLOWED_ORIGINS, allowPrivateNetwork: DEFAULT_ALLOW_PRIVATE_NETWORK, trust: null, reject: rejecter('respond') });
  }
  const { onReject, rest } = takeOnReject(options, 'CorsConfig');
  const reject = rejecter(onReject);
  const input: Record<string, unknown> = rest instanceof CorsConfig ? rest.toJSON() as never : { ...(rest as object) };
  const rejectDisallowed = takeFlag(input, 'reject_disallowed_origins', 'rejectDisallowedOrigins', DEFAULT_REJECT_DISALLOWED_ORIGINS);
  const allowPrivateNetwork = takeFlag(input, 'allow_private_network', 'allowPrivateNetwork', DEFAULT_ALLOW_PRIVATE_NETWORK);
  const trustSetting = 'trustProxy' in input ? input.trustProxy : input.trust_proxy;
  delete input.trustProxy;
  delete input.trust_proxy;
  const trust = compileTrust((trustSetting ?? DEFAULT_TRUST_PROXY_FOR_CORS) as TrustProxySetting);
  if (!(options instanceof CorsConfig) && !isRecordStyle(input)) {
    return packageCors(input, { rejectDisallowed, allowPrivateNetwork, trust, reject });
  }
  const cfg = checkConfig(CorsConfig.parse(input));

  const credentials = cfg.allow_credentials === true;
  const anyOrigin = cfg.allowed_origins.includes('*');
  const anyMethod = cfg.allowed_methods.includes('*');
  const allowedHeaders = new Set(cfg.allowed_headers.map((h) => h.toLowerCase()));
  const anyHeader = allowedHeaders.has('*');
  // Credentials are only granted to origins listed by name. An origin that matches only through `*`
  // gets a literal `*` and no Allow-Credentials: browsers then refuse credentialed requests (Fetch,
  // CORS check) instead of every site reading responses with the user's cookies, which reflecting
  // the origin would allow. Without credentials the origin is echoed (as the reference does).
  const namedOrigins = credentials ? new Set(cfg.allowed_origins.filter((o) => o !== '*')) : new Set<string>();
  const wildcardAnswer = anyOrigin && credentials;
  // When the Allow-Origin value is the same for every request, no Vary is needed.
  const staticOrigin = wildcardAnswer && namedOrigins.size === 0;
  const exposeJoined = cfg.expose_headers === null ? undefined : cfg.expose_headers.join(', ');
  const maxAge = cfg.max_age === null ? undefined : String(cfg.max_age);

  // The answers that are the same for every request, checked once (lib/http/fixed-headers.ts).
  const anyOriginHeader = [fixedHeader('Access-Control-Allow-Origin', '*')];
  const credentialsHeader = [fixedHeader('Access-Control-Allow-Credentials', 'true')];
  // checkConfig() took only token names: nothing here for node's checks to refuse.
  const exposeHeader = exposeJoined === undefined ? undefined : [fixedHeader('Access-Control-Expose-Headers', exposeJoined)];

  function allowOrigin(res: ServerResponse, origin: string): void {
    if (wildcardAnswer && !namedOrigins.has(origin)) {
      setFixedHeaders(res, anyOriginHeader);
      return;
    }
    // The request's own Origin value: node's check stays (setHeader).
    res.setHeader('Access-Control-Allow-Origin', origin);
    if (credentials) setFixedHeaders(res, credentialsHeader);
  }

  function forbid(req: KeelRequest, res: ServerResponse, next: NextFunction, detail: string): void {
    reject.refuse(req, res, next, problemFor('KEEL_FORBIDDEN', detail));
  }

  // The reference's words for a refused origin, preflight or not (cors.rs handle_preflight, validate_cors_request).
  const originRefused = (origin: string): string => `CORS request from origin '${origin}' not allowed`;

  function answerPreflight(req: KeelRequest, res: ServerResponse, next: NextFunction, origin: string, method: string): void {
    // An empty or absent Access-Control-Request-Method is not checked (cors.rs handle_preflight).
    if (method !== '' && !cfg.isMethodAllowed(method)) return forbid(req, res, next, `CORS preflight for method '${method}' not allowed`);
    const requested = requestedHeaders(req.headers['access-control-request-headers']);
    if (!anyHeader) {
      const refused = requested.filter((h) => !allowedHeaders.has(h.toLowerCase()));
      if (refused.length > 0) return forbid(req, res, next, `CORS preflight for header(s) ${refused.map((h) => `'${h}'`).join(', ')} not allowed`);
    }

    allowOrigin(res, origin);
    // `*` is only a wildcard for requests without credentials (Fetch); echo the method otherwise.
    if (anyMethod && credentials) res.setHeader('Access-Control-Allow-Methods', method || cfg.allowedMethodsJoined());
    else res.setHeader('Access-Control-Allow-Methods', cfg.allowedMethodsJoined());
    // No `Vary: Access-Control-Request-Headers` for an echo: OPTIONS responses are not cacheable
    // (RFC 9110 §9.3.7), and browsers key their preflight cache on the request itself.
    res.setHeader('Access-Control-Allow-Headers', anyHeader && credentials ? requested.join(', ') : cfg.allowedHeadersJoined());
    if (maxAge !== undefined) res.setHeader('Access-Control-Max-Age', maxAge);
    if (allowPrivateNetwork && req.headers['access-control-request-private-network'] === 'true') {
      res.setHeader('Access-Control-Allow-Private-Network', 'true');
    }
    res.statusCode = DEFAULT_PREFLIGHT_STATUS;
    res.setHeader('Content-Length', '0');
    res.end();
  }

  return function corsMiddleware(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    if (!staticOrigin) appendVary(res, 'Origin');
    const header = req.headers.origin;
    // An empty Origin is no origin (cors.rs: is_origin_allowed("") is false, and an actual request without one passes).
    const origin = header === '' ? undefined : header;
    // A CorsConfig answers every OPTIONS as a preflight (the reference routes OPTIONS of a CORS route to its preflight handler).
    const preflight = req.method === 'OPTIONS';
    if (origin === undefined) {
      // Not a CORS request; a route's CorsConfig still refuses an OPTIONS without Origin, as the reference does.
      if (preflight && rejectDisallowed) return forbid(req, res, next, originRefused(''));
      next();
      return;
    }
    if (!preflight) {
      if (!cfg.isOriginAllowed(origin)) {
        // Browsers send Origin on same-origin POSTs too: the app's own pages are not cross-origin callers.
        if (rejectDisallowed && !isSameOrigin(req, origin, trust)) forbid(req, res, next, originRefused(origin));
        else next();
        return;
      }
      // Same-origin: no CORS headers (the response is the page's own); Vary: Origin above keeps caches right.
      if (isSameOrigin(req, origin, trust)) return next();
      allowOrigin(res, origin);
      if (exposeHeader !== undefined) setFixedHeaders(res, exposeHeader);
      next();
      return;
    }

    if (!cfg.isOriginAllowed(origin)) return forbid(req, res, next, originRefused(origin));
    const requestMethod = req.headers['access-control-request-method'];
    answerPreflight(req, res, next, origin, typeof requestMethod === 'string' ? requestMethod.trim() : '');
  };
}
