/**
 * Redoc's page: `redoc-express` hard-codes a CDN script and Google Fonts, so keel writes the small page
 * itself and serves the `redoc` package's `bundles/redoc.standalone.js` (with its one hard-coded CDN
 * image swapped out, see redocBundleHandler). The package is resolved when the page's mounts are built,
 * never before: an App that serves only the OpenAPI document does not need it (docs/protocols.md).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { docsPageCsp } from '../../middleware/security-headers/index.js';
import type { KeelRequest } from '../http/request.js';
import type { MountSpec, RawHandler } from './host.js';
import { DOCS_ASSET_MAX_AGE_MS, escapeHtml, jsValue, sendText, TYPES, type DocsPagesOptions } from './page-kit.js';

const require = createRequire(import.meta.url);

/** The npm package the Redoc page needs (an optional peer dependency of keel), with its major. */
export const REDOC_PACKAGE = 'redoc@2';

/**
 * Redoc's side menu shows a logo it fetches from cdn.redoc.ly, unconditionally. keel serves the
 * bundle with that one URL swapped for an empty inline SVG, so the page makes no outside request
 * (checked by lib/openapi/browser.test.ts). The bundle is read once, when the mounts are built.
 */
const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const EMPTY_SVG = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";

function redocBundleHandler(): RawHandler {
  const bundle = require.resolve('redoc/bundles/redoc.standalone.js');
  const body = Buffer.from(readFileSync(bundle, 'utf8').split(REDOC_CDN_LOGO).join(EMPTY_SVG));
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

/** Redoc's mounts at `options.redocPath`: the page, its init script and the standalone bundle. */
export function redocMounts(options: DocsPagesOptions & { redocPath: string }): MountSpec[] {
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
