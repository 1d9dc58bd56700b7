/**
 * Swagger UI's page: the template comes from swagger-ui-express (`generateHTML`), the assets from its
 * swagger-ui-dist, all served by keel (no CDN). Both packages are loaded when the page's mounts are
 * built, never before: an App that serves only the OpenAPI document needs neither (docs/protocols.md).
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { docsPageCsp } from '../../middleware/security-headers/index.js';
import type { MountSpec, RawHandler } from './host.js';
import { escapeHtml, fileHandler, jsValue, sendText, TYPES, type DocsPagesOptions } from './page-kit.js';

const require = createRequire(import.meta.url);

/** The npm package the Swagger UI page needs (an optional peer dependency of keel), with its major. */
export const SWAGGER_UI_PACKAGE = 'swagger-ui-express@5';
const SWAGGER_ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png', 'favicon-16x16.png'];

interface SwaggerUiExpress {
  generateHTML(doc: undefined, options: { customSiteTitle: string; customCss: string; swaggerUrl: string }): string;
}

/** Swagger UI's mounts at `options.swaggerUiPath`: the page, its init script and its assets. */
export function swaggerUiMounts(options: DocsPagesOptions & { swaggerUiPath: string }): MountSpec[] {
  const swaggerUi = require('swagger-ui-express') as SwaggerUiExpress;
  /** swagger-ui-dist is swagger-ui-express's dependency: resolve it from there. */
  const dist = dirname(createRequire(require.resolve('swagger-ui-express')).resolve('swagger-ui-dist/package.json'));
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
    mounts.push({ method: 'GET', path: `${base}/${asset}`, handler: fileHandler(join(dist, asset), TYPES[asset.split('.').pop()!]!), readBody: false });
  }
  return mounts;
}
