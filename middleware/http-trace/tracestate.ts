/**
 * W3C Trace Context `tracestate` (https://www.w3.org/TR/trace-context/ §3.3): vendor-specific trace
 * data that travels with `traceparent`. keel adds no entry of its own; it validates the header and
 * passes it on unchanged (in order) so the caller's vendors keep their state across this hop.
 */

/** At most this many list-members (§3.3.1.1); a longer header is discarded whole. */
export const TRACESTATE_MAX_MEMBERS = 32;
/**
 * A header longer than this is discarded (§3.3.1.5 asks vendors to propagate at least 512
 * characters; anything much longer is not a real tracestate and only costs memory per request).
 */
export const TRACESTATE_MAX_LENGTH = 8192;

// §3.3.1.3.1 key: simple-key = lcalpha 0*255(lcalpha / DIGIT / "_" / "-"/ "*" / "/");
// multi-tenant-key = tenant-id "@" system-id.
const KEY = /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})$/;
// §3.3.1.3.2 value: 0*255(chr) nblk-chr, printable ASCII without "," and "=", not ending in a space.
const VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/**
 * The `tracestate` to propagate, or undefined when there is none or it is invalid (an invalid
 * member, a repeated key, more than {@link TRACESTATE_MAX_MEMBERS} members: the header is dropped
 * whole, §3.3.1.1). Several header lines arrive joined with ", " (node) and are one list (§3.3.1.2).
 * Empty members and optional white space are removed; the order of members is kept.
 */
export function parseTracestate(header: string | string[] | undefined): string | undefined {
  const raw = Array.isArray(header) ? header.join(',') : header;
  if (!raw || raw.length > TRACESTATE_MAX_LENGTH) return undefined;
  const members: string[] = [];
  const keys = new Set<string>();
  for (const part of raw.split(',')) {
    const member = part.trim();
    if (member === '') continue;
    const eq = member.indexOf('=');
    if (eq <= 0) return undefined;
    const key = member.slice(0, eq);
    const value = member.slice(eq + 1);
    if (!KEY.test(key) || !VALUE.test(value) || keys.has(key)) return undefined;
    keys.add(key);
    members.push(member);
    if (members.length > TRACESTATE_MAX_MEMBERS) return undefined;
  }
  return members.length ? members.join(',') : undefined;
}
