/**
 * The documentation pages, à la carte (docs/api-descriptions.md, "Pages"): each page needs only its own
 * optional peer package and is loaded only when it is on. The OpenAPI document needs neither.
 *
 * - a page whose path is `null` is off: its package is never resolved;
 * - a page at a path the App chose whose package is missing is a start-up error naming the one
 *   `npm install` it needs (bad configuration is never served half-way);
 * - a page left at its default path (`/docs`, `/redoc`) whose package is missing is not served, and one
 *   warn line says how to serve it or turn it off: `openapi: { enabled: true }` alone serves the document.
 */
import { missingPackages, missingPackagesError } from '../ops/packages.js';
import { OpenApiConfig } from '../records/protocol.js';
import type { MountSpec } from './host.js';
import type { DocsPagesOptions } from './page-kit.js';
import { REDOC_PACKAGE, redocMounts } from './redoc.js';
import { SWAGGER_UI_PACKAGE, swaggerUiMounts } from './swagger-ui.js';

export { DOCS_ASSET_MAX_AGE_MS, type DocsPagesOptions } from './page-kit.js';
export { swaggerUiMounts, SWAGGER_UI_PACKAGE } from './swagger-ui.js';
export { redocMounts, REDOC_PACKAGE } from './redoc.js';

/** Where a page left off for want of its package is said: a pino-style logger's warn. */
export interface PagesLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

interface PageSpec {
  name: string;
  key: 'swagger_ui_path' | 'redoc_path';
  pkg: string;
  mounts(options: DocsPagesOptions, path: string): MountSpec[];
}

const PAGES: readonly PageSpec[] = [
  { name: 'Swagger UI', key: 'swagger_ui_path', pkg: SWAGGER_UI_PACKAGE, mounts: (o, path) => swaggerUiMounts({ ...o, swaggerUiPath: path }) },
  { name: 'Redoc', key: 'redoc_path', pkg: REDOC_PACKAGE, mounts: (o, path) => redocMounts({ ...o, redocPath: path }) },
];

/** The mounts of every page that is on (see the rules above); throws AppError for a chosen page whose package is missing. */
export function docsPageMounts(options: DocsPagesOptions, log?: PagesLog): MountSpec[] {
  const defaults = OpenApiConfig.defaults();
  const out: MountSpec[] = [];
  for (const page of PAGES) {
    const path = page.key === 'swagger_ui_path' ? options.swaggerUiPath : options.redocPath;
    if (path === null || path === undefined) continue;
    if (missingPackages([page.pkg]).length > 0) {
      if (path !== defaults[page.key]) throw missingPackagesError(`keel/openapi's ${page.name} page (OpenApiConfig.${page.key}: "${path}")`, [page.pkg]);
      log?.warn({ page: page.name, path, package: page.pkg },
        `${page.name} is not served at ${path}: its package is not installed. Run \`npm install ${page.pkg}\` to serve it, or set OpenApiConfig.${page.key}: null to turn it off`);
      continue;
    }
    out.push(...page.mounts(options, path));
  }
  return out;
}
