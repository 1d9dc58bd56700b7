/**
 * An OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.1) generated from the App's routes:
 * paths, parameters, request bodies, responses (with RFC 9457 problem responses), operation ids,
 * tags, deprecation, `info`, `servers` and security schemes with per-operation requirements.
 */
import statuses from 'statuses';
import { ConfigError } from '../http/errors.js';
import type { OpenApiConfig, SecuritySchemeInfo } from '../records/protocol.js';
import type { ServerConfig } from '../records/server.js';
import type { RouteDefinition } from '../app/route-definition.js';
import { openApiPath } from '../app/router.js';
import { addMountOperations, defaultOperationId, type OpenApiMountInput } from './mounts.js';
import { PROBLEM_DETAILS_SCHEMA, SchemaComponents, toOpenApiSchema } from './schema.js';

/** The OpenAPI version keel writes. */
export const OPENAPI_VERSION = '3.1.0';
/** Component name of the shared problem-details schema. */
export const PROBLEM_SCHEMA_NAME = 'ProblemDetails';
/** Name of the detected JWT scheme in `components.securitySchemes`. */
export const BEARER_SCHEME_NAME = 'bearerAuth';
/** Name of the detected API-key scheme (further header names get `apiKeyAuth_<Header>`). */
export const API_KEY_SCHEME_NAME = 'apiKeyAuth';

type Json = Record<string, unknown>;
/** What generation reads from a ServerConfig: the server-level auth records. */
export type OpenApiServerAuth = Pick<ServerConfig, 'jwt_auth' | 'api_key_auth'>;

const PARAM_IN = { path: 'path', query: 'query', headers: 'header', cookie: 'cookie' } as const;
/** OpenAPI 3.1 §4.8.12.1: these header parameters are described elsewhere and SHALL be ignored. */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);
const SEPARATOR_STYLE: Record<string, string> = { ',': 'form', ' ': 'spaceDelimited', '|': 'pipeDelimited' };

const problemRef = { $ref: `#/components/schemas/${PROBLEM_SCHEMA_NAME}` };
const problemResponse = (description: string) => ({ description, content: { 'application/problem+json': { schema: problemRef } } });

function toScheme(s: SecuritySchemeInfo): Json {
  return s.type === 'http' ? { type: 'http', scheme: s.scheme, bearerFormat: s.bearer_format } : { type: 'apiKey', in: s.location, name: s.name };
}


/** Resolves which security schemes a route requires, adding detected schemes as it meets them. */
class SecurityResolver {
  readonly schemes: Record<string, Json> = {};
  readonly #configured: ReadonlyArray<[string, SecuritySchemeInfo]>;

  constructor(configured: Readonly<Record<string, SecuritySchemeInfo>>) {
    this.#configured = Object.entries(configured);
    for (const [name, s] of this.#configured) this.schemes[name] = toScheme(s);
  }

  bearer(): string {
    const found = this.#configured.find(([, s]) => s.type === 'http' && s.scheme.toLowerCase() === 'bearer');
    if (found) return found[0];
    this.schemes[BEARER_SCHEME_NAME] ??= { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' };
    return BEARER_SCHEME_NAME;
  }

  apiKey(header: string): string {
    const h = header.toLowerCase();
    const found =
      this.#configured.find(([, s]) => s.type === 'apiKey' && s.location === 'header' && s.name.toLowerCase() === h) ??
      this.#configured.find(([, s]) => s.type === 'apiKey');
    if (found) return found[0];
    for (const [name, s] of Object.entries(this.schemes)) if (s.type === 'apiKey' && String(s.name).toLowerCase() === h) return name;
    const name = API_KEY_SCHEME_NAME in this.schemes ? `${API_KEY_SCHEME_NAME}_${header.replace(/[^A-Za-z0-9]/g, '_')}` : API_KEY_SCHEME_NAME;
    this.schemes[name] = { type: 'apiKey', in: 'header', name: header };
    return name;
  }
}

function parameters(route: RouteDefinition, components: SchemaComponents): Json[] {
  const out: Json[] = [];
  for (const p of route.params) {
    if (p.source === 'headers' && IGNORED_HEADERS.has(p.name.toLowerCase())) continue;
    const schema = { ...(toOpenApiSchema(p.schema, components) as Json) };
    const param: Json = { name: p.name, in: PARAM_IN[p.source], required: p.source === 'path' ? true : p.required };
    if (typeof schema.description === 'string') param.description = schema.description;
    if (schema.deprecated === true) param.deprecated = true;
    if (p.separator !== undefined && SEPARATOR_STYLE[p.separator]) {
      param.style = SEPARATOR_STYLE[p.separator];
      param.explode = false;
    }
    param.schema = schema;
    out.push(param);
  }
  // Every template variable must be described (OpenAPI 3.1 §4.8.12.1): untyped `:id` placeholders
  // are strings, and a bare `*` catch-all is named `wildcard`.
  const names = [...route.compiled.names, ...(route.compiled.wildcard === '*' ? ['wildcard'] : [])];
  for (const name of names) {
    if (!out.some((p) => p.in === 'path' && p.name === name)) out.push({ name, in: 'path', required: true, schema: { type: 'string' } });
  }
  return out;
}

/** Statuses answered without content (RFC 9110 §15.3.5, §15.3.6, §15.4.5): no `content` member. */
const NO_CONTENT = new Set([204, 205, 304]);

/**
 * The route's `responses` by status: 2xx/3xx as application/json, 4xx/5xx as
 * application/problem+json (RFC 9457; `null` there is keel's ProblemDetails), no content for `null`
 * or a no-content status; `response`,
 * beside it, is the 200.
 */
function statusResponses(route: RouteDefinition, components: SchemaComponents): Json {
  const out: Json = {};
  if (route.response && route.responses![200] === undefined) {
    out['200'] = { description: 'Successful response', content: { 'application/json': { schema: toOpenApiSchema(route.response, components) } } };
  }
  for (const [key, schema] of Object.entries(route.responses!)) {
    const status = Number(key);
    const description = statuses.message[status] ?? 'Response';
    // An error status without a schema of its own is keel's problem details (RFC 9457).
    if (schema === null && status >= 400) {
      out[key] = problemResponse(description);
      continue;
    }
    const resp: Json = { description };
    if (schema !== null && !NO_CONTENT.has(status)) {
      resp.content = { [status >= 400 ? 'application/problem+json' : 'application/json']: { schema: toOpenApiSchema(schema, components) } };
    }
    out[key] = resp;
  }
  return out;
}

function responses(route: RouteDefinition, method: string, components: SchemaComponents, secured: boolean): Json {
  // `responses` first; `openapi.responses` (hand-written documentation) wins for a status both give.
  const out: Json = route.responses ? statusResponses(route, components) : {};
  const declared = route.openapi.responses;
  if (declared && Object.keys(declared).length > 0) {
    for (const [status, r] of Object.entries(declared)) {
      const resp: Json = { description: r.description ?? (status.startsWith('2') ? 'Successful response' : 'Response') };
      if (r.schema) resp.content = { [r.contentType ?? 'application/json']: { schema: toOpenApiSchema(r.schema, components) } };
      out[status] = resp;
    }
  } else if (route.responses) {
    // Listed above.
  } else if (route.response) {
    out['200'] = { description: 'Successful response', content: { 'application/json': { schema: toOpenApiSchema(route.response, components) } } };
  } else {
    out['200'] = { description: 'Successful response' };
  }
  const validates = route.params.length > 0 || route.body !== undefined;
  if (validates && !out['422']) out['422'] = problemResponse('Request validation failed');
  if (route.body !== undefined && method !== 'GET' && !out['413']) out['413'] = problemResponse('Request body too large');
  if (secured && !out['401']) out['401'] = problemResponse('Missing or invalid credentials');
  if (route.authorization && !out['403']) out['403'] = problemResponse('Insufficient roles, scopes or permissions');
  return out;
}

/**
 * The security requirement of one route (or, with no route, of a mount behind the server-level
 * authentication): JWT and/or API key, both required when both apply (AND).
 */
function requirement(route: RouteDefinition | undefined, server: OpenApiServerAuth, security: SecurityResolver): Json | undefined {
  const req: Json = {};
  const jwt = route?.jwtAuth ? route.jwtAuth.enabled : server.jwt_auth !== null;
  if (jwt) req[security.bearer()] = [];
  const apiKey = route?.apiKeyAuth ? route.apiKeyAuth.enabled : server.api_key_auth !== null;
  if (apiKey) req[security.apiKey(route?.apiKeyAuth?.header_name ?? server.api_key_auth?.header_name ?? 'X-API-Key')] = [];
  return Object.keys(req).length > 0 ? req : undefined;
}

function info(config: Readonly<OpenApiConfig>): Json {
  const out: Json = { title: config.title, version: config.version };
  if (config.description) out.description = config.description;
  if (config.contact) {
    const contact = Object.fromEntries(Object.entries(config.contact).filter(([, v]) => v !== null));
    if (Object.keys(contact).length > 0) out.contact = contact;
  }
  if (config.license) {
    const license: Json = { name: config.license.name };
    if (config.license.url) license.url = config.license.url;
    // OpenAPI 3.1 carries an SPDX expression in `identifier` (exclusive with `url`).
    else if (/^[A-Za-z0-9.+-]+$/.test(config.license.name)) license.identifier = config.license.name;
    out.license = license;
  }
  return out;
}

/**
 * Generate the document: the routes, then the operations mounted protocols describe (`mounts`,
 * lib/openapi/mounts.ts). Throws ConfigError for two routes sharing an operationId (the document
 * would be invalid), at start-up, like any other bad configuration; a mount's operationId that a
 * route holds gets a suffix instead (the protocol chose it, not the user).
 */
export function generateOpenApi(routes: readonly RouteDefinition[], config: Readonly<OpenApiConfig>, server: OpenApiServerAuth, mounts: readonly OpenApiMountInput[] = []): Json {
  const components = new SchemaComponents([PROBLEM_SCHEMA_NAME]);
  const security = new SecurityResolver(config.security_schemes);
  const paths: Record<string, Json> = {};
  const operationIds = new Map<string, string>();
  const tags = new Set<string>();

  for (const route of routes) {
    const path = openApiPath(route.path).replace(/\/\*$/, '/{wildcard}');
    const item = (paths[path] ??= {});
    route.methods.forEach((method, i) => {
      // A Path Item has no field for CONNECT (OpenAPI 3.1 §4.8.9.1).
      if (method === 'CONNECT') return;
      const meta = route.openapi;
      let operationId = meta.operationId ? (i === 0 ? meta.operationId : `${meta.operationId}_${method.toLowerCase()}`) : defaultOperationId(method, path);
      if (!meta.operationId) for (let n = 2; operationIds.has(operationId); n++) operationId = `${defaultOperationId(method, path)}_${n}`;
      const clash = operationIds.get(operationId);
      if (clash) {
        throw new ConfigError(`Invalid OperationInfo at Route(${method} ${route.path}).openapi.operationId: ${JSON.stringify(operationId)} is already used by ${clash}; operation ids must be unique (OpenAPI 3.1 §4.8.10.1).`, {
          record: 'OperationInfo', path: `Route(${method} ${route.path}).openapi`, key: 'operationId', value: operationId,
        });
      }
      operationIds.set(operationId, `${method} ${route.path}`);
      const op: Json = {};
      if (meta.tags?.length) {
        op.tags = [...meta.tags];
        meta.tags.forEach((t) => tags.add(t));
      }
      if (meta.summary) op.summary = meta.summary;
      if (meta.description) op.description = meta.description;
      op.operationId = operationId;
      const params = parameters(route, components);
      if (params.length > 0) op.parameters = params;
      if (route.body !== undefined) {
        op.requestBody = { required: route.bodyRequired, content: { 'application/json': { schema: toOpenApiSchema(route.body, components) } } };
      }
      const req = requirement(route, server, security);
      op.responses = responses(route, method, components, req !== undefined);
      if (req) op.security = [req];
      if (meta.deprecated) op.deprecated = true;
      item[method.toLowerCase()] = op;
    });
  }
  addMountOperations({ paths, components, operationIds, tags, serverRequirement: () => requirement(undefined, server, security), problemResponse }, mounts);

  const doc: Json = { openapi: OPENAPI_VERSION, info: info(config) };
  if (config.servers.length > 0) doc.servers = config.servers.map((s) => (s.description ? { url: s.url, description: s.description } : { url: s.url }));
  if (tags.size > 0) doc.tags = [...tags].map((name) => ({ name }));
  doc.paths = paths;
  const componentsOut: Json = { schemas: { [PROBLEM_SCHEMA_NAME]: PROBLEM_DETAILS_SCHEMA, ...components.schemas } };
  if (Object.keys(security.schemes).length > 0) componentsOut.securitySchemes = security.schemes;
  doc.components = componentsOut;
  return doc;
}
