/**
 * What the documentation pages (swagger-ui.ts, redoc.ts) share: every asset is served by keel from
 * node_modules, no CDN, no web fonts, so browsers that may not reach the internet (air-gapped
 * deployments, strict CSPs) still get working docs and the page's Content-Security-Policy can stay
 * `'self'`-only. No inline scripts: each page loads a small init script from the same origin.
 */
import type { ServerResponse } from 'node:http';
import send from 'send';
import { problemFor, sendProblem } from '../http/problem.js';
import type { KeelRequest } from '../http/request.js';
import type { RawHandler } from './host.js';

/** How long browsers may reuse an asset before revalidating it (ETag), ms. */
export const DOCS_ASSET_MAX_AGE_MS = 3_600_000;

export const TYPES: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  png: 'image/png',
};

/** `<`, `>`, `&`, quotes → entities, for text placed into HTML. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** JSON for a JavaScript file; `<` escaped so the value can never close a script element. */
export function jsValue(v: unknown): string {
  return JSON.stringify(v).replace(/</g, '\\u003c');
}

export function sendText(res: ServerResponse, type: string, body: string, csp?: string): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Cache-Control', 'no-cache');
  // The API policy (default-src 'none') would block the page's own scripts; pages get the docs policy.
  if (csp) res.setHeader('Content-Security-Policy', csp);
  res.end(res.req?.method === 'HEAD' ? undefined : body);
}

/** Serve one file with `send` (ETag, Last-Modified, Range, HEAD); a problem when it cannot. */
export function fileHandler(file: string, contentType: string): RawHandler {
  return function keelDocsAsset(req: KeelRequest, res: ServerResponse) {
    send(req, file, { maxAge: DOCS_ASSET_MAX_AGE_MS, dotfiles: 'deny', index: false })
      .on('headers', (r: ServerResponse) => r.setHeader('Content-Type', contentType))
      .on('error', (err: { status?: number }) => {
        sendProblem(res, err.status === 404 ? problemFor('KEEL_NOT_FOUND', 'Documentation asset not found') : problemFor('KEEL_INTERNAL'));
      })
      .pipe(res);
  };
}

export interface DocsPagesOptions {
  /** Page title (the API title). */
  title: string;
  /** URL of the OpenAPI document the pages load. */
  specUrl: string;
  /** Where Swagger UI is served (its assets live under `<path>/`); null: not served. */
  swaggerUiPath?: string | null;
  /** Where Redoc is served (its assets live under `<path>/`); null: not served. */
  redocPath?: string | null;
}
