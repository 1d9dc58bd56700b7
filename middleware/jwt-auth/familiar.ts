/**
 * express-jwt's options for keel's jwtAuth, translated once at factory time into a JwtConfig record
 * plus the request-side choices (optional credentials, where the token comes from, where the claims go).
 */
import type { ServerResponse } from 'node:http';
import { fail } from '../../lib/records/define.js';
import { JWT_ALGORITHMS } from '../../lib/records/index.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/request.js';
import { isPackageStyle as packageStyle } from '../../lib/package-style.js';

/** The express-jwt options keel accepts (express-jwt 8 names and meanings). */
export interface JwtPackageOptions {
  /** HS*: the shared secret; RS*, PS*, ES*, EdDSA: the public key (PEM). A string (a function / KeyObject is refused). */
  secret?: string;
  /** The accepted algorithm, as a list of one (keel verifies one algorithm per configuration, RFC 8725 §3.1). */
  algorithms?: readonly string[];
  /** Accepted audience(s); the token's `aud` must contain one. */
  audience?: string | readonly string[];
  /** Required issuer (a string, or a list of one). */
  issuer?: string | readonly string[];
  /** false: a request without a token passes unauthenticated (a bad token is still refused). Default true. */
  credentialsRequired?: boolean;
  /** Where the verified claims go on the request. Default 'auth'. */
  requestProperty?: string;
  /** Read the token from elsewhere (a cookie, the query string); a string, undefined, or a promise of one. */
  getToken?: (req: any) => string | undefined | null | Promise<string | undefined | null>;
  /** Clock tolerance for exp / nbf, seconds (keel's `leeway`). */
  clockTolerance?: number;
}

export const PACKAGE_KEYS: readonly string[] = ['algorithms', 'credentialsRequired', 'requestProperty', 'getToken', 'clockTolerance'];
const SHARED_KEYS = ['secret', 'audience', 'issuer'];
const RECORD_KEYS = ['enabled', 'public_key', 'publicKey', 'algorithm', 'leeway'];

/** express-jwt / jsonwebtoken options keel cannot honour, with what to use instead. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  isRevoked: 'check revocation in your own middleware after jwtAuth, reading req.auth',
  onExpired: 'an expired token is always refused (401 "Token has expired"); to answer it yourself, use onReject',
  ignoreExpiration: 'keel always checks exp; allow clock skew with clockTolerance',
  ignoreNotBefore: 'keel always checks nbf; allow clock skew with clockTolerance',
  maxAge: 'keel checks exp, not the token age; issue tokens with the lifetime you want',
  subject: 'check req.auth.sub in your own middleware',
  complete: 'keel puts the verified claims on the request, never the header',
  jwtid: 'check req.auth.jti in your own middleware',
  nonce: 'check req.auth.nonce in your own middleware',
};

/** What the translation gives the factory. */
export interface TranslatedJwt {
  record: Record<string, unknown>;
  credentialsRequired: boolean;
  requestProperty: string;
  getToken?: JwtPackageOptions['getToken'];
}

const WHERE = 'jwtAuth(express-jwt options)';

/** True when `options` uses express-jwt's keys; both styles in one call is a ConfigError. */
export function isPackageStyle(options: object): boolean {
  const o = options as Record<string, unknown>;
  return packageStyle(
    options,
    (k) => PACKAGE_KEYS.includes(k) || k in UNSUPPORTED,
    (k) => RECORD_KEYS.includes(k),
    (pkg, keel) => fail('JwtConfig', 'jwtAuth(options)', keel, o[keel], `keel's JwtConfig keys or express-jwt's (${pkg.join(', ')}), not both`,
      `${pkg[0]} is express-jwt's, ${keel} is keel's: write the whole call in one style (express-jwt's algorithms: ['HS256'] is keel's algorithm: 'HS256').`),
  );
}

/** Translate express-jwt options; a ConfigError names any option keel cannot honour and its keel equivalent. */
export function fromExpressJwt(options: Record<string, unknown>): TranslatedJwt {
  const bad = (key: string, expected: string, fix?: string): never => fail('JwtConfig', WHERE, key, options[key], expected, fix);
  for (const key of Object.keys(options)) {
    if (options[key] === undefined) continue;
    if (key in UNSUPPORTED) bad(key, 'an option keel supports', `${key} is not supported: ${UNSUPPORTED[key]}.`);
    if (!PACKAGE_KEYS.includes(key) && !SHARED_KEYS.includes(key)) bad(key, `one of the express-jwt options keel accepts (${[...SHARED_KEYS, ...PACKAGE_KEYS].join(', ')})`);
  }
  const algorithms = options.algorithms;
  if (!Array.isArray(algorithms) || algorithms.length === 0) bad('algorithms', 'a list of one algorithm, e.g. ["HS256"]', 'express-jwt requires it too.');
  if ((algorithms as unknown[]).length > 1) {
    bad('algorithms', 'exactly one algorithm', 'keel verifies one algorithm per configuration (RFC 8725 §3.1: no algorithm confusion); create one jwtAuth per key.');
  }
  const algorithm = (algorithms as unknown[])[0];
  if (typeof algorithm !== 'string' || !(JWT_ALGORITHMS as readonly string[]).includes(algorithm)) {
    bad('algorithms', `one of ${JWT_ALGORITHMS.join(', ')}`, algorithm === 'none' ? 'Unsigned tokens are never accepted (RFC 8725 §3.1).' : undefined);
  }
  const secret = options.secret;
  if (typeof secret !== 'string') {
    bad('secret', 'a string (the HS* secret or the PEM public key)', typeof secret === 'function'
      ? 'keel imports one key at start-up: a secret callback (e.g. jwks-rsa) has no keel equivalent; pass the PEM public key as a string.'
      : 'Pass the secret or PEM public key as text (Buffer and KeyObject are not accepted).');
  }
  const record: Record<string, unknown> = { algorithm };
  if ((algorithm as string).startsWith('HS')) record.secret = secret;
  else record.public_key = secret;

  if (options.audience !== undefined) {
    const aud = options.audience;
    if (typeof aud === 'string') record.audience = [aud];
    else if (Array.isArray(aud) && aud.every((a) => typeof a === 'string')) record.audience = [...aud];
    else bad('audience', 'a string or a list of strings', 'keel compares audiences exactly (RegExp audiences are not supported).');
  }
  if (options.issuer !== undefined) {
    const iss = options.issuer;
    if (typeof iss === 'string') record.issuer = iss;
    else if (Array.isArray(iss) && iss.length === 1 && typeof iss[0] === 'string') record.issuer = iss[0];
    else bad('issuer', 'one issuer (a string)', 'keel checks one issuer per configuration; create one jwtAuth per issuer.');
  }
  if (options.clockTolerance !== undefined) record.leeway = options.clockTolerance;

  const required = options.credentialsRequired;
  if (required !== undefined && typeof required !== 'boolean') bad('credentialsRequired', 'true or false');
  const prop = options.requestProperty ?? 'auth';
  if (typeof prop !== 'string' || !/^[A-Za-z_$][\w$]*$/.test(prop) || prop === '__proto__') {
    bad('requestProperty', 'a property name such as "auth" or "user"', 'Nested paths ("a.b") are not supported: read req.auth, or copy it in your own middleware.');
  }
  if (options.getToken !== undefined && typeof options.getToken !== 'function') bad('getToken', 'a function (req) => string | undefined');
  return {
    record,
    credentialsRequired: required !== false,
    requestProperty: prop as string,
    ...(options.getToken ? { getToken: options.getToken as TranslatedJwt['getToken'] } : {}),
  };
}

/** The token a getToken gave this request, for the verifier's header reader. */
const kToken = Symbol('keel.jwtAuth.token');
type TokenRequest = KeelRequest & { [kToken]?: string };

/** Where the verifier reads `Bearer <token>` from when getToken is given. */
export function headerFromGetToken(req: KeelRequest): string | undefined {
  const token = (req as TokenRequest)[kToken];
  return token === undefined ? undefined : `Bearer ${token}`;
}

/** A Bearer scheme (any case) followed by a token. */
const BEARER = /^\s*bearer\s+\S/i;

/**
 * The request-side behaviour of express-jwt around keel's verifier: CORS preflights that announce an
 * Authorization header pass (express-jwt does the same), optional credentials, getToken, requestProperty.
 */
export function wrapVerifier(verify: Middleware, t: TranslatedJwt): Middleware {
  const { credentialsRequired, requestProperty, getToken } = t;
  const copy = requestProperty !== 'auth';
  const done = (req: KeelRequest, next: NextFunction): NextFunction =>
    copy
      ? (err?: unknown) => {
          if (err === undefined && req.auth !== undefined) (req as unknown as Record<string, unknown>)[requestProperty] = req.auth;
          next(err as never);
        }
      : next;
  return function jwtAuthMiddleware(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    if (req.method === 'OPTIONS' && /(?:^|,)\s*authorization\s*(?:,|$)/i.test(String(req.headers['access-control-request-headers'] ?? ''))) return next();
    if (getToken === undefined) {
      if (!credentialsRequired && !BEARER.test(req.headers.authorization ?? '')) return next();
      return verify(req, res, done(req, next));
    }
    let token: ReturnType<NonNullable<JwtPackageOptions['getToken']>>;
    try {
      token = getToken(req);
    } catch (err) {
      return next(err);
    }
    const run = (value: string | undefined | null): void => {
      if (!value) {
        if (!credentialsRequired) return next();
        (req as TokenRequest)[kToken] = undefined;
      } else (req as TokenRequest)[kToken] = String(value);
      verify(req, res, done(req, next));
    };
    if (typeof (token as Promise<unknown>)?.then === 'function') (token as Promise<string | undefined | null>).then(run, next);
    else run(token as string | undefined | null);
  };
}
