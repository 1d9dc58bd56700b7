/**
 * helmet's standalone middlewares, under helmet's names and with helmet's options, so that
 * `import helmet, { hsts, frameguard } from 'keel/middleware/security-headers'` replaces
 * `import helmet, { hsts, frameguard } from 'helmet'` without another change.
 *
 * Each is helmet's own middleware (keel depends on helmet): the header values and every option
 * check are helmet's, so a page that relied on one keeps it byte for byte. What keel adds is the
 * error: bad options are a ConfigError (keel's start-up error, code KEEL_CONFIG_INVALID, naming the
 * middleware and the value) carrying helmet's own words as its message, so code and tests that
 * match helmet's texts keep matching. The per-response work is helmet's: each standalone middleware
 * sets one precomputed header (or, for a CSP with function directives, computes it), which there is
 * nothing to gain by replaying as `securityHeaders` does for the whole set.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as h from 'helmet';
import { ConfigError } from '../../lib/http/errors.js';

/** What each standalone factory returns: helmet's `(req, res, next)` middleware. */
export type HelmetMiddleware = (req: IncomingMessage, res: ServerResponse, next: (err?: Error) => void) => void;

export type ContentSecurityPolicyOptions = NonNullable<Parameters<typeof h.contentSecurityPolicy>[0]>;
export type CrossOriginEmbedderPolicyOptions = NonNullable<Parameters<typeof h.crossOriginEmbedderPolicy>[0]>;
export type CrossOriginOpenerPolicyOptions = NonNullable<Parameters<typeof h.crossOriginOpenerPolicy>[0]>;
export type CrossOriginResourcePolicyOptions = NonNullable<Parameters<typeof h.crossOriginResourcePolicy>[0]>;
export type ReferrerPolicyOptions = NonNullable<Parameters<typeof h.referrerPolicy>[0]>;
export type StrictTransportSecurityOptions = NonNullable<Parameters<typeof h.strictTransportSecurity>[0]>;
export type XDnsPrefetchControlOptions = NonNullable<Parameters<typeof h.xDnsPrefetchControl>[0]>;
export type XFrameOptionsOptions = NonNullable<Parameters<typeof h.xFrameOptions>[0]>;
export type XPermittedCrossDomainPoliciesOptions = NonNullable<Parameters<typeof h.xPermittedCrossDomainPolicies>[0]>;

/** Run helmet's factory; its refusal becomes a ConfigError with helmet's message. */
function build(name: string, make: () => HelmetMiddleware, options: unknown): HelmetMiddleware {
  try {
    return make();
  } catch (err) {
    const e = new ConfigError((err as Error).message, { record: name, path: name, key: name, value: options });
    (e as { cause?: unknown }).cause = err;
    throw e;
  }
}

/**
 * Content-Security-Policy (helmet's: its default directives unless `useDefaults: false`).
 *
 * @example
 * app.use(contentSecurityPolicy({ directives: { scriptSrc: ["'self'", 'example.com'] } }));
 */
function cspFactory(options?: Readonly<ContentSecurityPolicyOptions>): HelmetMiddleware {
  return build('contentSecurityPolicy', () => h.contentSecurityPolicy(options), options);
}
// helmet's own name (its suite compares `helmet.contentSecurityPolicy.name`): set here, since a bundler renames a
// function written with the name of the binding it is assigned to (contentSecurityPolicy2 in the CommonJS build).
Object.defineProperty(cspFactory, 'name', { value: 'contentSecurityPolicy' });
export const contentSecurityPolicy = Object.assign(
  cspFactory,
  {
    /** helmet's default directives, to extend: `{ ...contentSecurityPolicy.getDefaultDirectives(), ... }`. */
    getDefaultDirectives: h.contentSecurityPolicy.getDefaultDirectives,
    /** `defaultSrc: contentSecurityPolicy.dangerouslyDisableDefaultSrc` sends no default-src (helmet's symbol). */
    dangerouslyDisableDefaultSrc: h.contentSecurityPolicy.dangerouslyDisableDefaultSrc,
  },
);

/** Cross-Origin-Embedder-Policy (default `require-corp`). @example app.use(crossOriginEmbedderPolicy({ policy: 'credentialless' })); */
export function crossOriginEmbedderPolicy(options?: Readonly<CrossOriginEmbedderPolicyOptions>): HelmetMiddleware {
  return build('crossOriginEmbedderPolicy', () => h.crossOriginEmbedderPolicy(options), options);
}

/** Cross-Origin-Opener-Policy (default `same-origin`). @example app.use(crossOriginOpenerPolicy()); */
export function crossOriginOpenerPolicy(options?: Readonly<CrossOriginOpenerPolicyOptions>): HelmetMiddleware {
  return build('crossOriginOpenerPolicy', () => h.crossOriginOpenerPolicy(options), options);
}

/** Cross-Origin-Resource-Policy (default `same-origin`). @example app.use(crossOriginResourcePolicy({ policy: 'cross-origin' })); */
export function crossOriginResourcePolicy(options?: Readonly<CrossOriginResourcePolicyOptions>): HelmetMiddleware {
  return build('crossOriginResourcePolicy', () => h.crossOriginResourcePolicy(options), options);
}

/** `Origin-Agent-Cluster: ?1`. @example app.use(originAgentCluster()); */
export function originAgentCluster(): HelmetMiddleware {
  // Arguments are passed on: helmet warns about options it ignores.
  return build('originAgentCluster', () => (h.originAgentCluster as (...a: unknown[]) => HelmetMiddleware)(...arguments), arguments[0]);
}

/** Referrer-Policy (default `no-referrer`). @example app.use(referrerPolicy({ policy: ['origin', 'unsafe-url'] })); */
export function referrerPolicy(options?: Readonly<ReferrerPolicyOptions>): HelmetMiddleware {
  return build('referrerPolicy', () => h.referrerPolicy(options), options);
}

/** Strict-Transport-Security (RFC 6797; default max-age 365 days, includeSubDomains). @example app.use(strictTransportSecurity({ maxAge: 63072000 })); */
export function strictTransportSecurity(options?: Readonly<StrictTransportSecurityOptions>): HelmetMiddleware {
  return build('strictTransportSecurity', () => h.strictTransportSecurity(options), options);
}

/** `X-Content-Type-Options: nosniff`. @example app.use(xContentTypeOptions()); */
export function xContentTypeOptions(): HelmetMiddleware {
  return build('xContentTypeOptions', () => (h.xContentTypeOptions as (...a: unknown[]) => HelmetMiddleware)(...arguments), arguments[0]);
}

/** X-DNS-Prefetch-Control (default `off`). @example app.use(xDnsPrefetchControl({ allow: true })); */
export function xDnsPrefetchControl(options?: Readonly<XDnsPrefetchControlOptions>): HelmetMiddleware {
  return build('xDnsPrefetchControl', () => h.xDnsPrefetchControl(options), options);
}

/** `X-Download-Options: noopen`. @example app.use(xDownloadOptions()); */
export function xDownloadOptions(): HelmetMiddleware {
  return build('xDownloadOptions', () => (h.xDownloadOptions as (...a: unknown[]) => HelmetMiddleware)(...arguments), arguments[0]);
}

/** X-Frame-Options (RFC 7034; default `SAMEORIGIN`). @example app.use(xFrameOptions({ action: 'deny' })); */
export function xFrameOptions(options?: Readonly<XFrameOptionsOptions>): HelmetMiddleware {
  return build('xFrameOptions', () => h.xFrameOptions(options), options);
}

/** X-Permitted-Cross-Domain-Policies (default `none`). @example app.use(xPermittedCrossDomainPolicies({ permittedPolicies: 'by-content-type' })); */
export function xPermittedCrossDomainPolicies(options?: Readonly<XPermittedCrossDomainPoliciesOptions>): HelmetMiddleware {
  return build('xPermittedCrossDomainPolicies', () => h.xPermittedCrossDomainPolicies(options), options);
}

/** Removes X-Powered-By. @example app.use(xPoweredBy()); */
export function xPoweredBy(): HelmetMiddleware {
  return build('xPoweredBy', () => (h.xPoweredBy as (...a: unknown[]) => HelmetMiddleware)(...arguments), arguments[0]);
}

/** `X-XSS-Protection: 0` (the old filter caused leaks; OWASP). @example app.use(xXssProtection()); */
export function xXssProtection(): HelmetMiddleware {
  return build('xXssProtection', () => (h.xXssProtection as (...a: unknown[]) => HelmetMiddleware)(...arguments), arguments[0]);
}

// helmet's legacy names (helmet 4 and before), the same functions.
export {
  strictTransportSecurity as hsts,
  xContentTypeOptions as noSniff,
  xDnsPrefetchControl as dnsPrefetchControl,
  xDownloadOptions as ieNoOpen,
  xFrameOptions as frameguard,
  xPermittedCrossDomainPolicies as permittedCrossDomainPolicies,
  xPoweredBy as hidePoweredBy,
  xXssProtection as xssFilter,
};

/** The standalone middlewares by name, as `helmet.<name>` carries them. */
export const STANDALONE = Object.freeze({
  contentSecurityPolicy, crossOriginEmbedderPolicy, crossOriginOpenerPolicy, crossOriginResourcePolicy, originAgentCluster,
  referrerPolicy, strictTransportSecurity, xContentTypeOptions, xDnsPrefetchControl, xDownloadOptions, xFrameOptions,
  xPermittedCrossDomainPolicies, xPoweredBy, xXssProtection,
  dnsPrefetchControl: xDnsPrefetchControl, xssFilter: xXssProtection, permittedCrossDomainPolicies: xPermittedCrossDomainPolicies,
  ieNoOpen: xDownloadOptions, noSniff: xContentTypeOptions, frameguard: xFrameOptions, hidePoweredBy: xPoweredBy, hsts: strictTransportSecurity,
});
