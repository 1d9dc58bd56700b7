/*!
 * Request freshness (RFC 9110 §13.1.1, §13.1.3, §15.4.5), ported from the `fresh` package
 * (jshttp/fresh, MIT License, Copyright(c) 2012 TJ Holowaychuk, 2016-2017 Douglas Christopher Wilson).
 *
 * Ported rather than depended on because Express 4 and 5 ship different releases of `fresh` that disagree on one
 * point: fresh ≥ 1 (Express 5) lets If-None-Match take precedence over If-Modified-Since, as RFC 9110 §13.1.3
 * requires, while fresh 0.5 (Express 4) requires both to match. One function with a flag gives each engine
 * exactly its own answer, and avoids building the `{ etag, 'last-modified' }` object on the hot path.
 */

import type { IncomingHttpHeaders } from 'node:http';

/** `Cache-Control: no-cache` from the client asks for an end-to-end reload (RFC 9111 §5.2.1.4): never fresh. */
const CACHE_CONTROL_NO_CACHE = /(?:^|,)\s*?no-cache\s*?(?:,|$)/;

/**
 * Whether a response with validators `etag` / `lastModified` is fresh for a request with `reqHeaders`.
 * `noneMatchWins` is Express 5's (fresh ≥ 1) rule; false gives Express 4's (fresh 0.5).
 */
export function isFresh(
  reqHeaders: IncomingHttpHeaders,
  etag: unknown,
  lastModified: unknown,
  noneMatchWins: boolean,
): boolean {
  const modifiedSince = reqHeaders['if-modified-since'];
  const noneMatch = reqHeaders['if-none-match'];
  // unconditional request: the common case, decided without reading anything else
  if (!modifiedSince && !noneMatch) return false;

  const cacheControl = reqHeaders['cache-control'];
  if (cacheControl && CACHE_CONTROL_NO_CACHE.test(cacheControl)) return false;

  if (noneMatch) {
    if (noneMatch === '*') {
      if (noneMatchWins) return true;
    } else {
      if (!etag) return false;
      if (!etagMatches(noneMatch, String(etag))) return false;
      if (noneMatchWins) return true;
    }
  }

  if (modifiedSince) {
    const lm = lastModified ? Date.parse(String(lastModified)) : NaN;
    if (!(lm <= Date.parse(modifiedSince))) return false;
  }
  return true;
}

/** Weak comparison (RFC 9110 §8.8.3.2) of `etag` against each entity-tag of an If-None-Match list. */
function etagMatches(list: string, etag: string): boolean {
  let start = 0;
  let end = 0;
  for (let i = 0, len = list.length; i <= len; i++) {
    const code = i === len ? 0x2c : list.charCodeAt(i);
    if (code === 0x20) {
      if (start === end) start = end = i + 1;
    } else if (code === 0x2c) {
      const match = list.substring(start, end);
      if (match === etag || match === 'W/' + etag || 'W/' + match === etag) return true;
      start = end = i + 1;
    } else {
      end = i + 1;
    }
  }
  return false;
}
