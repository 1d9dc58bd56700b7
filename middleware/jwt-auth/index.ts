/**
 * JWT bearer authentication (RFC 7519, RFC 6750): HS* on fast-jwt, synchronously (hmac.ts), the
 * asymmetric algorithms on `jose`.
 *
 * One algorithm per configuration, enforced on every token: `alg: none` and RS/HS confusion (an HS256
 * token "signed" with the RSA public key as HMAC secret) are rejected before any signature check,
 * as RFC 8725 §3.1 requires. Keys are imported once, at factory time.
 */
import type { ServerResponse } from 'node:http';
import type * as Jose from 'jose';
import type { JWTVerifyOptions } from 'jose';
import { lazyRequire } from '../../lib/http/lazy-require.js';
import { UnauthorizedError, type ExpressJwtErrorCode } from '../../lib/http/errors.js';
import { problem, sendProblem, type ProblemDetails } from '../../lib/http/problem.js';
import { rejecter, takeOnReject, type OnRejectOption, type Rejecter } from '../../lib/http/reject.js';
import { JwtAuthConfig, JwtConfig, checkJwtKeys, type JwtAlgorithm } from '../../lib/records/index.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';
import { hmacFailureReason, hmacVerifier, type FailureReason } from './hmac.js';
import { importVerificationKey } from './keys.js';
import { fromExpressJwt, isPackageStyle, type JwtPackageOptions } from './familiar.js';
import { JWT_HEADER_FORMAT_TITLE, JWT_INVALID_TITLE, JWT_MALFORMED_TITLE, JWT_MISSING_TITLE, UNAUTHORIZED_TYPE, invalidTokenChallenge } from './titles.js';
import { expressJwtMiddleware, withUnless, type JwtMiddleware } from './express-jwt.js';

export type { JwtMiddleware, UnlessOptions, UnlessPath } from './unless.js';

export { DEFAULT_CLOCK_TOLERANCE, DEFAULT_CREDENTIALS_REQUIRED, DEFAULT_REQUEST_PROPERTY } from './familiar.js';
export { MAX_CALLBACK_KEYS } from './express-jwt.js';
export type { JwtPackageOptions, JwtPayload, Request, Params, GetVerificationKey, IsRevoked, ExpirationHandler, TokenGetter, DecodedJwt, JwtSecret } from './familiar.js';

export { MIN_HMAC_SECRET_BYTES, MIN_RSA_MODULUS_BITS } from './keys.js';
export { DEFAULT_JWT_ALGORITHM, JWT_ALGORITHMS } from '../../lib/records/index.js';
export { DEFAULT_ON_REJECT } from '../../lib/http/reject.js';
export { UnauthorizedError, EXPRESS_JWT_ERROR_CODES, type ExpressJwtErrorCode } from '../../lib/http/errors.js';

/**
 * Options: a server-level JwtConfig or a per-route JwtAuthConfig (the same keys plus `enabled`),
 * in snake_case or camelCase. A config carrying `enabled` is read as a JwtAuthConfig.
 */
/**
 * A JwtConfig (server) or JwtAuthConfig (route) record, snake_case or camelCase, plus `onReject` (lib/http/reject.ts).
 * Written by hand it names its key (`secret` or `public_key`, or `enabled: false`): without one it verifies nothing, a
 * compile error here as it is a ConfigError at start-up. An already-parsed record (what `JwtConfig.parse` returns) is
 * taken as it is.
 */
export type JwtAuthOptions = (JwtConfigInput | (JwtAuthConfigInput & ({ enabled: false } | JwtKeyInput)) | Readonly<JwtConfig> | Readonly<JwtAuthConfig>) & OnRejectOption & {
  /**
   * Where a token refused by `claims` is explained (a pino logger, or any `{ warn(obj, msg) }`).
   * Default: a pino logger at KEEL_LOG_LEVEL; an App passes its own.
   */
  logger?: ClaimsLogger;
};
import { claimsCheck, type ClaimsLogger } from './claims-schema.js';
export { CLAIMS_MISMATCH_MESSAGE, type ClaimsLogger } from './claims-schema.js';
import type { JwtConfigInput, JwtAuthConfigInput, JwtKeyInput } from '../../lib/records/index.js';

export { JWT_INVALID_TITLE, JWT_HEADER_FORMAT_TITLE, JWT_MALFORMED_TITLE, JWT_MISSING_TITLE } from './titles.js';

interface Failure {
  readonly problem: ProblemDetails;
  readonly headers: Record<string, string>;
  /** express-jwt's code for the same failure (carried by the UnauthorizedError under `onReject`). */
  readonly code: ExpressJwtErrorCode;
  /** jsonwebtoken's error name, express-jwt's `err.inner.name`. */
  readonly innerName?: string;
}

/** A request without usable Bearer credentials: RFC 6750 §3.1 says no error code then. */
function challengeOnly(title: string, detail: string, code: ExpressJwtErrorCode): Failure {
  return Object.freeze({
    problem: Object.freeze(problem(401, detail, { title, type: UNAUTHORIZED_TYPE })),
    headers: Object.freeze({ 'WWW-Authenticate': 'Bearer' }),
    code,
  });
}

/** A token was presented and rejected: `error="invalid_token"` plus a description (RFC 6750 §3, §3.1). */
function invalidToken(detail: string, title = JWT_INVALID_TITLE, innerName = 'JsonWebTokenError'): Failure {
  return {
    problem: problem(401, detail, { title, type: UNAUTHORIZED_TYPE }),
    headers: { 'WWW-Authenticate': invalidTokenChallenge(detail) },
    code: 'invalid_token',
    innerName,
  };
}

const MISSING = challengeOnly(JWT_MISSING_TITLE, "Expected 'Authorization: Bearer <token>'", 'credentials_required');
const NOT_BEARER = challengeOnly(JWT_HEADER_FORMAT_TITLE, "Authorization header must use Bearer scheme: 'Bearer <token>'", 'credentials_bad_scheme');
const NO_TOKEN = challengeOnly(JWT_HEADER_FORMAT_TITLE, "Authorization header must use Bearer scheme: 'Bearer <token>'", 'credentials_bad_format');

/** The express-jwt-shaped error for a failure (only built when it is handed on). */
function unauthorizedError(failure: Failure): UnauthorizedError {
  const { type, title, detail } = failure.problem;
  return new UnauthorizedError(failure.code, detail ?? title, { type, title, headers: { ...failure.headers }, innerName: failure.innerName });
}

/** RFC 6750 §2.1 b64token; anything else cannot be a compact JWS. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
/** One base64url segment (RFC 7515 §2: no padding). */
const BASE64URL = /^[A-Za-z0-9_-]*$/;
function isBase64Url(segment: string): boolean {
  return BASE64URL.test(segment) && segment.length % 4 !== 1;
}

/** jose, for the asymmetric algorithms: loaded by the first factory that needs it. */
const jose = lazyRequire<typeof Jose>('jose');

/** Read a jose verification error (the asymmetric algorithms). */
function joseFailureReason(err: unknown): FailureReason {
  if (err instanceof jose().errors.JWTExpired) return { kind: 'expired' };
  if (err instanceof jose().errors.JWTClaimValidationFailed) return { kind: 'claim', claim: err.claim, missing: err.reason === 'missing' };
  if (err instanceof jose().errors.JOSEAlgNotAllowed) return { kind: 'algorithm' };
  if (err instanceof jose().errors.JWSSignatureVerificationFailed) return { kind: 'signature' };
  if (err instanceof jose().errors.JWSInvalid || err instanceof jose().errors.JWTInvalid) return { kind: 'malformed' };
  // JOSENotSupported (e.g. an unknown "crit" header) and anything unexpected.
  return { kind: 'unverifiable' };
}

/** What the client is told about a refused token; nothing internal is echoed. */
function describeFailure(reason: FailureReason, algorithm: string, issuer: string | null): Failure {
  switch (reason.kind) {
    case 'expired':
      return invalidToken('Token has expired', JWT_INVALID_TITLE, 'TokenExpiredError');
    case 'algorithm':
      return invalidToken(`Token algorithm is not allowed, expected '${algorithm}'`);
    case 'signature':
      return invalidToken('Token signature is invalid');
    case 'malformed':
      // The reference's words for a token jsonwebtoken cannot read (ErrorKind::InvalidToken).
      return invalidToken('Token is invalid');
    case 'unverifiable':
      // Fail closed, say little.
      return invalidToken('Token could not be verified');
    case 'claim':
      switch (reason.claim) {
        case 'nbf':
          return invalidToken('JWT not valid yet, not before claim is in the future', JWT_INVALID_TITLE, 'NotBeforeError');
        case 'aud':
          return invalidToken(reason.missing ? 'Token audience is missing' : 'Token audience is invalid');
        case 'iss':
          return invalidToken(`Token issuer is ${reason.missing ? 'missing' : 'invalid'}, expected '${issuer}'`);
        default:
          return invalidToken(`Token claim '${reason.claim}' is invalid`);
      }
  }
}

function parseOptions(options: JwtAuthOptions): { record: 'JwtConfig' | 'JwtAuthConfig'; config: Readonly<JwtAuthConfig> } {
  if (typeof options === 'object' && options !== null && 'enabled' in options) {
    const config = JwtAuthConfig.parse(options, 'JwtAuthConfig');
    // The per-route record leaves key material to the factory (spec); an enabled route must have it.
    if (config.enabled) checkJwtKeys('JwtAuthConfig', config, 'JwtAuthConfig');
    return { record: 'JwtAuthConfig', config };
  }
  return { record: 'JwtConfig', config: { enabled: true, ...JwtConfig.parse(options, 'JwtConfig') } };
}

/**
 * Verify `Authorization: Bearer <JWT>` and put the verified claims on `req.auth`.
 *
 * Accepts a server JwtConfig or a per-route JwtAuthConfig. Bad configuration throws a ConfigError
 * here, never at request time: a missing or placeholder secret, an HMAC secret shorter than the hash
 * (RFC 7518 §3.2), an unreadable public key or one of the wrong type or size for `algorithm`.
 * `enabled: false` returns a pass-through.
 *
 * Rejections are 401 `application/problem+json` with `WWW-Authenticate: Bearer` (RFC 6750 §3), plus
 * `error="invalid_token"` and `error_description` when a token was presented. Title and `detail` are
 * the reference implementation's words: "Missing or invalid Authorization header" (no header), "Invalid
 * Authorization header format" (not Bearer), "Malformed JWT token" (not three parts), otherwise "JWT
 * validation failed" with "Token signature is invalid", "Token has expired", "JWT not valid yet, not
 * before claim is in the future", "Token audience is invalid", "Token issuer is invalid, expected '…'",
 * "Token is invalid" (unreadable); a wrong algorithm names the expected one.
 *
 * @example
 * import express from 'express';
 * import { jwtAuth } from 'keel/middleware/jwt-auth';
 *
 * const app = express();
 * app.use(jwtAuth({ secret: process.env.JWT_SECRET!, issuer: 'https://auth.example.com', audience: ['https://api.example.com'] }));
 * app.get('/me', (req, res) => res.json({ sub: req.auth?.sub })); // req.auth is typed by keel's declarations
 *
 * express-jwt's options (`algorithms`, `credentialsRequired`, `getToken`, `isRevoked`, …) select
 * express-jwt 8's behaviour instead, as {@link expressjwt} documents: refusals go to `next(err)` with
 * jsonwebtoken's messages unless `onReject` says otherwise. Every middleware has express-jwt's
 * `.unless({ path, method, ext, custom })`.
 *
 * With `onReject: 'next'` a refusal goes to `next(err)` as an {@link UnauthorizedError}: an HttpError
 * (problem members, `WWW-Authenticate` in `headers`) with express-jwt's `name: 'UnauthorizedError'`,
 * `code` (`credentials_required`, `credentials_bad_scheme`, `credentials_bad_format`,
 * `invalid_token`), `status: 401` and `inner`, so express-jwt error handlers keep working.
 */
export function jwtAuth(options: JwtAuthOptions | JwtPackageOptions): JwtMiddleware {
  const o = options as Record<string, unknown>;
  const record = typeof options === 'object' && options !== null && 'enabled' in options ? 'JwtAuthConfig' : 'JwtConfig';
  const { onReject, rest } = takeOnReject(options, record);
  if (typeof rest === 'object' && rest !== null && isPackageStyle(rest)) {
    // express-jwt hands every refusal to next(err); so does keel with its options, unless told otherwise.
    const explicit = typeof o === 'object' && o !== null && ('onReject' in o || 'on_reject' in o) && (o.onReject ?? o.on_reject) !== undefined;
    return expressJwtMiddleware(fromExpressJwt(rest as Record<string, unknown>), rejecter(explicit ? onReject : 'next'));
  }
  return withUnless(verifier(rest as JwtAuthOptions, rejecter(onReject)));
}

/**
 * express-jwt's factory under its own name, for a one-line import swap (`import { expressjwt } from
 * 'keel/middleware/jwt-auth'`): always reads express-jwt's options (so `{ secret }` without `algorithms`
 * throws, as express-jwt does), delivers refusals to `next(err)` as UnauthorizedError, has `.unless()`.
 * keel's own rules still hold (docs/migrating-from-express.md): one algorithm, HS secrets of at least
 * 32 / 48 / 64 bytes.
 *
 * @example
 * import { expressjwt, UnauthorizedError } from 'keel/middleware/jwt-auth';
 *
 * app.use(expressjwt({ secret: process.env.JWT_SECRET!, algorithms: ['HS256'] }).unless({ path: ['/login'] }));
 * app.use((err, req, res, next) => (err instanceof UnauthorizedError ? res.status(err.status).json({ error: err.code }) : next(err)));
 */
export function expressjwt(options: JwtPackageOptions & { onReject?: OnRejectOption['onReject'] }): JwtMiddleware {
  const o = (typeof options === 'object' && options !== null ? options : undefined) as Record<string, unknown> | undefined;
  const { onReject, rest } = o && 'onReject' in o ? takeOnReject(o, 'JwtConfig') : { onReject: 'next' as const, rest: o };
  return expressJwtMiddleware(fromExpressJwt(rest), rejecter(onReject));
}

/** keel's record-style verifier (JwtConfig / JwtAuthConfig). */
function verifier(options: JwtAuthOptions, rejection: Rejecter): Middleware {
  const { logger, ...recordOptions } = options as JwtAuthOptions & Record<string, unknown>;
  const { record, config } = parseOptions(recordOptions as JwtAuthOptions);
  if (!config.enabled) {
    return function jwtAuthDisabled(_req: KeelRequest, _res: ServerResponse, next: NextFunction): void {
      next();
    };
  }
  const { algorithm, issuer, audience, leeway } = config;
  const key = importVerificationKey(record, record, algorithm, config.secret, config.public_key);
  const verifyHmac = key.type === 'secret'
    ? hmacVerifier(record, { algorithm: algorithm as 'HS256' | 'HS384' | 'HS512', secret: key.export(), issuer, audience, leeway })
    : null;
  // Load jose now (start-up), not on the first request, for the asymmetric algorithms.
  if (!verifyHmac) jose();
  const verifyOptions: JWTVerifyOptions = Object.freeze({
    algorithms: [algorithm],
    clockTolerance: leeway,
    ...(issuer !== null ? { issuer } : {}),
    ...(audience !== null ? { audience: [...audience] } : {}),
  });
  const wrongAlgorithm = invalidToken(`Token algorithm is not allowed, expected '${algorithm}'`);
  const checkClaims = config.enabled ? claimsCheck(record, config.claims, logger) : null;
  // Claims that do not match `claims` get the answer of an unreadable token: the reason is logged only.
  const claimsRefused = invalidToken('Token is invalid');

  /** A protected header that is not JSON, or names another algorithm; null when it is acceptable. */
  function headerFailure(token: string): Failure | null {
    let alg: unknown;
    try {
      alg = jose().decodeProtectedHeader(token).alg;
    } catch {
      // The reference (jsonwebtoken) fails a header that is not base64url as a signature error, and
      // one that is not JSON as an invalid token.
      return invalidToken(isBase64Url(token.slice(0, token.indexOf('.'))) ? 'Token is invalid' : 'Token signature is invalid');
    }
    return alg === algorithm ? null : wrongAlgorithm;
  }

  function reject(req: KeelRequest, res: ServerResponse, next: NextFunction, failure: Failure): void {
    if (rejection.mode === 'respond') return sendProblem(res, failure.problem, failure.headers);
    rejection.refuse(req, res, next, failure.problem, failure.headers, () => unauthorizedError(failure));
  }

  return function jwtAuthMiddleware(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    const header = req.headers.authorization;
    if (header === undefined || header.trim() === '') return reject(req, res, next, MISSING);
    const space = header.indexOf(' ');
    // The scheme is case-insensitive (RFC 9110 §11.1); the token follows one or more spaces.
    if (space < 0) return reject(req, res, next, header.toLowerCase() === 'bearer' ? NO_TOKEN : NOT_BEARER);
    if (header.slice(0, space).toLowerCase() !== 'bearer') return reject(req, res, next, NOT_BEARER);
    const token = header.slice(space + 1).trim();
    if (token === '') return reject(req, res, next, NO_TOKEN);
    const parts = token.split('.').length;
    if (parts !== 3) {
      return reject(req, res, next, invalidToken(`Malformed JWT token: expected 3 parts separated by dots, found ${parts}`, JWT_MALFORMED_TITLE));
    }
    // Not base64url: the reference's jsonwebtoken reports it as a base64 error, "Token signature is invalid".
    if (!B64TOKEN.test(token)) return reject(req, res, next, invalidToken('Token signature is invalid'));
    if (verifyHmac !== null) {
      let claims: Record<string, unknown>;
      try {
        // fast-jwt refuses any algorithm but the configured one before it computes an HMAC (RFC
        // 8725 §3.1), so a valid token needs no header decoding of its own here.
        claims = verifyHmac(token);
      } catch (err) {
        // A refused token: the same checks, in the same order, as for the asymmetric algorithms.
        return reject(req, res, next, headerFailure(token) ?? describeFailure(hmacFailureReason(err), algorithm, issuer));
      }
      if (checkClaims !== null && !checkClaims(claims, req.requestId)) return reject(req, res, next, claimsRefused);
      // Outside the try: an error further down the chain is not a token failure.
      req.auth = claims;
      return next();
    }
    // Checked before the signature so that `none` and HS/RS confusion never reach a verifier.
    const failure = headerFailure(token);
    if (failure !== null) return reject(req, res, next, failure);
    jose().jwtVerify(token, key, verifyOptions)
      .then(
        ({ payload }) => {
          if (checkClaims !== null && !checkClaims(payload as Record<string, unknown>, req.requestId)) return reject(req, res, next, claimsRefused);
          req.auth = payload as Record<string, unknown>;
          next();
        },
        (err: unknown) => reject(req, res, next, describeFailure(joseFailureReason(err), algorithm, issuer)),
      )
      // An error thrown further down the chain must not become an unhandled rejection (which ends
      // the process); it is answered as a 500 without internals.
      .catch((err: unknown) => sendProblem(res, err));
  };
}
