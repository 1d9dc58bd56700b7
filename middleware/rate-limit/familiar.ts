/**
 * express-rate-limit's options for keel's rateLimit, translated once at factory time.
 *
 * `rateLimit({ windowMs, limit })` becomes the token bucket `burst: limit, per_second: limit /
 * (windowMs / 1000)`: `limit` requests at once, and the long-run rate is exactly `limit` per window.
 * Tokens come back one at a time (every `windowMs / limit`) rather than all at once when a fixed window
 * ends, so a client can never spend 2 × limit around a window boundary.
 */
import type { ServerResponse } from 'node:http';
import { fail } from '../../lib/records/define.js';
import type { KeelRequest, NextFunction } from '../../lib/request.js';

/** express-rate-limit's defaults, kept for a swap without surprise: 5 requests per minute. */
export const PACKAGE_DEFAULT_WINDOW_MS = 60_000;
export const PACKAGE_DEFAULT_LIMIT = 5;

/** The express-rate-limit options keel accepts (express-rate-limit 7/8 names and meanings). */
export interface RateLimitPackageOptions {
  /** Window length, ms. Default 60000 (express-rate-limit's). */
  windowMs?: number;
  /** Requests per window. Default 5 (express-rate-limit's). */
  limit?: number;
  /** Older name of `limit`. */
  max?: number;
  /** keel sends the draft-7 `RateLimit` / `RateLimit-Policy` headers; `'draft-7'` or false (none). */
  standardHeaders?: 'draft-7' | boolean | 'draft-6' | 'draft-8';
  /** keel never sends `X-RateLimit-*`; only `false` is accepted. */
  legacyHeaders?: boolean;
  /** The client key, as a string or a promise of one. Default: `req.ip`, IPv6 grouped by /56. */
  keyGenerator?: (req: any, res: any) => string | Promise<string>;
  /** true: this request is not counted and not limited. */
  skip?: (req: any, res: any) => boolean | Promise<boolean>;
  /** Answers a limited request instead of keel's 429 problem (after the RateLimit and Retry-After headers are set). */
  handler?: (req: any, res: any, next: NextFunction, options: Readonly<Record<string, unknown>>) => void;
  /** The 429 problem's `detail` (a string; keel answers problem+json, not text). */
  message?: string;
  /** Only 429 (RFC 6585 §4). */
  statusCode?: number;
  /** true: a failing store lets requests through. */
  passOnStoreError?: boolean;
  /** IPv6 prefix length that is one client, or false. Default 56. */
  ipv6Subnet?: number | false;
  /** express-rate-limit's misconfiguration warnings; keel checks at start-up instead, so this is ignored. */
  validate?: unknown;
}

export const PACKAGE_KEYS: readonly string[] = [
  'windowMs', 'limit', 'max', 'standardHeaders', 'legacyHeaders', 'keyGenerator', 'skip', 'handler', 'message',
  'statusCode', 'passOnStoreError', 'ipv6Subnet', 'validate',
];

/** express-rate-limit options keel cannot honour, with what to use instead. */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  store: 'keel stores are token buckets: pass rateLimit(options, { store: new RedisStore({ sendCommand }) })',
  skipFailedRequests: 'keel has no equivalent: every request takes a token when it arrives',
  skipSuccessfulRequests: 'keel has no equivalent: every request takes a token when it arrives',
  requestWasSuccessful: 'keel has no equivalent: every request takes a token when it arrives',
  requestPropertyName: 'keel sets no request property; the RateLimit header carries the quota',
  identifier: "keel sends draft-7 headers, which have no policy name: use standardHeaders: 'draft-7'",
  retryAfter: 'keel computes Retry-After from the bucket (seconds until one request is allowed again)',
  headers: "keel never sends X-RateLimit-* headers: use standardHeaders: 'draft-7'",
};

/** What the translation gives the factory. */
export interface TranslatedRateLimit {
  record: { per_second: number; burst: number; ip_based: true };
  passOnStoreError?: boolean;
  ipv6Subnet?: number | false;
  /** Send RateLimit / RateLimit-Policy headers. */
  headers: boolean;
  keyGenerator?: (req: KeelRequest, res: ServerResponse) => string | Promise<string>;
  skip?: (req: KeelRequest, res: ServerResponse) => boolean | Promise<boolean>;
  /** Replaces the 429 problem. */
  onLimited?: (req: KeelRequest, res: ServerResponse, next: NextFunction) => void;
  /** The 429 problem's detail. */
  detail?: string;
}

const WHERE = 'rateLimit(express-rate-limit options)';

/** Translate express-rate-limit options; a ConfigError names any option keel cannot honour and its keel equivalent. */
export function fromExpressRateLimit(options: Record<string, unknown>): TranslatedRateLimit {
  const bad = (key: string, expected: string, fix?: string): never => fail('RateLimitConfig', WHERE, key, options[key], expected, fix);
  for (const key of Object.keys(options)) {
    if (options[key] === undefined) continue;
    if (key in UNSUPPORTED) bad(key, 'an option keel supports', `${key} is not supported: ${UNSUPPORTED[key]}.`);
    if (!PACKAGE_KEYS.includes(key)) bad(key, `one of the express-rate-limit options keel accepts (${PACKAGE_KEYS.join(', ')})`);
  }
  if (options.limit !== undefined && options.max !== undefined) bad('max', 'only one of limit and max', 'max is the older name of limit.');
  const limitKey = options.max !== undefined ? 'max' : 'limit';
  const limit = options[limitKey] ?? PACKAGE_DEFAULT_LIMIT;
  if (typeof limit === 'function') bad(limitKey, 'a number', 'keel computes the bucket once at start-up: create one rateLimit per policy and choose between them in your own middleware.');
  if (!Number.isInteger(limit) || (limit as number) < 1) bad(limitKey, 'an integer >= 1', 'limit: 0 (block everyone) has no keel equivalent; answer 429 yourself.');
  const windowMs = options.windowMs ?? PACKAGE_DEFAULT_WINDOW_MS;
  if (typeof windowMs !== 'number' || !Number.isFinite(windowMs) || windowMs <= 0) bad('windowMs', 'a number of milliseconds > 0');

  const sh = options.standardHeaders;
  if (sh === true || sh === 'draft-6' || sh === 'draft-8') bad('standardHeaders', "'draft-7' or false", "keel sends the draft-7 RateLimit header (draft-ietf-httpapi-ratelimit-headers-07): write standardHeaders: 'draft-7'.");
  if (sh !== undefined && sh !== false && sh !== 'draft-7') bad('standardHeaders', "'draft-7' or false");
  if (options.legacyHeaders !== undefined && options.legacyHeaders !== false) {
    bad('legacyHeaders', 'false', "keel never sends X-RateLimit-* headers: write legacyHeaders: false and standardHeaders: 'draft-7'.");
  }
  if (options.statusCode !== undefined && options.statusCode !== 429) bad('statusCode', '429', 'keel answers a limited request with 429 Too Many Requests (RFC 6585 §4); use handler to answer differently.');
  if (options.message !== undefined && typeof options.message !== 'string') {
    bad('message', 'a string (the 429 problem\'s detail)', 'keel answers application/problem+json; for any other body use handler: (req, res, next, options) => …');
  }
  for (const key of ['keyGenerator', 'skip', 'handler'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'function') bad(key, 'a function');
  }
  if (options.passOnStoreError !== undefined && typeof options.passOnStoreError !== 'boolean') bad('passOnStoreError', 'true or false');

  const out: TranslatedRateLimit = {
    record: { burst: limit as number, per_second: ((limit as number) * 1000) / (windowMs as number), ip_based: true },
    headers: sh === 'draft-7' || sh === undefined,
  };
  if (options.passOnStoreError !== undefined) out.passOnStoreError = options.passOnStoreError as boolean;
  if (options.ipv6Subnet !== undefined) out.ipv6Subnet = options.ipv6Subnet as number | false;
  if (options.keyGenerator) out.keyGenerator = options.keyGenerator as TranslatedRateLimit['keyGenerator'];
  if (options.skip) out.skip = options.skip as TranslatedRateLimit['skip'];
  if (typeof options.message === 'string') out.detail = options.message;
  if (options.handler) {
    const handler = options.handler as NonNullable<RateLimitPackageOptions['handler']>;
    // What express-rate-limit hands its handler as `options`: the settings in effect.
    const view = Object.freeze({ windowMs, limit, statusCode: 429, message: options.message, standardHeaders: sh ?? 'draft-7', legacyHeaders: false });
    out.onLimited = (req, res, next) => handler(req, res, next, view);
  }
  return out;
}
