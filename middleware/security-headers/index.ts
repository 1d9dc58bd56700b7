/**
 * Security response headers for an HTTP API, on helmet.
 *
 * helmet's defaults are written for HTML sites. An API's responses are read by programs, so keel
 * sends the set the OWASP REST Security Cheat Sheet recommends for APIs: a CSP that allows nothing
 * (`default-src 'none'; frame-ancestors 'none'`: a JSON body opened in a browser can run nothing and
 * be framed by no one), `X-Frame-Options: DENY`, `X-Content-Type-Options: nosniff`,
 * `Referrer-Policy: no-referrer`, `Cross-Origin-Resource-Policy: same-origin`, and no `X-Powered-By`.
 * Strict-Transport-Security (RFC 6797) is sent only when `hsts_max_age` is set: whether a host is
 * HTTPS-only is a deployment decision (TLS often ends at a proxy), and a wrong HSTS pin is hard to undo.
 *
 * Given helmet's options instead (`securityHeaders({ helmet: opts })`, or helmet's keys at the top
 * level as in `helmet(opts)`), the headers are exactly `helmet(opts)`'s: helmet's defaults (HSTS,
 * SAMEORIGIN, helmet's HTML-site CSP) for what is not given, none of keel's API choices.
 *
 * HTML pages served by the same app (Swagger UI, Redoc, GraphiQL) need a looser CSP: their handler
 * sets `res.setHeader('Content-Security-Policy', docsPageCsp())`, which replaces the API policy for
 * that one response (this middleware runs before the handler).
 */
import type { ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';
import { ConfigError } from '../../lib/http/errors.js';
import { fixedHeader, setFixedHeaders, type FixedHeader } from '../../lib/http/fixed-headers.js';
import { defineRecord, fail, t } from '../../lib/records/define.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';
import { STANDALONE } from './helmet.js';

export { DOCS_PAGE_CDN_SOURCES, docsPageCsp } from './docs-page.js';

/** OWASP's CSP for API responses: `default-src 'none'; frame-ancestors 'none'`. */
export const DEFAULT_API_CSP = "default-src 'none'; frame-ancestors 'none'";
/** `X-Frame-Options: DENY` (RFC 7034): API responses are never framed. */
export const DEFAULT_FRAME_OPTIONS = 'DENY';
/** `Referrer-Policy: no-referrer`. */
export const DEFAULT_REFERRER_POLICY = 'no-referrer';
/** `Cross-Origin-Resource-Policy: same-origin` (CORS requests are not affected by CORP). */
export const DEFAULT_CROSS_ORIGIN_RESOURCE_POLICY = 'same-origin';
/** No Strict-Transport-Security unless asked: null. */
export const DEFAULT_HSTS_MAX_AGE: number | null = null;
/** With HSTS on, it covers subdomains: true. */
export const DEFAULT_HSTS_INCLUDE_SUB_DOMAINS = true;
/** With HSTS on, no preload-list opt-in: false. */
export const DEFAULT_HSTS_PRELOAD = false;

const REFERRER_TOKENS = [
  'no-referrer', 'no-referrer-when-downgrade', 'same-origin', 'origin', 'strict-origin',
  'origin-when-cross-origin', 'strict-origin-when-cross-origin', 'unsafe-url',
] as const;

/** Options, snake_case or camelCase. */
export interface SecurityHeadersOptions {
  /** Send the headers. `false` also removes those an earlier securityHeaders() set (route opt-out). Default true. */
  enabled?: boolean;
  /** Content-Security-Policy value; `null` sends none. Default {@link DEFAULT_API_CSP}. */
  content_security_policy?: string | null;
  contentSecurityPolicy?: string | null;
  /** `DENY` or `SAMEORIGIN`. Default {@link DEFAULT_FRAME_OPTIONS} (`DENY`). */
  frame_options?: 'DENY' | 'SAMEORIGIN';
  frameOptions?: 'DENY' | 'SAMEORIGIN';
  /** Default {@link DEFAULT_REFERRER_POLICY} (`no-referrer`). */
  referrer_policy?: (typeof REFERRER_TOKENS)[number];
  referrerPolicy?: (typeof REFERRER_TOKENS)[number];
  /** Default {@link DEFAULT_CROSS_ORIGIN_RESOURCE_POLICY} (`same-origin`). */
  cross_origin_resource_policy?: 'same-origin' | 'same-site' | 'cross-origin';
  crossOriginResourcePolicy?: 'same-origin' | 'same-site' | 'cross-origin';
  /** Strict-Transport-Security max-age in seconds; `null` sends no HSTS. Default {@link DEFAULT_HSTS_MAX_AGE} (null). */
  hsts_max_age?: number | null;
  hstsMaxAge?: number | null;
  /** Default {@link DEFAULT_HSTS_INCLUDE_SUB_DOMAINS} (true). */
  hsts_include_sub_domains?: boolean;
  hstsIncludeSubDomains?: boolean;
  /** Default {@link DEFAULT_HSTS_PRELOAD} (false). */
  hsts_preload?: boolean;
  hstsPreload?: boolean;
  /**
   * helmet's options: the headers are then exactly `helmet(options)`'s (helmet's defaults for what
   * is not given, none of keel's API choices). Cannot be combined with the keys above (but `enabled`).
   */
  helmet?: HelmetOptions;
}

/**
 * securityHeaders also takes helmet's options at the top level, as `helmet(options)` does
 * (`securityHeaders({ contentSecurityPolicy: { directives } })`): the headers are exactly helmet's.
 */
export type SecurityHeadersHelmetOptions = HelmetOptions & { enabled?: boolean };

/** helmet's top-level option names (helmet 8, with its legacy aliases). */
export const HELMET_OPTION_KEYS: readonly string[] = Object.freeze([
  'contentSecurityPolicy', 'crossOriginEmbedderPolicy', 'crossOriginOpenerPolicy', 'crossOriginResourcePolicy',
  'originAgentCluster', 'referrerPolicy', 'strictTransportSecurity', 'hsts', 'xContentTypeOptions', 'noSniff',
  'xDnsPrefetchControl', 'dnsPrefetchControl', 'xDownloadOptions', 'ieNoOpen', 'xFrameOptions', 'frameguard',
  'xPermittedCrossDomainPolicies', 'permittedCrossDomainPolicies', 'xPoweredBy', 'hidePoweredBy', 'xXssProtection', 'xssFilter',
]);
/** Keys both styles use: a string (or null) value is keel's record, an object or boolean is helmet's. */
const SHARED_KEYS = ['contentSecurityPolicy', 'crossOriginResourcePolicy', 'referrerPolicy'];

/**
 * helmet's options when the call is written in helmet's style (`{ helmet: opts }` or helmet's keys at
 * the top level), else undefined. keel's record keys next to helmet's are a ConfigError.
 */
function helmetStyle(options: Record<string, unknown>): { helmet: HelmetOptions; path: string } | undefined {
  const keys = Object.keys(options).filter((k) => options[k] !== undefined && k !== 'enabled');
  const isHelmetValue = (k: string) => !SHARED_KEYS.includes(k) || (typeof options[k] === 'object' && options[k] !== null) || typeof options[k] === 'boolean';
  const helmetKeys = keys.filter((k) => HELMET_OPTION_KEYS.includes(k) && isHelmetValue(k));
  const nested = options.helmet;
  if (nested !== undefined && (typeof nested !== 'object' || nested === null || Array.isArray(nested))) return undefined;
  if (nested === undefined && helmetKeys.length === 0) return undefined;
  const given = nested !== undefined ? 'helmet' : helmetKeys[0]!;
  const keel = keys.find((k) => k !== 'helmet' && !helmetKeys.includes(k));
  if (keel !== undefined || (nested !== undefined && helmetKeys.length > 0)) {
    const other = keel ?? helmetKeys[0]!;
    fail(RECORD, RECORD, other, options[other], `keel's keys or helmet's options (${given}), not both`,
      `With helmet's options the headers are exactly helmet's: write ${other} the helmet way inside them (or drop ${given} and use keel's keys).`);
  }
  if (nested !== undefined) return { helmet: nested as HelmetOptions, path: `${RECORD}.helmet` };
  return { helmet: Object.fromEntries(helmetKeys.map((k) => [k, options[k]])) as HelmetOptions, path: RECORD };
}

interface Parsed {
  enabled: boolean;
  content_security_policy: string | null;
  frame_options: 'DENY' | 'SAMEORIGIN';
  referrer_policy: (typeof REFERRER_TOKENS)[number];
  cross_origin_resource_policy: 'same-origin' | 'same-site' | 'cross-origin';
  hsts_max_age: number | null;
  hsts_include_sub_domains: boolean;
  hsts_preload: boolean;
  helmet?: HelmetOptions;
}

const RECORD = 'SecurityHeadersOptions';
const SecurityHeadersRecord = defineRecord<Parsed>(
  RECORD,
  {
    enabled: { type: t.boolean(), default: true },
    // No CR/LF/NUL: the value goes into a header line.
    content_security_policy: { type: t.string({ minLength: 1, pattern: /^[^\r\n\0]+$/, hint: 'a Content-Security-Policy value on one line' }), nullable: true, default: DEFAULT_API_CSP },
    frame_options: { type: t.string({ enum: ['DENY', 'SAMEORIGIN'] }), default: DEFAULT_FRAME_OPTIONS },
    referrer_policy: { type: t.string({ enum: REFERRER_TOKENS }), default: DEFAULT_REFERRER_POLICY },
    cross_origin_resource_policy: { type: t.string({ enum: ['same-origin', 'same-site', 'cross-origin'] }), default: DEFAULT_CROSS_ORIGIN_RESOURCE_POLICY },
    hsts_max_age: { type: t.integer(0), nullable: true, default: DEFAULT_HSTS_MAX_AGE },
    hsts_include_sub_domains: { type: t.boolean(), default: DEFAULT_HSTS_INCLUDE_SUB_DOMAINS },
    hsts_preload: { type: t.boolean(), default: DEFAULT_HSTS_PRELOAD },
    helmet: { type: t.json() },
  },
  {
    check: (v, path) => {
      if (v.helmet !== undefined && (typeof v.helmet !== 'object' || v.helmet === null || Array.isArray(v.helmet))) {
        fail(RECORD, path, 'helmet', v.helmet, 'an object of helmet options');
      }
      // The browser preload list requires max-age >= 1 year and includeSubDomains (hstspreload.org).
      if (v.hsts_preload && (v.hsts_max_age === null || v.hsts_max_age < 31_536_000 || !v.hsts_include_sub_domains)) {
        fail(RECORD, path, 'hsts_preload', true, 'hsts_max_age >= 31536000 and hsts_include_sub_domains: true', 'The HSTS preload list rejects anything less.');
      }
    },
  },
);

/**
 * Headers an earlier instance set on each response, so a disabled one (a route's opt-out) can take
 * them back. Recorded only once a disabled instance exists: a new own property on an Express
 * response is an uncached map transition (≈ 3.5 µs; Express has changed its prototype), which a
 * process without opt-outs should not pay on every response.
 */
const kSet = Symbol('keel.securityHeaders.set');
type TaggedResponse = ServerResponse & { [kSet]?: readonly string[] };
let disabledInstances = 0;

/**
 * Send API-appropriate security headers (see the module comment for the list and why).
 *
 * @example
 * import express from 'express';
 * import { securityHeaders, docsPageCsp } from 'keel/middleware/security-headers';
 *
 * const app = express();
 * app.use(securityHeaders({ hsts_max_age: 31_536_000 }));
 * app.get('/', (_req, res) => res.json({ ok: true }));
 * // An HTML documentation page replaces the API's CSP for its own response.
 * app.get('/docs', (_req, res) => {
 *   res.setHeader('Content-Security-Policy', docsPageCsp());
 *   res.type('html').send('<!doctype html><div id="redoc"></div>');
 * });
 * app.listen(8000);
 */
export function securityHeaders(options: SecurityHeadersOptions | SecurityHeadersHelmetOptions = {}): Middleware {
  const own = typeof options === 'object' && options !== null ? helmetStyle(options as Record<string, unknown>) : undefined;
  const c = SecurityHeadersRecord.parse(own ? ('enabled' in options ? { enabled: options.enabled } : {}) : options, RECORD);
  if (!c.enabled) {
    disabledInstances++;
    return function securityHeadersDisabled(_req: KeelRequest, res: ServerResponse, next: NextFunction): void {
      const names = (res as TaggedResponse)[kSet];
      if (names !== undefined) {
        if (!res.headersSent) for (const name of names) res.removeHeader(name);
        (res as TaggedResponse)[kSet] = undefined;
      }
      next();
    };
  }

  const helmetOptions: HelmetOptions = own ? own.helmet : {
    // CSP is a plain string here (what users copy from documentation), set below.
    contentSecurityPolicy: false,
    crossOriginResourcePolicy: { policy: c.cross_origin_resource_policy },
    referrerPolicy: { policy: c.referrer_policy },
    xFrameOptions: { action: c.frame_options === 'DENY' ? 'deny' : 'sameorigin' },
    strictTransportSecurity: c.hsts_max_age === null ? false : { maxAge: c.hsts_max_age, includeSubDomains: c.hsts_include_sub_domains, preload: c.hsts_preload },
  } as HelmetOptions;
  // helmet's style gives exactly helmet's headers: keel's API CSP is not added.
  const csp = own ? null : c.content_security_policy;
  const userOptions = own?.helmet;
  const helmetPath = own ? own.path : `${RECORD}.helmet`;

  let apply: ReturnType<typeof helmet>;
  try {
    apply = helmet(helmetOptions);
  } catch (err) {
    throw new ConfigError(`Invalid ${RECORD} at ${helmetPath}: ${(err as Error).message}`, { record: RECORD, path: helmetPath, key: 'helmet', value: userOptions });
  }

  const plan = recordHelmet(apply, userOptions);
  if (plan === null) return perRequestHelmet(apply, csp);
  if (csp !== null) plan.push(['Content-Security-Policy', csp]);
  // In helmet's order.
  const removed = Object.freeze(plan.filter(([, value]) => value === undefined).map(([name]) => name));
  // Checked once here (node's own checks): each response only gets the header map's entries (lib/http/fixed-headers.ts).
  const fixed = Object.freeze(plan.filter(([, value]) => value !== undefined).map(([name, value]) => checked(name, value!)));
  const names = Object.freeze(fixed.map((h) => h.name));

  return function securityHeaders(_req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    if (res.headersSent) return next();
    for (let i = 0; i < removed.length; i++) res.removeHeader(removed[i]!);
    setFixedHeaders(res, fixed);
    if (disabledInstances > 0) (res as TaggedResponse)[kSet] = names;
    next();
  };
}

/** One header operation: set `name` to `value`, or remove `name` (value undefined). */
/** A header node would refuse on every response is refused once, at start-up. */
function checked(name: string, value: string): FixedHeader {
  try {
    return fixedHeader(name, value);
  } catch (err) {
    const key = name === 'Content-Security-Policy' ? 'content_security_policy' : 'helmet';
    throw new ConfigError(`Invalid ${RECORD} at ${RECORD}.${key}: the ${name} header ${JSON.stringify(value)} is not a valid header value (${(err as Error).message})`, { record: RECORD, path: RECORD, key, value });
  }
}

type HeaderOp = readonly [name: string, value: string | undefined];

/**
 * helmet's headers depend on its options only, except a CSP directive given as a function (a nonce
 * per response). Without functions, run helmet once against a recorder and replay what it did on
 * every response: the same headers, without helmet's per-request dispatch. null: replay is not safe.
 */
function recordHelmet(apply: ReturnType<typeof helmet>, userOptions: unknown): HeaderOp[] | null {
  if (containsFunction(userOptions)) return null;
  const ops: HeaderOp[] = [];
  const recorder = {
    setHeader(name: string, value: unknown) {
      if (typeof value !== 'string') throw new TypeError('not a string header');
      ops.push([name, value]);
    },
    removeHeader(name: string) {
      ops.push([name, undefined]);
    },
  };
  let outcome = 'pending' as 'pending' | 'ok' | 'failed';
  try {
    apply({} as never, recorder as never, (err?: unknown) => {
      outcome = err ? 'failed' : 'ok';
    });
  } catch {
    return null;
  }
  // Anything else (a callback not called synchronously, an error) is left to helmet itself.
  return outcome === 'ok' ? ops : null;
}

function containsFunction(value: unknown, depth = 0): boolean {
  if (typeof value === 'function') return true;
  if (typeof value !== 'object' || value === null || depth > 8) return false;
  return Object.values(value).some((v) => containsFunction(v, depth + 1));
}

/** helmet on every response, for options whose headers can change per response. */
function perRequestHelmet(apply: ReturnType<typeof helmet>, csp: string | null): Middleware {
  return function securityHeaders(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    if (res.headersSent) return next();
    const before = disabledInstances > 0 ? new Set(res.getHeaderNames()) : undefined;
    let failure: unknown;
    // helmet's middleware is synchronous: it sets the headers, then calls back.
    apply(req, res, (err?: unknown) => {
      failure = err;
    });
    if (failure) return next(failure);
    if (csp !== null) res.setHeader('Content-Security-Policy', csp);
    if (before !== undefined) (res as TaggedResponse)[kSet] = res.getHeaderNames().filter((n) => !before.has(n));
    next();
  };
}

export * from './helmet.js';

/**
 * `helmet(options)` as helmet's default export: the headers are exactly helmet's (its defaults, its
 * option checks and warnings), built by `securityHeaders({ helmet: options })` so they are computed
 * once and replayed per response, and a route's `securityHeaders({ enabled: false })` can take them
 * back. The standalone middlewares hang off it as `helmet.hsts`, `helmet.contentSecurityPolicy`, ….
 *
 * @example
 * import helmet from 'keel/middleware/security-headers';
 * app.use(helmet({ contentSecurityPolicy: false, hsts: { maxAge: 63072000 } }));
 * app.use(helmet.frameguard({ action: 'deny' }));
 */
const helmetCompatible = Object.assign(
  function helmet(options: Readonly<HelmetOptions> = {}): Middleware {
    // Given a request (`app.use(helmet)`), helmet's own check names the mistake.
    return securityHeaders({ helmet: options as HelmetOptions });
  },
  STANDALONE,
);
export default helmetCompatible;
