/**
 * What a router reads of req.url: the pathname to match, and the scheme and host of an absolute-form target.
 */
import parseUrl from 'parseurl';

function parsedPathname(req: any): string | null | undefined {
  try {
    return parseUrl(req)!.pathname;
  } catch {
    return undefined;
  }
}

/**
 * The pathname of req.url, as parseurl gives it. An origin-form target ('/a/b?q') is scanned exactly as parseurl's
 * own fast path scans it, without its Url object: a request usually passes two routers (the app's, then a mounted
 * one whose req.url the mount changed), and parseurl's cache on req holds one URL, so each router parsed again.
 * Whatever parseurl hands to url.parse (absolute form, '#', whitespace) goes to parseurl itself.
 */
export function pathnameOf(req: any): string | null | undefined {
  const url = req.url;
  if (url === knownUrl) return knownPathname;
  if (typeof url !== 'string' || url.charCodeAt(0) !== 0x2f /* / */) return parsedPathname(req);
  let end = -1;
  for (let i = 1; i < url.length; i++) {
    const c = url.charCodeAt(i);
    // letters and most punctuation first: above '?', only U+00A0 and U+FEFF send parseurl to url.parse
    if (c > 0x3f) {
      if (c === 0xa0 || c === 0xfeff) return parsedPathname(req);
    } else if (c === 0x3f /* ? */) {
      if (end === -1) end = i;
    } else if (c <= 0x23 && (c === 0x20 || c === 0x23 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d)) {
      return parsedPathname(req);
    }
  }
  knownUrl = url;
  return (knownPathname = end === -1 ? url : url.slice(0, end));
}

/**
 * The last origin-form URL scanned (or handed on by a mount) and its pathname. An origin-form URL's pathname depends
 * on the string alone, so one remembered pair is right for any request with the same URL; it spares a mounted
 * router the scan of the URL its mount just made (one URL parse per request).
 */
let knownUrl: string | symbol = Symbol('none yet');
let knownPathname = '';

/**
 * After a mount took `removed` off the front of an origin-form `url` whose pathname is `pathname` (and put a '/' in
 * front of what was left when it did not start with one, `slashAdded`): the pathname of the new `req.url` is known
 * without a scan, when `url` was itself scanned here (the characters that send a URL to parseurl are absent).
 */
export function handOnPathname(url: unknown, pathname: string, newUrl: string, removed: number, slashAdded: boolean): void {
  if (url !== knownUrl) return;
  const rest = pathname.slice(removed);
  knownPathname = slashAdded ? '/' + rest : rest;
  knownUrl = newUrl;
}

/** The scheme and host of an absolute-form request target ('http://a.example'), which mounting leaves alone. */
export function getProtohost(url: unknown): string | undefined {
  if (typeof url !== 'string' || url.length === 0 || url[0] === '/') return undefined;
  const searchIndex = url.indexOf('?');
  const pathLength = searchIndex !== -1 ? searchIndex : url.length;
  const fqdnIndex = url.slice(0, pathLength).indexOf('://');
  return fqdnIndex !== -1 ? url.substring(0, url.indexOf('/', 3 + fqdnIndex)) : undefined;
}
