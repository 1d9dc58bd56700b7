/**
 * Swagger UI and Redoc pages with every asset served by keel from node_modules: no CDN, no web
 * fonts. Browsers that may not reach the internet (air-gapped deployments, strict CSPs) still get
 * working docs, and the page's Content-Security-Policy can stay `'self'`-only.
 *
 * Swagger UI: the page template comes from swagger-ui-express (`generateHTML`), the assets from its
 * swagger-ui-dist. Redoc: `redoc-express` hard-codes a CDN script and Google Fonts, so keel writes
 * the small page itself and serves the `redoc` package's `bundles/redoc.standalone.js` (with its
 * one hard-coded CDN image swapped out, see redocBundleHandler).
 * No inline scripts: each page loads a small init script from the same origin.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import send from 'send';
import swaggerUi from 'swagger-ui-express';
import { docsPageCsp } from '../../middleware/security-headers/index.js';
import { problemFor, sendProblem } from '../http/problem.js';
import type { KeelRequest } from '../http/request.js';
import type { MountSpec, RawHandler } from './host.js';

const require = createRequire(import.meta.url);
/** swagger-ui-dist is swagger-ui-express's dependency: resolve it from there. */
const SWAGGER_DIST = dirname(createRequire(require.resolve('swagger-ui-express')).resolve('swagger-ui-dist/package.json'));
const REDOC_BUNDLE = require.resolve('redoc/bundles/redoc.standalone.js');

/** How long browsers may reuse an asset before revalidating it (ETag), ms. */
export const DOCS_ASSET_MAX_AGE_MS = 3_600_000;
const SWAGGER_ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png', 'favicon-16x16.png'];

/** `<`, `>`, `&`, quotes → entities, for text placed into HTML. */
function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** JSON for a JavaScript file; `<` escaped so the value can never close a script element. */
function jsValue(v: unknown): string {
  return JSON.stringify(v).replace(/</g, '\\u003c');
}

function sendText(res: ServerResponse, type: string, body: string, csp?: string): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Cache-Control', 'no-cache');
  // The API policy (default-src 'none') would block the page's own scripts; pages get the docs policy.
  if (csp) res.setHeader('Content-Security-Policy', csp);
  res.end(res.req?.method === 'HEAD' ? undefined : body);
}

/** Serve one file with `send` (ETag, Last-Modified, Range, HEAD); a problem when it cannot. */
function fileHandler(file: string, contentType: string): RawHandler {
  return function keelDocsAsset(req: KeelRequest, res: ServerResponse) {
    send(req, file, { maxAge: DOCS_ASSET_MAX_AGE_MS, dotfiles: 'deny', index: false })
      .on('headers', (r: ServerResponse) => r.setHeader('Content-Type', contentType))
      .on('error', (err: { status?: number }) => {
        sendProblem(res, err.status === 404 ? problemFor('KEEL_NOT_FOUND', 'Documentation asset not found') : problemFor('KEEL_INTERNAL'));
      })
      .pipe(res);
  };
}

/**
 * Redoc's side menu shows a logo it fetches from cdn.redoc.ly, unconditionally. keel serves the
 * bundle with that one URL swapped for an empty inline SVG, so the page makes no outside request
 * (checked by lib/openapi/browser.test.ts). The bundle is read once, when the mounts are built.
 */
const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const EMPTY_SVG = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";

function redocBundleHandler(): RawHandler {
  const body = Buffer.from(readFileSync(REDOC_BUNDLE, 'utf8').split(REDOC_CDN_LOGO).join(EMPTY_SVG));
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return function keelRedocBundle(req: KeelRequest, res: ServerResponse) {
    res.setHeader('ETag', etag);
    res.setHeader('Cache-Control', `public, max-age=${DOCS_ASSET_MAX_AGE_MS / 1000}`);
    // RFC 9110 §13.1.2: a matching If-None-Match on GET/HEAD is answered 304 without a body.
    const inm = req.headers['if-none-match'];
    if (inm !== undefined && (inm.trim() === '*' || inm.split(',').some((t) => t.trim().replace(/^W\//, '') === etag))) {
      res.statusCode = 304;
      res.end();
      return;
    }
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/javascript; charset=utf-8');
    res.setHeader('Content-Length', body.length);
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}

const TYPES: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  png: 'image/png',
};

export interface DocsPagesOptions {
  /** Page title (the API title). */
  title: string;
  /** URL of the OpenAPI document the pages load. */
  specUrl: string;
  /** Where Swagger UI is served; its assets live under `<path>/`. */
  swaggerUiPath: string;
  /** Where Redoc is served; its assets live under `<path>/`. */
  redocPath: string;
}

/** Swagger UI's mounts: the page, its init script and its assets. */
export function swaggerUiMounts(options: DocsPagesOptions): MountSpec[] {
  const base = options.swaggerUiPath.replace(/\/+$/, '');
  const csp = docsPageCsp([]);
  // swagger-ui-express writes relative asset URLs (./swagger-ui.css); make them absolute so the page
  // works at `/docs` as well as `/docs/`.
  // generateHTML inserts the title as is: escape it here (a title is configuration, not markup).
  const html = swaggerUi
    .generateHTML(undefined, { customSiteTitle: escapeHtml(options.title), customCss: '', swaggerUrl: options.specUrl })
    .replace(/(href|src)="\.\//g, `$1="${escapeHtml(base)}/`);
  const init = `window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: ${jsValue(options.specUrl)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout'
  });
};
`;
  const page: RawHandler = (_req, res) => sendText(res, 'text/html; charset=utf-8', html, csp);
  const initScript: RawHandler = (_req, res) => sendText(res, TYPES.js!, init);
  const mounts: MountSpec[] = [
    { method: 'GET', path: options.swaggerUiPath, handler: page, readBody: false, page: 'Swagger UI' },
    { method: 'GET', path: `${base}/swagger-ui-init.js`, handler: initScript, readBody: false },
  ];
  if (`${base}/` !== options.swaggerUiPath) mounts.push({ method: 'GET', path: `${base}/`, handler: page, readBody: false });
  for (const asset of SWAGGER_ASSETS) {
    mounts.push({ method: 'GET', path: `${base}/${asset}`, handler: fileHandler(join(SWAGGER_DIST, asset), TYPES[asset.split('.').pop()!]!), readBody: false });
  }
  return mounts;
}

/** Redoc's mounts: the page, its init script and the standalone bundle. */
export function redocMounts(options: DocsPagesOptions): MountSpec[] {
  const base = options.redocPath.replace(/\/+$/, '');
  const csp = docsPageCsp([]);
  const html = `<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(options.title)}</title>
    <link rel="icon" href="data:," />
    <style>body { margin: 0; padding: 0; }</style>
  </head>
  <body>
    <div id="redoc-container"></div>
    <script src="${escapeHtml(base)}/redoc.standalone.js"></script>
    <script src="${escapeHtml(base)}/redoc-init.js"></script>
  </body>
</html>
`;
  const init = `Redoc.init(${jsValue(options.specUrl)}, {}, document.getElementById('redoc-container'));\n`;
  const page: RawHandler = (_req, res) => sendText(res, 'text/html; charset=utf-8', html, csp);
  const initScript: RawHandler = (_req, res) => sendText(res, TYPES.js!, init);
  const mounts: MountSpec[] = [
    { method: 'GET', path: options.redocPath, handler: page, readBody: false, page: 'Redoc' },
    { method: 'GET', path: `${base}/redoc-init.js`, handler: initScript, readBody: false },
    { method: 'GET', path: `${base}/redoc.standalone.js`, handler: redocBundleHandler(), readBody: false },
  ];
  if (`${base}/` !== options.redocPath) mounts.push({ method: 'GET', path: `${base}/`, handler: page, readBody: false });
  return mounts;
}
