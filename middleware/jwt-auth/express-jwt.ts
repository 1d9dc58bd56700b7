/**
 * jwtAuth with express-jwt's options: express-jwt 8's request handling (where the token is read, when
 * a request passes unauthenticated, secret callbacks, isRevoked, onExpired, requestProperty, errors
 * through `next(err)` as UnauthorizedError with jsonwebtoken's messages) on keel's verifiers: fast-jwt
 * for HS* (hmac.ts), jose for the rest and for a JWS whose payload is not a JSON object.
 *
 * What keel keeps from its own rules (docs/migrating-from-express.md): one algorithm per key and an
 * HS secret at least as long as the hash (RFC 8725 §3.1, RFC 7518 §3.2), checked before any signature
 * work; the `alg` of every token compared with the configured one before the key is even looked up.
 */
import type { ServerResponse } from 'node:http';
import type { KeyObject } from 'node:crypto';
import type * as Jose from 'jose';
import type * as FastJwt from 'fast-jwt';
import { UnauthorizedError, type ExpressJwtErrorCode } from '../../lib/http/errors.js';
import { lazyRequire } from '../../lib/http/lazy-require.js';
import type { Rejecter } from '../../lib/http/reject.js';
import type { JwtAlgorithm } from '../../lib/records/index.js';
import type { KeelRequest, Middleware, NextFunction } from '../../lib/http/request.js';
import { claimsFailure, innerError, type JwtInnerError } from './claims.js';
import { WHERE, type DecodedJwt, type TranslatedJwt } from './familiar.js';
import { importPackageKey } from './keys.js';
import { JWT_HEADER_FORMAT_TITLE, JWT_INVALID_TITLE, JWT_MISSING_TITLE, UNAUTHORIZED_TYPE, invalidTokenChallenge } from './titles.js';
import { withUnless, type JwtMiddleware } from './unless.js';

export { withUnless, type JwtMiddleware } from './unless.js';

const jose = lazyRequire<typeof Jose>('jose');
const fastJwt = lazyRequire<typeof FastJwt>('fast-jwt');

/** express-jwt's UnauthorizedError for a refusal, plus the problem members and RFC 6750 challenge keel adds. */
function refusal(code: ExpressJwtErrorCode, inner: Error | { message: string }): UnauthorizedError {
  const presented = code === 'invalid_token' || code === 'revoked_token';
  const title = code === 'credentials_required' ? JWT_MISSING_TITLE : presented ? JWT_INVALID_TITLE : JWT_HEADER_FORMAT_TITLE;
  const challenge = presented ? invalidTokenChallenge(inner.message) : 'Bearer';
  return new UnauthorizedError(code, inner, { title, type: UNAUTHORIZED_TYPE, headers: { 'WWW-Authenticate': challenge } });
}
const invalid = (message: string): UnauthorizedError => refusal('invalid_token', innerError(message));
/** express-jwt's words for an Authorization header it cannot read. */
const FORMAT = 'Format is Authorization: Bearer [token]';

/** One base64url segment (RFC 7515 §2: no padding, no other characters). */
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * jsonwebtoken's `decode(token, { complete: true })`, or its verify's error for a token it cannot read.
 * A payload that is not a JSON object stays a string, as jsonwebtoken leaves it (unless the header says
 * `typ: JWT`, when it must be JSON).
 */
export function decodeToken(token: string): DecodedJwt | JwtInnerError {
  const parts = token.split('.');
  if (parts.length !== 3) return innerError('jwt malformed');
  const [h, p, signature] = parts as [string, string, string];
  if (h === '' || p === '' || !BASE64URL.test(h) || !BASE64URL.test(p) || !BASE64URL.test(signature)) return innerError('invalid token');
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
  } catch {
    return innerError('invalid token');
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) return innerError('invalid token');
  const text = Buffer.from(p, 'base64url').toString('utf8');
  let payload: Record<string, unknown> | string = text;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) payload = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: a JWS over plain text, which express-jwt accepts.
  }
  if (typeof payload === 'string' && (header as Record<string, unknown>).typ === 'JWT') return innerError('invalid token');
  return { header: header as Record<string, unknown>, payload, signature };
}

/** Checks one token's signature with one key; resolves to an error when it does not verify. */
type SignatureCheck = (token: string, payloadIsJson: boolean) => JwtInnerError | null | Promise<JwtInnerError | null>;

/** jose's verdict on a compact JWS, in jsonwebtoken's words. */
async function joseCheck(token: string, key: KeyObject, algorithm: JwtAlgorithm): Promise<JwtInnerError | null> {
  try {
    await jose().compactVerify(token, key, { algorithms: [algorithm] });
    return null;
  } catch (err) {
    if (err instanceof jose().errors.JWSSignatureVerificationFailed) return innerError('invalid signature');
    if (err instanceof jose().errors.JOSEAlgNotAllowed) return innerError('invalid algorithm');
    // JWSInvalid, an unknown `crit` extension (RFC 7515 §4.1.11, which jsonwebtoken ignores), the rest.
    return innerError('invalid token');
  }
}

/** The signature check for a key: fast-jwt (synchronous) for HS* over a JSON payload, jose otherwise. */
function signatureCheck(algorithm: JwtAlgorithm, key: KeyObject): SignatureCheck {
  if (!algorithm.startsWith('HS')) return (token) => joseCheck(token, key, algorithm);
  const { createVerifier, TokenError } = fastJwt();
  // Claims are checked afterwards, in jsonwebtoken's order and words (claims.ts).
  const verify = createVerifier({ key: key.export(), algorithms: [algorithm], ignoreExpiration: true, ignoreNotBefore: true, cache: false });
  return (token, payloadIsJson) => {
    // fast-jwt only reads JSON-object payloads; a JWS over text goes to jose.
    if (!payloadIsJson) return joseCheck(token, key, algorithm);
    try {
      verify(token);
      return null;
    } catch (err) {
      const code = err instanceof TokenError ? err.code : undefined;
      if (code === TokenError.codes.invalidSignature || code === TokenError.codes.missingSignature) return innerError('invalid signature');
      if (code === TokenError.codes.invalidAlgorithm) return innerError('invalid algorithm');
      return innerError('invalid token');
    }
  };
}

/** How many keys returned by a `secret` callback stay imported (jwks-rsa returns the same PEM for every token of a `kid`). */
export const MAX_CALLBACK_KEYS = 100;

/**
 * The signature check for each key a `secret` callback returns, imported and checked once per key
 * (createPublicKey and the key checks cost more than the verification). A key that fails keel's checks
 * throws every time: errors are not cached.
 */
function callbackChecks(algorithm: JwtAlgorithm): (secret: unknown) => SignatureCheck {
  const byValue = new Map<string, SignatureCheck>();
  const byObject = new WeakMap<object, SignatureCheck>();
  const make = (secret: unknown) => signatureCheck(algorithm, importPackageKey(`${WHERE}.secret(req, token)`, algorithm, secret));
  return (secret) => {
    if (typeof secret === 'object' && secret !== null && !(secret instanceof Uint8Array)) {
      let check = byObject.get(secret);
      if (check === undefined) byObject.set(secret, (check = make(secret)));
      return check;
    }
    const id = typeof secret === 'string' ? `s${secret}` : secret instanceof Uint8Array ? `b${Buffer.from(secret).toString('base64')}` : undefined;
    if (id === undefined) return make(secret);
    let check = byValue.get(id);
    if (check === undefined) {
      check = make(secret);
      // Oldest first out: a bounded set of tenants' keys, not an unbounded cache an attacker could grow.
      if (byValue.size >= MAX_CALLBACK_KEYS) byValue.delete(byValue.keys().next().value!);
      byValue.set(id, check);
    }
    return check;
  };
}

/** express-jwt's `set`: write `value` at a dotted path, creating objects (arrays for numeric keys). */
function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  if (typeof target !== 'object' || target === null) return;
  let at = target;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!;
    const next = at[key];
    if (Object(next) !== next) at[key] = /^\d+$/.test(path[i + 1]!) ? [] : {};
    at = at[key] as Record<string, unknown>;
  }
  at[path[path.length - 1]!] = value;
}

/** Whether a CORS preflight announces an Authorization header (express-jwt lets it through). */
function authorizationPreflight(req: KeelRequest): boolean {
  if (req.method !== 'OPTIONS' || !('access-control-request-headers' in req.headers)) return false;
  return String(req.headers['access-control-request-headers']).split(',').some((h) => h.trim().toLowerCase() === 'authorization');
}

/**
 * The middleware for translated express-jwt options. Refusals are UnauthorizedErrors handed to
 * `rejection` (`next(err)` unless the caller chose otherwise); an error thrown by a callback (getToken,
 * secret, isRevoked, onExpired) reaches `next(err)` as it is, as in express-jwt.
 */
export function expressJwtMiddleware(t: TranslatedJwt, rejection: Rejecter): JwtMiddleware {
  const { algorithm, rules, credentialsRequired, requestProperty, getToken, isRevoked, onExpired, getKey } = t;
  const staticCheck = t.key === null ? null : signatureCheck(algorithm, t.key);
  const checkFor = getKey === null ? null : callbackChecks(algorithm);
  // Load the verifier now (start-up), not on the first request. For HS*, jose is only needed for a
  // JWS over text, and loads on the first such token.
  if (algorithm.startsWith('HS')) fastJwt();
  else jose();

  /** Resolves to true when claims were set, false when the request passes without them; throws a refusal. */
  async function authenticate(req: KeelRequest): Promise<boolean> {
    if (authorizationPreflight(req)) return false;
    const headers = req.headers as Record<string, string | string[] | undefined> | undefined;
    // AWS Lambda adapters keep the header's case (express-jwt reads `Authorization` first).
    const name = headers && 'Authorization' in headers ? 'Authorization' : 'authorization';
    let token: unknown;
    if (getToken) token = await getToken(req);
    else if (headers?.[name]) {
      const parts = String(headers[name]).split(' ');
      if (parts.length !== 2) throw refusal('credentials_bad_format', { message: FORMAT });
      if (!/^Bearer$/i.test(parts[0]!)) {
        if (credentialsRequired) throw refusal('credentials_bad_scheme', { message: FORMAT });
        return false;
      }
      token = parts[1];
    }
    if (!token) {
      if (credentialsRequired) throw refusal('credentials_required', { message: 'No authorization token was found' });
      return false;
    }
    const text = String(token);
    const decoded = decodeToken(text);
    if (decoded instanceof Error) throw refusal('invalid_token', decoded);
    // Before any key is looked up: RFC 8725 §3.1 (no `none`, no algorithm the key was not meant for).
    if (decoded.signature === '') throw invalid('jwt signature is required');
    if (decoded.header.alg !== algorithm) throw invalid('invalid algorithm');

    let check = staticCheck;
    if (check === null) {
      const secret = await getKey!(req, decoded);
      if (!secret) throw invalid('secret or public key must be provided');
      // A key that breaks keel's rules (an HS secret under the hash length, …) is a ConfigError: the
      // server is misconfigured, so it goes to next(err) as a 500, never as the client's fault.
      check = checkFor!(secret);
    }
    const bad = await check(text, typeof decoded.payload !== 'string');
    if (bad !== null) throw refusal('invalid_token', bad);

    const failed = claimsFailure(decoded.payload, rules);
    if (failed !== null) {
      const err = refusal('invalid_token', failed);
      if (failed.name !== 'TokenExpiredError' || !onExpired) throw err;
      await onExpired(req, err);
      // onExpired let it through: the other claims still have to hold.
      const other = claimsFailure(decoded.payload, rules, true);
      if (other !== null) throw refusal('invalid_token', other);
    }
    if (isRevoked && (await isRevoked(req, decoded))) throw refusal('revoked_token', { message: 'The token has been revoked.' });
    setPath(req as unknown as Record<string, unknown>, requestProperty, decoded.payload);
    return true;
  }

  const middleware: Middleware = function jwtAuthMiddleware(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    authenticate(req)
      .then(
        () => next(),
        (err: unknown) => (err instanceof UnauthorizedError ? rejection.refuse(req, res, next, err) : rejection.fail(req, res, next, err)),
      )
      // Something after this middleware threw inside next(): rethrown outside the promise, where
      // express-jwt's setImmediate(next) would have thrown it, rather than lost as a rejection.
      .catch((err: unknown) => setImmediate(() => { throw err; }));
  };
  return withUnless(middleware);
}
