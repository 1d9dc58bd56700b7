/**
 * The words of jwtAuth's refusals, shared by keel's record-style verifier (index.ts) and the
 * express-jwt-style middleware (express-jwt.ts).
 */
import { problemType } from '../../lib/http/errors.js';

/** Problem title for a token that was presented but failed verification (matches the conformance corpus). */
export const JWT_INVALID_TITLE = 'JWT validation failed';
/** Problem title for an Authorization header that is not `Bearer <token>`. */
export const JWT_HEADER_FORMAT_TITLE = 'Invalid Authorization header format';
/** Problem title for a token that is not a compact JWS. */
export const JWT_MALFORMED_TITLE = 'Malformed JWT token';
/** Problem title for a request without an Authorization header (the reference implementation's words). */
export const JWT_MISSING_TITLE = 'Missing or invalid Authorization header';

export const UNAUTHORIZED_TYPE = problemType('KEEL_UNAUTHORIZED');

/** RFC 6750 §3: error_description may only hold %x20-21 / %x23-5B / %x5D-7E. */
export function quoteDescription(text: string): string {
  return text.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '?');
}

/** `WWW-Authenticate` for a presented token that was refused (RFC 6750 §3, §3.1). */
export function invalidTokenChallenge(detail: string): string {
  return `Bearer error="invalid_token", error_description="${quoteDescription(detail)}"`;
}
