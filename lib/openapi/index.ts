/**
 * OpenAPI documentation (only when OpenApiConfig.enabled): `GET openapi_json_path` serves an
 * OpenAPI 3.1 document generated from the App's routes and described mounts (JSON-RPC, GraphQL); `swagger_ui_path` and `redoc_path` serve
 * Swagger UI and Redoc with their assets from node_modules, each only when its own package is installed (lib/openapi/pages.ts). The document and pages are mounted as
 * public (no server-level authentication): a browser opening the docs sends no credentials.
 * See docs/api-descriptions.md.
 */
import type { ServerResponse } from 'node:http';
import type { Mount } from '../app/plugin.js';
import { OpenApiConfig } from '../records/protocol.js';
import type { RouteDefinition } from '../app/route-definition.js';
import { generateOpenApi, type OpenApiServerAuth } from './generate.js';
import { mountAll, type MountSpec, type ProtocolHost, type RawHandler } from './host.js';
import { describedMounts } from './mounts.js';
import { docsPageMounts, type PagesLog } from './pages.js';

export { generateOpenApi, OPENAPI_VERSION, PROBLEM_SCHEMA_NAME, BEARER_SCHEME_NAME, API_KEY_SCHEME_NAME, type OpenApiServerAuth } from './generate.js';
export { PROBLEM_DETAILS_SCHEMA, SchemaComponents, toOpenApiSchema } from './schema.js';
export { addMountOperations, describedMounts, type OpenApiMountInput } from './mounts.js';
export { swaggerUiMounts, redocMounts, docsPageMounts, DOCS_ASSET_MAX_AGE_MS, SWAGGER_UI_PACKAGE, REDOC_PACKAGE, type DocsPagesOptions, type PagesLog } from './pages.js';
export { mountAll, type MountSpec, type ProtocolHost, type RawHandler } from './host.js';

/** OpenApiConfig as accepted from code: snake_case or camelCase keys. */
export type OpenApiConfigInput = Partial<Record<keyof OpenApiConfig, unknown>> & Record<string, unknown>;

export interface OpenApiMountsOptions {
  /** OpenApiConfig (default: disabled). */
  config: OpenApiConfigInput | Readonly<OpenApiConfig> | null | undefined;
  /** The routes to describe. */
  routes: readonly RouteDefinition[];
  /** Server-level JWT / API-key records (security schemes are detected from them). */
  server?: Partial<OpenApiServerAuth>;
  /**
   * The App's mounts, read when the document is first served: those with a `MountOptions.openapi`
   * description (JSON-RPC, GraphQL) are listed too. The installer passes `() => host.mounts()`, so
   * protocols installed after OpenAPI are included.
   */
  mounts?: () => readonly Mount[];
  /** Where a page left at its default path without its package is said (lib/openapi/pages.ts). */
  log?: PagesLog;
}

/**
 * The documentation mounts: [] when disabled. The routes' part of the document is generated here, so a
 * problem (two operations with one operationId) is a ConfigError at start-up; with `mounts`, the
 * whole document is generated once more when first served, when every protocol has mounted its endpoints.
 *
 * @example
 * const mounts = openApiMounts({ config: { enabled: true, title: 'Pets' }, routes: app.routes() });
 * for (const m of mounts) app.mount(m.method, m.path, m.handler, { public: true });
 */
export function openApiMounts(options: OpenApiMountsOptions): MountSpec[] {
  if (options.config === null || options.config === undefined) return [];
  const config = OpenApiConfig.parse(options.config, 'OpenApiConfig');
  if (!config.enabled) return [];
  const server: OpenApiServerAuth = { jwt_auth: options.server?.jwt_auth ?? null, api_key_auth: options.server?.api_key_auth ?? null };
  const routesOnly = JSON.stringify(generateOpenApi(options.routes, config, server));
  const appMounts = options.mounts;
  let body: string | undefined = appMounts ? undefined : routesOnly;
  const document: RawHandler = function keelOpenApiDocument(_req, res: ServerResponse) {
    body ??= JSON.stringify(generateOpenApi(options.routes, config, server, describedMounts(appMounts!())));
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.setHeader('Cache-Control', 'no-cache');
    res.end(res.req?.method === 'HEAD' ? undefined : body);
  };
  const pages = { title: config.title, specUrl: config.openapi_json_path, swaggerUiPath: config.swagger_ui_path, redocPath: config.redoc_path };
  const mounts: MountSpec[] = [{ method: 'GET', path: config.openapi_json_path, handler: document, readBody: false, page: 'OpenAPI document' }, ...docsPageMounts(pages, options.log)];
  return mounts.map((m) => ({ ...m, public: true }));
}

/** What the installer needs from the App. */
export interface OpenApiHost extends ProtocolHost {
  readonly logger?: PagesLog;
  routes(): readonly RouteDefinition[];
  mounts(): readonly Mount[];
}

/**
 * Installer for lib/app/builtins.ts: mounts nothing when `openapi` is null or disabled. OpenAPI is
 * installed first; the mounts the other protocols add later are read when the document is first served.
 */
export function installOpenApi(host: OpenApiHost): void {
  mountAll(host, openApiMounts({ config: host.config.openapi, routes: host.routes(), server: host.config, mounts: () => host.mounts(), log: host.logger }));
}
