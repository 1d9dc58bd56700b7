/**
 * Query strings and cookie headers: parsed per request, so kept small and allocation-light.
 */
import fastDecodeUriComponent from 'fast-decode-uri-component';
import { appendRepeated } from './multipart.js';

/**
 * RFC 6265 §5.2 cookie-string parsing: `a=1; b=2`. Values are percent-decoded when valid; the first
 * of repeated names wins. The object has no prototype (as the `cookie` package's): any name, including
 * `constructor`, `toString` or `__proto__`, is an ordinary own key, and an absent one reads undefined.
 */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = { __proto__: null } as unknown as Record<string, string>;
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (!name || out[name] !== undefined) continue;
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

const PLUS = /\+/g;

/** application/x-www-form-urlencoded reads `+` as a space (WHATWG URL §5.1). */
export function plusAsSpace(text: string): string {
  return text.indexOf('+') < 0 ? text : text.replace(PLUS, ' ');
}

/**
 * One urlencoded name or value (query string or form body) decoded: `+` is a space, then percent-
 * decoding; null when it holds an escape decodeURIComponent refuses (malformed, or bytes that are not
 * UTF-8), and each caller decides what such text reads as. fast-decode-uri-component gives
 * decodeURIComponent's answers without its exception or its call into the runtime.
 */
export function decodeUrlencoded(text: string): string | null {
  const spaced = plusAsSpace(text);
  return spaced.indexOf('%') < 0 ? spaced : fastDecodeUriComponent(spaced);
}

/**
 * Query string → object, with URLSearchParams's reading of it (WHATWG URL §5.1): pairs split on `&`,
 * empty pairs skipped, repeated keys become arrays, `__proto__` is ignored. The common case, where
 * every escape is valid UTF-8, is read here in one pass of indexOf (no iterator, no entry arrays);
 * anything else goes to URLSearchParams.
 */
export function parseQuery(search: string): Record<string, unknown> {
  const out: Record<string, string | string[]> = {};
  if (!search) return out;
  // URLSearchParams reads a lone surrogate as U+FFFD (it encodes the text as UTF-8 first).
  if (!(search as string & { isWellFormed(): boolean }).isWellFormed()) return parseQueryWithUrlSearchParams(search);
  const n = search.length;
  // URLSearchParams drops one leading `?` (a URL ending `??a=1`).
  let start = search.charCodeAt(0) === 0x3f ? 1 : 0;
  // The next `=` at or after `start`, kept across pairs so a long query without one is read once.
  let eq = search.indexOf('=', start);
  while (start < n) {
    let end = search.indexOf('&', start);
    if (end < 0) end = n;
    if (end > start) {
      if (eq >= 0 && eq < start) eq = search.indexOf('=', start);
      const hasValue = eq >= 0 && eq < end;
      const key = decodeUrlencoded(search.slice(start, hasValue ? eq : end));
      const value = hasValue ? decodeUrlencoded(search.slice(eq + 1, end)) : '';
      // URLSearchParams decides what text with a refused escape reads as.
      if (key === null || value === null) return parseQueryWithUrlSearchParams(search);
      appendRepeated(out, key, value);
    }
    start = end + 1;
  }
  return out;
}

function parseQueryWithUrlSearchParams(search: string): Record<string, unknown> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(search)) appendRepeated(out, k, v);
  return out;
}
