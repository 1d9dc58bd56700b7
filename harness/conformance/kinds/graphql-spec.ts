/**
 * GraphQL documents (`{operation_type, endpoint, schema (SDL), request, expected_response {status_code,
 * data | errors}, resolvers}`) as GraphQL-over-HTTP cases: the spec the manifest carries under
 * `protocol`, and what keel's fixture builds its schema from.
 *
 * The request: `request.body` when the case gives one (a JSON object, or an array for a batch), else
 * `{query, variables, operationName, extensions}` from the request's own fields; a
 * `multipart_request` is sent as the GraphQL multipart request (its parts in order); a subscription
 * is played over graphql-transport-ws on the endpoint (with `connection_init` as the connection
 * parameters).
 */
import { isObject, type Json, type KindLoad, type KindLoader } from './kind.js';

/** One declared resolver (`Type.field`): its `type` (mock, error, factory, …) and the fields that type uses. */
export interface GraphqlResolverSpec extends Json {
  type?: string;
  return_value?: unknown;
  error_message?: string;
  error_extensions?: Json;
  /** Answers by argument value (`{"user-1": "<JSON>"}`): the resolver returns the one its arguments name. */
  arg_mapping?: Json;
}

export interface GraphqlSpec extends Json {
  operation_type: 'query' | 'mutation' | 'subscription';
  endpoint: string;
  sdl: string;
  resolvers: Record<string, GraphqlResolverSpec>;
  /** The route takes batches (a JSON array of operations): the case sends one, so its route must. */
  batching?: true;
  /** Introspection, depth and complexity limits the route declares (`handler_config`, `depth_limit`, `complexity_limit`). */
  limits: { introspection_enabled: boolean; depth_limit: number | null; complexity_limit: number | null };
  request: {
    method: string;
    path: string;
    headers: Record<string, string>;
    cookies?: Record<string, string>;
    /** The JSON body (object or batch array); absent for multipart and GET requests. */
    body?: unknown;
    /** The multipart request's parts, in order: `{name, content, filename?, mimetype?}`. */
    multipart?: Array<{ name: string; content: string; filename?: string; mimetype?: string }>;
    connection_params?: Json;
  };
  expected: { status_code: number; data?: unknown; data_partial?: unknown; errors?: Json[]; headers?: Record<string, string> };
}

function requestBody(request: Json): unknown {
  if (request.body !== undefined) return request.body;
  if (typeof request.query !== 'string') return undefined;
  const out: Json = { query: request.query };
  for (const k of ['variables', 'operationName', 'extensions']) if (request[k] !== undefined) out[k] = request[k];
  return out;
}

function multipartParts(doc: Json): GraphqlSpec['request']['multipart'] {
  const mp = isObject(doc.multipart_request) ? doc.multipart_request : undefined;
  if (!mp || !isObject(mp.parts)) return undefined;
  return Object.values(mp.parts).filter(isObject).map((p) => ({
    name: String(p.name ?? ''), content: typeof p.content === 'string' ? p.content : JSON.stringify(p.content ?? ''),
    ...(p.type === 'file' || typeof p.filename === 'string' ? { filename: String(p.filename ?? p.name), mimetype: String(p.mimetype ?? 'application/octet-stream') } : {}),
  }));
}

function stringRecord(v: unknown): Record<string, string> {
  return isObject(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)])) : {};
}

/** A GraphQL document as a case spec (see the module comment). */
export function fromGraphqlDocument(doc: Json): KindLoad {
  const request = isObject(doc.request) ? doc.request : {};
  const exp = isObject(doc.expected_response) ? doc.expected_response : {};
  if (typeof exp.status_code !== 'number') return { skip: 'malformed GraphQL case: expected_response.status_code is not a number' };
  const config = isObject(doc.handler_config) ? doc.handler_config : {};
  const endpoint = typeof doc.endpoint === 'string' ? doc.endpoint : typeof request.path === 'string' ? request.path.split('?', 1)[0]! : '/graphql';
  const multipart = multipartParts(doc);
  const body = multipart ? undefined : requestBody(request);
  if (!multipart && body === undefined && request.method !== 'GET') return { skip: 'malformed GraphQL case: no request body, query or multipart_request' };
  const expected: GraphqlSpec['expected'] = { status_code: exp.status_code };
  for (const k of ['data', 'data_partial'] as const) if (k in exp) expected[k] = exp[k];
  if (Array.isArray(exp.errors)) expected.errors = exp.errors as Json[];
  if (isObject(exp.headers)) expected.headers = stringRecord(exp.headers);
  const limit = (v: unknown) => (typeof v === 'number' ? v : isObject(v) && typeof v.max_depth === 'number' ? v.max_depth : isObject(v) && typeof v.max_complexity === 'number' ? v.max_complexity : null);
  const spec: GraphqlSpec = {
    operation_type: doc.operation_type === 'mutation' || doc.operation_type === 'subscription' ? doc.operation_type : 'query',
    endpoint,
    sdl: String(doc.schema),
    resolvers: (isObject(doc.resolvers) ? doc.resolvers : {}) as Record<string, GraphqlResolverSpec>,
    limits: { introspection_enabled: config.introspection_enabled !== false, depth_limit: limit(doc.depth_limit), complexity_limit: limit(doc.complexity_limit) },
    ...(Array.isArray(body) ? { batching: true as const } : {}),
    request: {
      method: typeof request.method === 'string' ? request.method.toUpperCase() : 'POST',
      path: typeof request.path === 'string' ? request.path : endpoint,
      headers: stringRecord(request.headers),
      ...(isObject(request.cookies) ? { cookies: stringRecord(request.cookies) } : {}),
      ...(body !== undefined ? { body } : {}),
      ...(multipart ? { multipart } : {}),
      ...(isObject(request.connection_init) ? { connection_params: request.connection_init } : {}),
    },
    expected,
  };
  return { spec, ...(typeof doc.name === 'string' ? { name: doc.name } : {}), ...(typeof doc.description === 'string' ? { description: doc.description } : {}) };
}

export const graphqlLoader: KindLoader = {
  kind: 'graphql',
  load(doc) {
    if (!isObject(doc) || typeof doc.schema !== 'string' || typeof doc.operation_type !== 'string') return undefined;
    return fromGraphqlDocument(doc);
  },
  server(raw) {
    const spec = raw as GraphqlSpec;
    // Resolvers answer from the expected data (those written as code, `factory`), and an `error`
    // resolver fails with the case's error status; validation and parse errors stay the server's.
    return {
      endpoint: spec.endpoint, sdl: spec.sdl, resolvers: spec.resolvers, limits: spec.limits, ...(spec.batching ? { batching: true } : {}),
      data: spec.expected.data ?? spec.expected.data_partial ?? null,
      resolver_error_status: spec.expected.status_code >= 400 ? spec.expected.status_code : null,
    };
  },
};
