/**
 * Query strings and cookie headers: parsed per request, so kept small and allocation-light.
 */
import { appendRepeated } from './multipart.js';

/** RFC 6265 §5.2 cookie-string parsing: `a=1; b=2`. Values are percent-decoded when valid. */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (!name || name in out) continue;
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    try {
      out[name] = decodeURIComponent(value);
    } catch {
      out[name] = value;
    }
  }
  return out;
}

/** Query string → object; repeated keys become arrays. */
export function parseQuery(search: string): Record<string, unknown> {
  const out: Record<string, string | string[]> = {};
  if (search) for (const [k, v] of new URLSearchParams(search)) appendRepeated(out, k, v);
  return out;
}
