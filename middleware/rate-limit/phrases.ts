/**
 * The 429 detail's words: "1 request per minute", "100 requests per 15 minutes", "refilled at 1 per
 * 5 minutes". One place, so both limiters (the token bucket and express-rate-limit's window) say it alike.
 */

/** "1 request", "2 requests". */
export function countOf(n: number, noun: string): string {
  return `${n} ${n === 1 ? noun : `${noun}s`}`;
}

/** A duration after "per": "minute", "15 minutes", "30 seconds", "1500 ms". */
export function perDuration(ms: number): string {
  const unit = ms % 3_600_000 === 0 ? ['hour', 3_600_000] as const : ms % 60_000 === 0 ? ['minute', 60_000] as const : ms % 1000 === 0 ? ['second', 1000] as const : null;
  if (!unit) return `${ms} ms`;
  const n = ms / unit[1];
  return n === 1 ? unit[0] : countOf(n, unit[0]);
}

/** "100 requests per 15 minutes": express-rate-limit's `limit` per `windowMs`. */
export function requestsPerWindow(limit: number, windowMs: number): string {
  return `${countOf(limit, 'request')} per ${perDuration(windowMs)}`;
}

/** "2 per second", "1 per 5 minutes": a token bucket's refill rate. */
export function refillRate(perSecond: number): string {
  if (perSecond >= 1) return `${Math.round(perSecond * 1000) / 1000} per second`;
  const ms = Math.round(1000 / perSecond);
  return `1 per ${ms % 1000 === 0 ? perDuration(ms) : `${ms / 1000} seconds`}`;
}
