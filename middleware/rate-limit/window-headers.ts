/**
 * The rate-limit headers in the forms express-rate-limit writes them, byte for byte, so clients and
 * parsers (ratelimit-header-parser) written against it read keel the same:
 *
 * - legacy: `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (epoch seconds, with a
 *   `Date` header to compare against);
 * - draft-6 (draft-ietf-httpapi-ratelimit-headers-06): `RateLimit-Policy`, `RateLimit-Limit`,
 *   `RateLimit-Remaining`, `RateLimit-Reset`;
 * - draft-7: `RateLimit-Policy: <limit>;w=<s>` and `RateLimit: limit=…, remaining=…, reset=…`;
 * - draft-8: named policies, `RateLimit: "<name>"; r=…; t=…` and
 *   `RateLimit-Policy: "<name>"; q=…; w=…; pk=:<partition key>:`, appended so that several limiters
 *   on one route each add their own (draft-08 §3, §4: both are lists).
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';

/** The IETF draft versions `standardHeaders` accepts. */
export const SUPPORTED_DRAFT_VERSIONS = ['draft-6', 'draft-7', 'draft-8'] as const;
export type DraftHeadersVersion = (typeof SUPPORTED_DRAFT_VERSIONS)[number];

/** What the limiter knows about a client after counting its request (`req.rateLimit`). */
export interface RateLimitInfo {
  limit: number;
  used: number;
  remaining: number;
  resetTime: Date | undefined;
  key: string;
}

/** Seconds until the window ends; the whole window when the store gave no reset time. */
export function resetSeconds(windowMs: number, resetTime: Date | undefined): number {
  if (resetTime) return Math.max(0, Math.ceil((resetTime.getTime() - Date.now()) / 1000));
  return Math.ceil(windowMs / 1000);
}

/**
 * The draft-8 partition key: the client key hashed (sha256, first 12 hex digits) then base64, so the
 * header names the partition without revealing the key (an IP address).
 */
function partitionKey(key: string): string {
  const hex = createHash('sha256').update(key).digest('hex').slice(0, 12);
  return Buffer.from(hex).toString('base64');
}

export function setLegacyHeaders(res: ServerResponse, info: RateLimitInfo): void {
  if (res.headersSent) return;
  res.setHeader('X-RateLimit-Limit', String(info.limit));
  res.setHeader('X-RateLimit-Remaining', String(info.remaining));
  if (info.resetTime instanceof Date) {
    res.setHeader('Date', new Date().toUTCString());
    res.setHeader('X-RateLimit-Reset', String(Math.ceil(info.resetTime.getTime() / 1000)));
  }
}

export function setDraft6Headers(res: ServerResponse, info: RateLimitInfo, windowMs: number): void {
  if (res.headersSent) return;
  res.setHeader('RateLimit-Policy', `${info.limit};w=${Math.ceil(windowMs / 1000)}`);
  res.setHeader('RateLimit-Limit', String(info.limit));
  res.setHeader('RateLimit-Remaining', String(info.remaining));
  res.setHeader('RateLimit-Reset', String(resetSeconds(windowMs, info.resetTime)));
}

export function setDraft7Headers(res: ServerResponse, info: RateLimitInfo, windowMs: number): void {
  if (res.headersSent) return;
  res.setHeader('RateLimit-Policy', `${info.limit};w=${Math.ceil(windowMs / 1000)}`);
  res.setHeader('RateLimit', `limit=${info.limit}, remaining=${info.remaining}, reset=${resetSeconds(windowMs, info.resetTime)}`);
}

export function setDraft8Headers(res: ServerResponse, info: RateLimitInfo, windowMs: number, name: string, key: string): void {
  if (res.headersSent) return;
  append(res, 'RateLimit', `"${name}"; r=${info.remaining}; t=${resetSeconds(windowMs, info.resetTime)}`);
  append(res, 'RateLimit-Policy', `"${name}"; q=${info.limit}; w=${Math.ceil(windowMs / 1000)}; pk=:${partitionKey(key)}:`);
}

/** `Retry-After` in seconds until the window ends (RFC 9110 §10.2.3). */
export function setRetryAfterHeader(res: ServerResponse, info: RateLimitInfo, windowMs: number): void {
  if (res.headersSent) return;
  res.setHeader('Retry-After', String(resetSeconds(windowMs, info.resetTime)));
}

/** res.append without Express: a second value makes the header a list. */
function append(res: ServerResponse, name: string, value: string): void {
  const prev = res.getHeader(name);
  if (prev === undefined) res.setHeader(name, value);
  else res.setHeader(name, Array.isArray(prev) ? [...prev, value] : [String(prev), value]);
}

/**
 * express-rate-limit's default draft-8 policy name: `<limit>-in-<window>`, e.g. `5-in-1min`,
 * `6-in-1hr`, `8-in-2days`.
 */
export function defaultIdentifier(limit: number, windowMs: number): string {
  const seconds = windowMs / 1000;
  const minutes = seconds / 60;
  const hours = minutes / 60;
  const days = hours / 24;
  let duration: string;
  if (seconds < 60) duration = `${seconds}sec`;
  else if (minutes < 60) duration = `${minutes}min`;
  else if (hours < 24) duration = `${hours}hr${hours > 1 ? 's' : ''}`;
  else duration = `${days}day${days > 1 ? 's' : ''}`;
  return `${limit}-in-${duration}`;
}
