/**
 * express-jwt's options for keel's jwtAuth, checked and translated once at factory time: the algorithm
 * and key (imported now unless `secret` is a function), the claim rules, and the request-side choices
 * (optional credentials, where the token comes from, where the claims go, revocation, expiry).
 */
import type { KeyObject } from 'node:crypto';
import { ConfigError, type UnauthorizedError } from '../../lib/http/errors.js';
import { fail } from '../../lib/records/define.js';
import { JWT_ALGORITHMS, type JwtAlgorithm } from '../../lib/records/index.js';
import { isPackageStyle as packageStyle } from '../../lib/http/package-style.js';
import type { KeelRequest } from '../../lib/http/request.js';
import type { ClaimRules } from './claims.js';
import { importPackageKey } from './keys.js';

/** A verification key as express-jwt (jsonwebtoken) takes it. */
export type JwtSecret = string | Buffer | KeyObject;

/** jsonwebtoken's `decode(token, { complete: true })`: what secret callbacks and isRevoked receive. */
export interface DecodedJwt {
  header: Record<string, unknown>;
  /** The claims, or the payload text when it is not a JSON object (express-jwt accepts such a JWS). */
  payload: Record<string, unknown> | string;
  signature: string;
}

/** jsonwebtoken's `JwtPayload`: the registered claims, typed, and any others. */
export interface JwtPayload {
  [claim: string]: any;
  iss?: string;
  sub?: string;
  aud?: string | string[];
  exp?: number;
  nbf?: number;
  iat?: number;
  jti?: string;
}

/**
 * express-jwt's `Request`: the request with the verified claims on `auth`, for handlers written as
 * `(req: Request, res) => …` (`import { Request as JWTRequest } from 'keel/middleware/jwt-auth'`).
 */
export type Request<T = JwtPayload> = KeelRequest & { auth?: T };

/** express-jwt's `GetVerificationKey`: the key for this request and token (multi-tenant apps, jwks-rsa). */
export type GetVerificationKey = (req: any, token: DecodedJwt | undefined) => JwtSecret | undefined | Promise<JwtSecret | undefined>;
/** express-jwt's `IsRevoked`: true refuses the token with `revoked_token`. */
export type IsRevoked = (req: any, token: DecodedJwt | undefined) => boolean | Promise<boolean>;
/** express-jwt's `ExpirationHandler`: returning lets an expired token through; throwing refuses it. */
export type ExpirationHandler = (req: any, err: UnauthorizedError) => void | Promise<void>;
/** express-jwt's `TokenGetter`: the token from a cookie or the query string; a string, undefined, or a promise of one. */
export type TokenGetter = (req: any) => string | undefined | null | Promise<string | undefined | null>;

/** The express-jwt options keel accepts (express-jwt 8 names and meanings). */
export interface JwtPackageOptions {
  /** HS*: the shared secret; RS*, PS*, ES*, EdDSA: the public key (PEM, Buffer or KeyObject); or a {@link GetVerificationKey}. */
  secret?: JwtSecret | GetVerificationKey;
  /** The accepted algorithm, as a list of one (keel verifies one algorithm per configuration, RFC 8725 §3.1). */
  algorithms?: readonly string[];
  /** Accepted audience(s); one of the token's `aud` values must equal one (or match a RegExp). */
  audience?: string | RegExp | readonly (string | RegExp)[];
  /** Accepted issuer(s). */
  issuer?: string | readonly string[];
  /** false: a request without a token passes unauthenticated (a bad token is still refused). Default true ({@link DEFAULT_CREDENTIALS_REQUIRED}). */
  credentialsRequired?: boolean;
  /** Where the verified claims go on the request; a dotted path ('auth.payload') nests. Default 'auth' ({@link DEFAULT_REQUEST_PROPERTY}). */
  requestProperty?: string;
  /** Read the token from elsewhere (a cookie, the query string). */
  getToken?: TokenGetter;
  /** Refuse revoked tokens (`revoked_token`). */
  isRevoked?: IsRevoked;
  /** Called with the `invalid_token` error of an expired token; returning lets the request through. */
  onExpired?: ExpirationHandler;
  /** Clock tolerance for exp / nbf, seconds (keel's `leeway`). Default 0 ({@link DEFAULT_CLOCK_TOLERANCE}). */
  clockTolerance?: number;
}

/** Where the claims go when `requestProperty` is not given (express-jwt's default). */
export const DEFAULT_REQUEST_PROPERTY = 'auth';
/** Whether a request without a token is refused when `credentialsRequired` is not given (express-jwt's default). */
export const DEFAULT_CREDENTIALS_REQUIRED = true;
/** Seconds of clock skew allowed for exp / nbf when `clockTolerance` is not given (jsonwebtoken's default). */
export const DEFAULT_CLOCK_TOLERANCE = 0;

/** express-jwt's name for its options. */
export type Params = JwtPackageOptions;

export const PACKAGE_KEYS: readonly string[] = ['algorithms', 'credentialsRequired', 'requestProperty', 'getToken', 'clockTolerance', 'isRevoked', 'onExpired'];
const SHARED_KEYS = ['secret', 'audience', 'issuer'];
const RECORD_KEYS = ['enabled', 'public_key', 'publicKey', 'algorithm', 'leeway', 'claims'];

/** express-jwt / jsonwebtoken options keel cannot honour, with what to use instead. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  ignoreExpiration: 'keel always checks exp; allow clock skew with clockTolerance, or decide in onExpired',
  ignoreNotBefore: 'keel always checks nbf; allow clock skew with clockTolerance',
  maxAge: 'keel checks exp, not the token age; issue tokens with the lifetime you want',
  subject: 'check req.auth.sub in your own middleware',
  complete: 'keel puts the verified claims on the request, never the header',
  jwtid: 'check req.auth.jti in your own middleware, or in isRevoked',
  nonce: 'check req.auth.nonce in your own middleware',
};

/** What the translation gives the middleware. */
export interface TranslatedJwt {
  readonly algorithm: JwtAlgorithm;
  /** The key, imported once, when `secret` is not a function. */
  readonly key: KeyObject | null;
  readonly getKey: GetVerificationKey | null;
  readonly rules: ClaimRules;
  readonly credentialsRequired: boolean;
  /** `requestProperty` split on dots, as express-jwt's `set` splits it. */
  readonly requestProperty: readonly string[];
  readonly getToken?: TokenGetter;
  readonly isRevoked?: IsRevoked;
  readonly onExpired?: ExpirationHandler;
}

export const WHERE = 'jwtAuth(express-jwt options)';
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

/** express-jwt's own words for its three start-up errors (kept verbatim: its users and its suite read them). */
function required(key: string, message: string, value: unknown): never {
  throw new ConfigError(`express-jwt: \`${key}\` ${message}`, { record: 'JwtConfig', path: `${WHERE}.${key}`, key, value });
}

/** Translate express-jwt options; a ConfigError names any option keel cannot honour and its keel equivalent. */
export function fromExpressJwt(options: Record<string, unknown> | undefined): TranslatedJwt {
  if (typeof options !== 'object' || options === null || !options.secret) required('secret', 'is a required option', options?.secret);
  const o = options as Record<string, unknown>;
  if (!o.algorithms) required('algorithms', 'is a required option', o.algorithms);
  if (!Array.isArray(o.algorithms)) required('algorithms', 'must be an array', o.algorithms);
  const bad = (key: string, expected: string, fix?: string): never => fail('JwtConfig', WHERE, key, o[key], expected, fix);
  for (const key of Object.keys(o)) {
    if (o[key] === undefined) continue;
    if (key in UNSUPPORTED) bad(key, 'an option keel supports', `${key} is not supported: ${UNSUPPORTED[key]}.`);
    if (!PACKAGE_KEYS.includes(key) && !SHARED_KEYS.includes(key)) bad(key, `one of the express-jwt options keel accepts (${[...SHARED_KEYS, ...PACKAGE_KEYS].join(', ')})`);
  }
  const algorithms = o.algorithms as unknown[];
  if (algorithms.length !== 1) {
    bad('algorithms', 'exactly one algorithm', 'keel verifies one algorithm per configuration (RFC 8725 §3.1: each key is used with one algorithm); create one jwtAuth per key.');
  }
  const algorithm = algorithms[0];
  if (typeof algorithm !== 'string' || !(JWT_ALGORITHMS as readonly string[]).includes(algorithm)) {
    bad('algorithms', `one of ${JWT_ALGORITHMS.join(', ')}`, algorithm === 'none' ? 'Unsigned tokens are never accepted (RFC 8725 §3.1).' : undefined);
  }
  const alg = algorithm as JwtAlgorithm;
  const secret = o.secret;
  const key = typeof secret === 'function' ? null : importPackageKey(WHERE, alg, secret);

  const list = <T>(key: string, ok: (v: unknown) => v is T, expected: string): T[] | null => {
    const v = o[key];
    if (v === undefined) return null;
    const items = Array.isArray(v) ? v : [v];
    if (items.length === 0 || !items.every(ok)) bad(key, expected);
    return items as T[];
  };
  const audience = list('audience', (v): v is string | RegExp => typeof v === 'string' || v instanceof RegExp, 'a string, a RegExp or a list of them')
    // Without g / y, test() keeps no lastIndex between requests (one would match, the next not).
    ?.map((a) => (typeof a === 'string' ? a : new RegExp(a.source, a.flags.replace(/[gy]/g, '')))) ?? null;
  const issuer = list('issuer', (v): v is string => typeof v === 'string', 'a string or a list of strings');
  const tolerance = o.clockTolerance ?? DEFAULT_CLOCK_TOLERANCE;
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0) bad('clockTolerance', 'a number of seconds, 0 or more');

  const requiredCreds = o.credentialsRequired;
  if (requiredCreds !== undefined && typeof requiredCreds !== 'boolean') bad('credentialsRequired', 'true or false');
  // express-jwt ignores a requestProperty that is not a string (and uses 'auth').
  const prop = typeof o.requestProperty === 'string' ? o.requestProperty : DEFAULT_REQUEST_PROPERTY;
  const path = prop.match(/[^.[\]]+/g) ?? [];
  if (path.length === 0 || path.some((p) => p === '__proto__' || p === 'constructor' || p === 'prototype')) {
    // express-jwt would write through __proto__ (prototype pollution); keel refuses the path.
    bad('requestProperty', 'a property name or a dotted path such as "auth" or "auth.payload"', 'Do not use __proto__, constructor or prototype.');
  }
  for (const fn of ['getToken', 'isRevoked', 'onExpired'] as const) {
    if (o[fn] !== undefined && typeof o[fn] !== 'function') bad(fn, 'a function');
  }
  return {
    algorithm: alg,
    key,
    getKey: typeof secret === 'function' ? (secret as GetVerificationKey) : null,
    rules: { audience, issuer, clockTolerance: tolerance as number },
    credentialsRequired: typeof requiredCreds === 'boolean' ? requiredCreds : DEFAULT_CREDENTIALS_REQUIRED,
    requestProperty: path,
    ...(o.getToken ? { getToken: o.getToken as TokenGetter } : {}),
    ...(o.isRevoked ? { isRevoked: o.isRevoked as IsRevoked } : {}),
    ...(o.onExpired ? { onExpired: o.onExpired as ExpirationHandler } : {}),
  };
}
