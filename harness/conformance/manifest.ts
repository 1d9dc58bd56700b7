/**
 * The case manifest (`keel-conformance --manifest`): everything another implementation needs to
 * generate the app a set of cases expects, decided once here so no author re-implements the loader.
 * Its JSON Schema is schemas/ConformanceManifest.schema.json (a test keeps the two in agreement).
 *
 * Rules applied (the corpus's FastAPI semantics):
 * - a parameter is required unless its entry says `optional: true` or `required: false`, or has a
 *   `default`; path parameters are always required;
 * - a parameter entry is a JSON Schema plus the keys `required`, `optional`, `annotation`,
 *   `separator`, `description`, `source`, `alias`, which are lifted out of `schema`;
 * - `{name:type}` placeholders give the parameter's schema (`int` → integer, `uuid` → string/uuid,
 *   …) unless `parameters.path.<name>` gives one;
 * - the request is the exact one the runner sends (query merged once, case-id header included);
 * - a case carries its handler's own answer (`handler_response`, handler-answer.ts) and never the
 *   answer the framework owns: a server is told what a handler is, not what it must reply when
 *   validation, authentication, CORS or a limit refuses the request.
 */
import { PATH_PARAM_TYPES } from '../../lib/app/router.js';
import { CASE_HEADER, wireFor } from './runner.js';
import { handlerAnswer, type HandlerAnswer } from './handler-answer.js';
import { protocolServerSpec } from './kinds/index.js';
import { isRunnable, isRunnableProtocol, isRunnableWebSocket, type ConformanceCase, type LoadedCase, type ProtocolKind } from './types.js';

export const MANIFEST_VERSION = 2;

/**
 * Why a WebSocket session case is listed under `skipped`: the manifest (and its JSON
 * Schema) has HTTP cases only. The runner plays such cases against `--base-url` servers and keel's
 * fixture app; under `--exec` they are skipped with this reason too.
 */
export const WEBSOCKET_NOT_IN_MANIFEST = 'WebSocket session case: the manifest (version 2) describes HTTP cases only; play it against a running server with --base-url (route, handler and session are in the case file)';

export type ParameterSource = 'path' | 'query' | 'headers' | 'cookies' | 'files';
const SOURCES: readonly ParameterSource[] = ['path', 'query', 'headers', 'cookies', 'files'];
/** Keys of a parameter entry that are not JSON Schema. */
export const PARAMETER_META_KEYS: readonly string[] = ['required', 'optional', 'annotation', 'separator', 'description', 'source', 'alias'];

export interface ManifestParameter {
  name: string;
  source: ParameterSource;
  required: boolean;
  schema: Record<string, unknown>;
  /** Query arrays sent as one delimited value (`?tags=a|b`). */
  separator?: string;
  default?: unknown;
}

export interface ManifestRequest {
  method: string;
  /** Path and query exactly as sent. */
  path: string;
  headers: Array<[string, string]>;
  /** The body, base64 (absent when none is sent). */
  body_base64?: string;
}

export interface ManifestCase {
  id: string;
  category: string;
  name: string;
  source: string;
  method: string;
  /** The spec's pattern syntax: `/items/{id:int}`, `/files/{rest:path}`. */
  route: string;
  /** Express / find-my-way form: `/items/:id`, `/files/*rest`. */
  route_colon: string;
  parameters: ManifestParameter[];
  body: { required: boolean; schema: Record<string, unknown>; content_type?: string } | null;
  /** The case's handler definition as written (middleware records, CORS, …). */
  handler: Record<string, unknown>;
  request: ManifestRequest;
  /**
   * What the handler answers when the request reaches it (handler-answer.ts): a successful case's
   * answer, a handler-raised error (`error`), or for a case whose answer the framework owns, a 200
   * saying the handler was reached. The case's expected answer is not in the manifest.
   */
  handler_response: HandlerAnswer;
}

export interface ManifestRoute {
  method: string;
  route: string;
  route_colon: string;
  /** Cases served by this method + route; more than one handler definition when `handlers` > 1. */
  cases: string[];
  handlers: number;
}

/**
 * A case of another protocol (GraphQL, gRPC, JSON-RPC, an API description; harness/conformance/kinds/):
 * `server` is what the implementation must serve for it, by kind (docs/conformance.md, "Other
 * protocols"). The runner plays it against the server on the case's own port.
 */
export interface ManifestProtocolCase {
  id: string;
  category: string;
  name: string;
  source: string;
  kind: ProtocolKind;
  server: Record<string, unknown>;
}

export interface Manifest {
  version: typeof MANIFEST_VERSION;
  case_header: string;
  cases: ManifestCase[];
  routes: ManifestRoute[];
  /** Cases of other protocols (empty when there are none). */
  protocols: ManifestProtocolCase[];
  skipped: Array<{ id: string; category: string; reason: string }>;
}

type Json = Record<string, unknown>;
const PLACEHOLDER = /^\{([A-Za-z_][A-Za-z0-9_]*)(?::([A-Za-z]+))?\}$/;

/** `/items/{id:int}/{rest:path}` → `/items/:id/*rest`. */
export function colonRoute(route: string): string {
  return route
    .split('/')
    .map((seg) => {
      const m = PLACEHOLDER.exec(seg);
      if (!m) return seg;
      return m[2] === 'path' ? `*${m[1]}` : `:${m[1]}`;
    })
    .join('/');
}

/** Placeholders of a route with the schema their type implies (`{}` when untyped). */
export function routeParameters(route: string): Array<{ name: string; schema: Json }> {
  const out: Array<{ name: string; schema: Json }> = [];
  for (const seg of route.split('/')) {
    const m = PLACEHOLDER.exec(seg);
    if (m) out.push({ name: m[1]!, schema: m[2] ? { ...(PATH_PARAM_TYPES[m[2]] ?? {}) } : {} });
  }
  return out;
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A handler's parameters, normalised (see the module comment). */
export function normaliseParameters(handler: ConformanceCase['handler']): ManifestParameter[] {
  const out: ManifestParameter[] = [];
  const params = (handler.parameters ?? {}) as Record<string, unknown>;
  const declaredPath = isObject(params.path) ? params.path : {};
  for (const p of routeParameters(handler.route)) {
    if (!(p.name in declaredPath)) out.push({ name: p.name, source: 'path', required: true, schema: p.schema.type ? p.schema : { type: 'string' } });
  }
  for (const source of SOURCES) {
    const map = params[source];
    if (!isObject(map)) continue;
    // A whole-object JSON Schema ({type: 'object', properties, required: [...]}) is accepted too.
    if (map.type === 'object' && isObject(map.properties)) {
      const required = Array.isArray(map.required) ? map.required : [];
      for (const [name, schema] of Object.entries(map.properties)) out.push({ name, source, required: source === 'path' || required.includes(name), schema: isObject(schema) ? schema : {} });
      continue;
    }
    for (const [name, raw] of Object.entries(map)) {
      const entry = isObject(raw) ? raw : {};
      const schema: Json = {};
      for (const [k, v] of Object.entries(entry)) if (!PARAMETER_META_KEYS.includes(k)) schema[k] = v;
      if (source === 'path' && !schema.type) Object.assign(schema, routeParameters(handler.route).find((p) => p.name === name)?.schema ?? {});
      const optional = entry.optional === true || entry.required === false || 'default' in entry;
      out.push({
        name,
        source,
        required: source === 'path' || !optional,
        schema,
        ...(typeof entry.separator === 'string' ? { separator: entry.separator } : {}),
        ...('default' in entry ? { default: entry.default } : {}),
      });
    }
  }
  return out;
}

export function manifestCase(c: ConformanceCase, caseHeader: string | false = CASE_HEADER): ManifestCase {
  const h = c.handler;
  const wire = wireFor(c, caseHeader);
  return {
    id: c.id,
    category: c.category,
    name: c.name,
    // Not the case's description: its prose often states the expected answer.
    source: c.source,
    method: h.method.toUpperCase(),
    route: h.route,
    route_colon: colonRoute(h.route),
    parameters: normaliseParameters(h),
    body: isObject(h.body_schema) ? { required: true, schema: h.body_schema, ...(typeof h.content_type === 'string' ? { content_type: h.content_type } : {}) } : null,
    handler: h as Json,
    request: { method: wire.method, path: wire.path, headers: wire.headers, ...(wire.body !== undefined ? { body_base64: wire.body.toString('base64') } : {}) },
    handler_response: handlerAnswer(c),
  };
}

/** Route key two routers would confuse: method plus the route with parameter names and types erased. */
export function routeKey(method: string, route: string): string {
  return `${method.toUpperCase()} ${route.split('/').map((seg) => (PLACEHOLDER.test(seg) ? (seg.endsWith(':path}') ? '*' : ':') : seg)).join('/')}`;
}

/** The route table: each method + route (as routers see it) with its cases and how many distinct handler definitions share it. */
export function routeTable(cases: readonly ManifestCase[]): ManifestRoute[] {
  const table = new Map<string, ManifestRoute & { defs: Set<string> }>();
  for (const c of cases) {
    const key = routeKey(c.method, c.route);
    const row = table.get(key) ?? { method: c.method, route: c.route, route_colon: c.route_colon, cases: [], handlers: 0, defs: new Set<string>() };
    row.cases.push(c.id);
    row.defs.add(JSON.stringify(c.handler));
    row.handlers = row.defs.size;
    table.set(key, row);
  }
  return [...table.values()].map(({ defs: _defs, ...row }) => row).sort((a, b) => a.route.localeCompare(b.route) || a.method.localeCompare(b.method));
}

/** The manifest of a set of loaded cases (skipped ones listed with their reason). */
export function buildManifest(cases: readonly LoadedCase[], caseHeader: string | false = CASE_HEADER): Manifest {
  const runnable = cases.filter(isRunnable).map((c) => manifestCase(c, caseHeader));
  const protocols = cases.filter(isRunnableProtocol).map((c) => ({ id: c.id, category: c.category, name: c.name, source: c.source, kind: c.kind, server: protocolServerSpec(c) }));
  return {
    version: MANIFEST_VERSION,
    case_header: caseHeader || '',
    cases: runnable,
    routes: routeTable(runnable),
    protocols,
    skipped: cases.filter((c) => !isRunnable(c) && !isRunnableProtocol(c)).map((c) => ({ id: c.id, category: c.category, reason: isRunnableWebSocket(c) ? WEBSOCKET_NOT_IN_MANIFEST : c.skip ?? 'not runnable' })),
  };
}
