/**
 * Verification key material for jwtAuth, imported synchronously with node:crypto so that a bad key is
 * a ConfigError at start-up rather than a 401 (or worse, a 500) on the first request.
 */
import { createPublicKey, createSecretKey, KeyObject } from 'node:crypto';
import { ConfigError } from '../../lib/http/errors.js';
import type { JwtAlgorithm } from '../../lib/records/index.js';

/** RFC 7518 §3.2: an HMAC key must be at least as long as the hash output. */
export const MIN_HMAC_SECRET_BYTES: Readonly<Record<string, number>> = Object.freeze({ HS256: 32, HS384: 48, HS512: 64 });

/** RFC 7518 §3.3 asks for 2048-bit RSA keys at least; jose refuses smaller ones at verify time. */
export const MIN_RSA_MODULUS_BITS = 2048;

/** RFC 7518 §3.4 / RFC 8037: the curve each EC/OKP algorithm requires (node's curve names). */
const EC_CURVES: Readonly<Record<string, string>> = { ES256: 'prime256v1', ES384: 'secp384r1', ES512: 'secp521r1' };

function configError(record: string, path: string, key: string, message: string, value: unknown): ConfigError {
  return new ConfigError(`Invalid ${record} at ${path}.${key}: ${message}`, { record, path: `${path}.${key}`, key, value });
}

/** The one command keel's messages and docs give for an HMAC secret: 64 random bytes suit HS256, HS384 and HS512. */
export const GENERATE_SECRET = 'openssl rand -base64 64';

/**
 * The KeyObject that verifies `algorithm`: a secret for HS*, a public key (PEM SPKI, PEM X.509
 * certificate or a JWK as JSON text) for every other algorithm. The secret itself never appears in
 * an error message (only its length does), because start-up errors end up in logs.
 */
export function importVerificationKey(
  record: string,
  path: string,
  algorithm: JwtAlgorithm,
  secret: string | Uint8Array | undefined,
  publicKey: string | KeyObject | undefined,
): KeyObject {
  if (algorithm.startsWith('HS')) {
    const bytes = typeof secret === 'string' || secret === undefined ? Buffer.from(secret ?? '', 'utf8') : Buffer.from(secret);
    const min = MIN_HMAC_SECRET_BYTES[algorithm]!;
    if (bytes.length < min) {
      throw configError(record, path, 'secret', `expected a secret of at least ${min} bytes for ${algorithm} (RFC 7518 §3.2), got ${bytes.length} bytes. Generate one with \`${GENERATE_SECRET}\` (64 random bytes: enough for every HS algorithm).`, `<${bytes.length} bytes, redacted>`);
    }
    return createSecretKey(bytes);
  }
  if (publicKey instanceof KeyObject) {
    if (publicKey.type !== 'public') throw configError(record, path, 'public_key', `expected a public key, got a ${publicKey.type} KeyObject.`, '<redacted>');
    return checkPublicKey(record, path, algorithm, publicKey, '<KeyObject>');
  }
  const text = (publicKey ?? '').trim();
  // createPublicKey would quietly derive a public key from a private one; refuse it so that private
  // keys stay out of configuration (and out of the logs that configuration errors end up in).
  if (/PRIVATE KEY-----/.test(text) || /"d"\s*:/.test(text)) {
    throw configError(record, path, 'public_key', 'expected a public key, got private key material.', '<redacted>');
  }
  let key: KeyObject;
  try {
    key = text.startsWith('{')
      ? createPublicKey({ key: JSON.parse(text) as import('node:crypto').JsonWebKey, format: 'jwk' })
      : createPublicKey(text);
  } catch (err) {
    throw configError(record, path, 'public_key', `expected a PEM public key (SPKI or X.509 certificate) or a JWK as JSON for ${algorithm}; it could not be read (${(err as Error).message}).`, publicKey);
  }
  return checkPublicKey(record, path, algorithm, key, publicKey);
}

/** The key's type and size must fit the algorithm (RFC 7518 §3.3-3.4, RFC 8037). */
function checkPublicKey(record: string, path: string, algorithm: JwtAlgorithm, key: KeyObject, publicKey: unknown): KeyObject {
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails ?? {};
  const family = algorithm.slice(0, 2);
  if (family === 'RS' || family === 'PS') {
    const ok = type === 'rsa' || (family === 'PS' && type === 'rsa-pss');
    if (!ok) throw configError(record, path, 'public_key', `expected an RSA public key for ${algorithm}, got a ${type} key.`, publicKey);
    if ((details.modulusLength ?? 0) < MIN_RSA_MODULUS_BITS) {
      throw configError(record, path, 'public_key', `expected an RSA key of at least ${MIN_RSA_MODULUS_BITS} bits for ${algorithm}, got ${details.modulusLength} bits.`, publicKey);
    }
  } else if (family === 'ES') {
    const curve = EC_CURVES[algorithm]!;
    if (type !== 'ec' || details.namedCurve !== curve) {
      throw configError(record, path, 'public_key', `expected an EC ${curve} public key for ${algorithm}, got ${type}${details.namedCurve ? ` ${details.namedCurve}` : ''}.`, publicKey);
    }
  } else if (type !== 'ed25519' && type !== 'ed448') {
    throw configError(record, path, 'public_key', `expected an Ed25519 or Ed448 public key for EdDSA, got a ${type} key.`, publicKey);
  }
  return key;
}

/**
 * express-jwt's `secret` (a string, a Buffer or a KeyObject, as jsonwebtoken takes it) as the key for
 * `algorithm`, with keel's checks: a secret for HS* (at least the hash length, RFC 7518 §3.2), a public
 * key for the others. A PEM key given as an HS* secret is refused as jsonwebtoken 9 refuses it: an
 * operator who pastes the public key there has made RS/HS key confusion possible (RFC 8725 §2.1).
 */
export function importPackageKey(where: string, algorithm: JwtAlgorithm, secret: unknown): KeyObject {
  const hs = algorithm.startsWith('HS');
  const bad = (message: string): never => { throw configError('JwtConfig', where, 'secret', message, '<redacted>'); };
  if (secret instanceof KeyObject) {
    if (hs !== (secret.type === 'secret')) bad(`expected a ${hs ? 'secret' : 'public'} key for ${algorithm}, got a ${secret.type} KeyObject.`);
    return hs ? importVerificationKey('JwtConfig', where, algorithm, secret.export(), undefined) : importVerificationKey('JwtConfig', where, algorithm, undefined, secret);
  }
  if (typeof secret !== 'string' && !(secret instanceof Uint8Array)) {
    return bad(`expected a string, a Buffer or a KeyObject for ${algorithm}, got ${secret === null ? 'null' : typeof secret}.`);
  }
  const text = typeof secret === 'string' ? secret : Buffer.from(secret).toString('utf8');
  if (hs) {
    if (/-----BEGIN [A-Z ]*KEY-----/.test(text)) bad(`expected a symmetric secret for ${algorithm}, got a PEM key (asymmetric keys verify RS*, PS*, ES* and EdDSA).`);
    return importVerificationKey('JwtConfig', where, algorithm, secret, undefined);
  }
  return importVerificationKey('JwtConfig', where, algorithm, undefined, text);
}
