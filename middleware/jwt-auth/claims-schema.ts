/**
 * `claims`: a JSON Schema the verified claims must match (issue 29). Compiled once, when the factory
 * runs, so a bad schema is a ConfigError at start-up; a token whose claims do not match is refused
 * like any bad token (the same 401), and only the log says why: the answer must not tell a caller
 * which claim to forge (RFC 6750 §3.1 lets `error_description` stay vague).
 */
import { pino } from 'pino';
import { ConfigError } from '../../lib/http/errors.js';
import { logLevelFromEnv } from '../../lib/ops/log-level.js';
import { compileSchema } from '../../lib/http/validation.js';

/** The part of a pino logger the claims check writes to. */
export interface ClaimsLogger {
  warn(obj: object, msg: string): void;
}

/** The log message of a refused token whose claims do not match `claims`. */
export const CLAIMS_MISMATCH_MESSAGE = 'JWT claims do not match the claims schema';

/** Checks verified claims; returns true when they match, logging the reason otherwise. */
export type ClaimsCheck = (claims: Record<string, unknown>, requestId: string | undefined) => boolean;

/**
 * The check for `claims` (null: none). `logger` defaults to a pino logger at KEEL_LOG_LEVEL; an App
 * passes its own.
 */
export function claimsCheck(record: string, schema: unknown, logger: ClaimsLogger | undefined): ClaimsCheck | null {
  if (schema === null || schema === undefined) return null;
  if (typeof schema !== 'object' || Array.isArray(schema)) {
    throw new ConfigError(`Invalid ${record} at ${record}.claims: expected a JSON Schema object, got ${JSON.stringify(schema)}. Give e.g. { type: 'object', required: ['sub'], properties: { sub: { type: 'string' } } }.`, {
      record, path: `${record}.claims`, key: 'claims', value: schema,
    });
  }
  let validate: ReturnType<typeof compileSchema>;
  try {
    validate = compileSchema(schema as Record<string, unknown>);
  } catch (err) {
    throw new ConfigError(`Invalid ${record} at ${record}.claims: the schema does not compile (${(err as Error).message}). Fix it to be valid JSON Schema.`, {
      record, path: `${record}.claims`, key: 'claims', value: schema,
    });
  }
  const log = logger ?? pino({ level: logLevelFromEnv(), base: { name: 'keel' } });
  return function checkClaims(claims, requestId) {
    if (validate(claims)) return true;
    // Where and what failed, never the claim values themselves (they may be personal data).
    const errors = (validate.errors ?? []).map((e) => ({ at: e.instancePath || '/', keyword: e.keyword, message: e.message }));
    log.warn({ requestId, errors }, CLAIMS_MISMATCH_MESSAGE);
    return false;
  };
}
