/**
 * Helpers the shipped suite's tables are written with (suite/index.ts). Every case they build is a
 * concrete request with its expected answer, in the corpus's case format (handler, request,
 * expected_response), written by keel from the specification and keel's documented answers.
 */
import { createHmac } from 'node:crypto';

export type Json = Record<string, unknown>;

/** One case as a corpus file would hold it, plus where it goes (`keel/<category>/<name>`). */
export interface SuiteCase {
  category: string;
  name: string;
  description: string;
  handler: Json;
  request: Json;
  expected_response: Json;
}

/** A case with no name yet (tables number them). */
export type Draft = Omit<SuiteCase, 'category' | 'name'> & { slug: string };

/** Number a category's drafts `NN_slug` in table order. */
export function numbered(category: string, drafts: readonly Draft[]): SuiteCase[] {
  return drafts.map(({ slug, ...d }, i) => ({ category, name: `${String(i + 1).padStart(2, '0')}_${slug}`, ...d }));
}

/** keel's problem-type base URI: the last segment is the one the corpus compares. */
export const PROBLEM_BASE = 'https://keel.dev/errors/';
export const PROBLEM_JSON = { 'Content-Type': 'application/problem+json' };

/** An RFC 9457 problem answer. */
export function problem(status: number, slug: string, title: string, detail?: string, extra: Json = {}, headers: Json = {}): Json {
  return {
    status_code: status,
    headers: { ...PROBLEM_JSON, ...headers },
    body: { type: PROBLEM_BASE + slug, title, status, ...(detail !== undefined ? { detail } : {}), ...extra },
  };
}

/** A validation error item `{type, loc, msg, input?, ctx?}`. */
export interface Item {
  type: string;
  loc: Array<string | number>;
  msg: string;
  input?: unknown;
  ctx?: Json;
}

/** The 422 answer for the given items (detail counts them). */
export function invalid(...errors: Item[]): Json {
  const n = errors.length;
  return problem(422, 'validation-error', 'Request Validation Failed', `${n} validation error${n === 1 ? '' : 's'} in request`, { errors });
}

/** The plain success answer the suite's handlers give. */
export function ok(body: unknown = { ok: true }, status = 200, headers?: Json): Json {
  return { status_code: status, ...(headers ? { headers } : {}), body };
}

const b64url = (v: string | Buffer) => Buffer.from(v).toString('base64url');

/** The HS256 secret of the suite's JWT routes (32 bytes and more, RFC 7518 §3.2). */
export const JWT_SECRET = 'keel-suite-secret-0123456789abcdef-ABCDEF';
export const JWT_ISSUER = 'https://auth.suite.keel.test';
export const JWT_AUDIENCE = 'suite-api';
/** 2100-01-01T00:00:00Z: tokens that are valid for the life of the suite. */
export const FAR_FUTURE = 4_102_444_800;

/** An HS256 JWT over `claims` (header `{alg, typ}`), signed with `secret`. */
export function jwt(claims: Json, secret = JWT_SECRET, header: Json = { alg: 'HS256', typ: 'JWT' }): string {
  const signing = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  return `${signing}.${createHmac('sha256', secret).update(signing).digest('base64url')}`;
}

/** Claims of a valid token for the suite's JWT routes, with `extra` merged in. */
export function claims(extra: Json = {}): Json {
  return { sub: 'user-7', iat: 1_700_000_000, exp: FAR_FUTURE, iss: JWT_ISSUER, aud: JWT_AUDIENCE, ...extra };
}
