/**
 * The looser Content-Security-Policy of the HTML documentation pages (Swagger UI, Redoc, GraphiQL)
 * served by an API whose own responses carry `default-src 'none'`.
 */
import { ConfigError } from '../../lib/http/errors.js';

/** CDNs the documentation pages load their assets from by default. */
export const DOCS_PAGE_CDN_SOURCES = Object.freeze(['https://cdn.jsdelivr.net', 'https://unpkg.com', 'https://cdn.redoc.ly']);

/**
 * A Content-Security-Policy for the HTML documentation pages (Swagger UI, Redoc, GraphiQL): their
 * scripts and styles from this origin and the given CDNs, inline styles, data: images and fonts,
 * blob: workers (Redoc), fetches to this origin only. Set it in the page's handler; it replaces the
 * API policy for that response (see the securityHeaders example).
 */
export function docsPageCsp(sources: readonly string[] = DOCS_PAGE_CDN_SOURCES): string {
  for (const s of sources) {
    if (!/^(https?:\/\/[^\s;,']+|'[a-z-]+')$/.test(s)) {
      throw new ConfigError(`Invalid docsPageCsp source ${JSON.stringify(s)}: expected an http(s) origin or a quoted keyword.`, { record: 'docsPageCsp', path: 'docsPageCsp', key: 'sources', value: s });
    }
  }
  const extra = sources.length ? ` ${sources.join(' ')}` : '';
  return [
    "default-src 'self'",
    `script-src 'self' 'unsafe-inline'${extra}`,
    `style-src 'self' 'unsafe-inline'${extra} https://fonts.googleapis.com`,
    `font-src 'self' data:${extra} https://fonts.gstatic.com`,
    "img-src 'self' data: https:",
    "worker-src 'self' blob:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'self'",
  ].join('; ');
}
