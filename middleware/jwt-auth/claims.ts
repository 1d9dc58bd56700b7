/**
 * The registered claims checked the way express-jwt's verifier (jsonwebtoken 9) checks them, in its
 * order (nbf, exp, aud, iss) and with its words, so that express-jwt users' error handlers and logs
 * read the same `err.message` and `err.inner.name` ('jwt expired' / TokenExpiredError, …).
 *
 * Only reached after the signature is verified: nothing here is security-relevant on its own.
 */

/** jsonwebtoken's error for a refused token: `name` is its class name, plus `expiredAt` / `date`. */
export interface JwtInnerError extends Error {
  name: 'JsonWebTokenError' | 'TokenExpiredError' | 'NotBeforeError';
  expiredAt?: Date;
  date?: Date;
}

/** jsonwebtoken's `JsonWebTokenError` / `TokenExpiredError` / `NotBeforeError`, as plain Errors. */
export function innerError(message: string, name: JwtInnerError['name'] = 'JsonWebTokenError', extra: { expiredAt?: Date; date?: Date } = {}): JwtInnerError {
  const err = new Error(message) as JwtInnerError;
  err.name = name;
  Object.assign(err, extra);
  return err;
}

/** What the claims are checked against (express-jwt's options, already validated). */
export interface ClaimRules {
  /** Any one must match a value of the token's `aud` (a RegExp, without g / y, tests it, as jsonwebtoken does). */
  readonly audience: readonly (string | RegExp)[] | null;
  /** The token's `iss` must be one of these. */
  readonly issuer: readonly string[] | null;
  /** Seconds of clock skew allowed for `nbf` and `exp`. */
  readonly clockTolerance: number;
}

/**
 * The first failing claim as jsonwebtoken reports it, or null. A non-object payload (a JWS over a plain
 * string, which express-jwt accepts) has no claims: it passes unless an audience or issuer is required.
 * `skipExpiry` is the second pass after an `onExpired` handler let an expired token through: the
 * audience and issuer are still checked (jsonwebtoken stops at `exp`, so express-jwt never checks them
 * for such a token; keel does, so that onExpired cannot let in a token meant for another service).
 */
export function claimsFailure(payload: Record<string, unknown> | string, rules: ClaimRules, skipExpiry = false): JwtInnerError | null {
  const claims: Record<string, unknown> = typeof payload === 'string' ? {} : payload;
  const now = Math.floor(Date.now() / 1000);
  const { nbf, exp, iat, aud, iss } = claims;
  // RFC 7519 §4.1.6: iat is a NumericDate (jsonwebtoken only looks at it for maxAge; keel always does).
  if (iat !== undefined && typeof iat !== 'number') return innerError('invalid iat value');
  if (nbf !== undefined) {
    if (typeof nbf !== 'number') return innerError('invalid nbf value');
    if (nbf > now + rules.clockTolerance) return innerError('jwt not active', 'NotBeforeError', { date: new Date(nbf * 1000) });
  }
  if (exp !== undefined && !skipExpiry) {
    if (typeof exp !== 'number') return innerError('invalid exp value');
    if (now >= exp + rules.clockTolerance) return innerError('jwt expired', 'TokenExpiredError', { expiredAt: new Date(exp * 1000) });
  }
  if (rules.audience !== null) {
    const targets = Array.isArray(aud) ? (aud as unknown[]) : [aud];
    const match = targets.some((t) => rules.audience!.some((a) => (typeof a === 'string' ? a === t : typeof t === 'string' && a.test(t))));
    if (!match) return innerError(`jwt audience invalid. expected: ${rules.audience.map(String).join(' or ')}`);
  }
  if (rules.issuer !== null && !rules.issuer.includes(iss as string)) {
    return innerError(`jwt issuer invalid. expected: ${rules.issuer.join(',')}`);
  }
  return null;
}
