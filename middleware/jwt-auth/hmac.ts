/**
 * HS256/384/512 verification on fast-jwt (the verifier @fastify/jwt uses).
 *
 * jose verifies through WebCrypto, which is asynchronous even for an HMAC: every request paid a
 * thread-pool round trip and a chain of promises for a few microseconds of hashing. fast-jwt's
 * verifier is synchronous for a secret key (node:crypto HMAC, constant-time comparison) and does the
 * same checks: algorithm allow-list, signature, `crit`, `exp` / `nbf` with a clock tolerance,
 * required and allowed `aud` / `iss`. The asymmetric algorithms stay on jose.
 *
 * No verification cache: a cached payload would be one object shared by every request carrying the
 * same token (a handler that adds to `req.auth` would leak into the next request), and for an HMAC
 * the cache key's own hash costs about what the verification saves.
 */
import type * as FastJwt from 'fast-jwt';
import { lazyRequire } from '../../lib/http/lazy-require.js';
import { ConfigError } from '../../lib/http/errors.js';

/** Why a token was refused, independent of the library that refused it (index.ts words the answer). */
export type FailureReason =
  | { readonly kind: 'expired' | 'algorithm' | 'signature' | 'malformed' | 'unverifiable' }
  | { readonly kind: 'claim'; readonly claim: string; readonly missing: boolean };

export interface HmacVerifierOptions {
  readonly algorithm: 'HS256' | 'HS384' | 'HS512';
  /** The secret's bytes (already checked against RFC 7518 §3.2's minimum length). */
  readonly secret: Buffer;
  readonly issuer: string | null;
  readonly audience: readonly string[] | null;
  /** Clock tolerance for `exp` / `nbf`, seconds. */
  readonly leeway: number;
}

/** Verify a compact JWS and return its claims; throws what {@link hmacFailureReason} reads. */
export type HmacVerifier = (token: string) => Record<string, unknown>;

/** fast-jwt, loaded by the first HMAC verifier. */
const fastJwt = lazyRequire<typeof FastJwt>('fast-jwt');
/** fast-jwt names the claim only in its message: "The aud claim is required.", "None of aud claim values are allowed." */
const CLAIM_IN_MESSAGE = /\b([A-Za-z_][\w-]*) claim\b/;

export function hmacVerifier(record: string, o: HmacVerifierOptions): HmacVerifier {
  // jose checks presence in this order (iss, then aud); the answer for a token missing both stays the same.
  const requiredClaims = [...(o.issuer !== null ? ['iss'] : []), ...(o.audience !== null ? ['aud'] : [])];
  let verify: (token: string) => Record<string, unknown>;
  try {
    verify = fastJwt().createVerifier({
      key: o.secret,
      algorithms: [o.algorithm],
      // fast-jwt counts the tolerance in milliseconds.
      clockTolerance: o.leeway * 1000,
      ...(requiredClaims.length > 0 ? { requiredClaims } : {}),
      ...(o.issuer !== null ? { allowedIss: o.issuer } : {}),
      ...(o.audience !== null ? { allowedAud: [...o.audience] } : {}),
      cache: false,
    }) as (token: string) => Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(`Invalid ${record} at ${record}.secret: ${(err as Error).message}`, { record, path: `${record}.secret`, key: 'secret', value: '<redacted>' });
  }
  return function verifyHmac(token: string): Record<string, unknown> {
    const payload = verify(token);
    // RFC 7519 §4.1.6: iat is a NumericDate. jose refuses any other type; fast-jwt only looks at iat for maxAge.
    if (payload.iat !== undefined && typeof payload.iat !== 'number') {
      const { TokenError } = fastJwt();
      throw new TokenError(TokenError.codes.invalidClaimType, 'The iat claim must be a number.');
    }
    return payload;
  };
}

/** Read a fast-jwt error; anything unexpected is `unverifiable` (fail closed, say little). */
export function hmacFailureReason(err: unknown): FailureReason {
  const { TokenError } = fastJwt();
  const { codes } = TokenError;
  if (!(err instanceof TokenError)) return { kind: 'unverifiable' };
  switch (err.code) {
    case codes.expired:
      return { kind: 'expired' };
    case codes.inactive:
      return { kind: 'claim', claim: 'nbf', missing: false };
    case codes.invalidAlgorithm:
      return { kind: 'algorithm' };
    case codes.invalidSignature:
    case codes.missingSignature:
      return { kind: 'signature' };
    case codes.malformed:
    case codes.invalidPayload:
      return { kind: 'malformed' };
    case codes.missingRequiredClaim:
    case codes.invalidClaimType:
    case codes.invalidClaimValue: {
      const claim = CLAIM_IN_MESSAGE.exec(err.message)?.[1];
      return claim === undefined ? { kind: 'unverifiable' } : { kind: 'claim', claim, missing: err.code === codes.missingRequiredClaim };
    }
    default:
      // invalidCritHeader (an extension keel does not understand, RFC 7515 §4.1.11) and the rest.
      return { kind: 'unverifiable' };
  }
}
