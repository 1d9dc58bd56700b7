/**
 * GraphQL cases over HTTP (and graphql-transport-ws for subscriptions), and keel's fixture for them:
 * an executable schema built from the case's SDL with its declared resolvers, served by keel's
 * GraphQL route (`graphqlRouteForSchema` + `installGraphqlRoute` on an App), so parsing, validation,
 * limits, introspection, error formatting and statuses are keel's.
 *
 * Declared resolvers (`Type.field`), as any implementation would write them:
 * - `error`: the resolver fails with `error_message` (and `error_extensions`); when the case expects an
 *   error status (≥ 400) the failure carries it (an application's auth or permission answer, as in an
 *   HTTP case without framework records), else it is a field error in a 200;
 * - a `return_value` (mock, mock_with_args, mock_with_auth, …): the resolver returns it;
 * - anything else (`factory`, `async_factory`, templates: behaviour named but not given as data): the
 *   resolver returns what the expected data holds at its response key (the case's answer for it).
 * Fields without a declared resolver read their parent's value (by response key, then by name).
 */
import { GraphQLError, GraphQLInterfaceType, Kind, GraphQLObjectType, GraphQLUnionType, buildASTSchema, parse, type GraphQLFieldResolver, type GraphQLSchema } from 'graphql';
import { pino } from 'pino';
import type { Mismatch } from '../compare.js';
import { graphqlSubscriptionSnapshot } from '../../graphql-subscription.js';
import type { GraphqlResolverSpec, GraphqlSpec } from './graphql-spec.js';
import { isObject, type Json, type KindOutcome, type KindRuntime, type PlayOptions } from './kind.js';

const ROOTS = ['Query', 'Mutation', 'Subscription'];

function expectedData(spec: GraphqlSpec): Json {
  const d = spec.expected.data ?? spec.expected.data_partial;
  return isObject(d) ? d : {};
}

/** The resolver of a declared `Type.field` (see the module comment). */
async function declaredResolver(spec: GraphqlSpec, r: GraphqlResolverSpec, parent: unknown, key: string, args: Json): Promise<unknown> {
  if (r.type === 'error' || (typeof r.error_message === 'string' && !('return_value' in r))) {
    const message = r.error_message ?? 'Resolver error';
    const extensions = isObject(r.error_extensions) ? r.error_extensions : undefined;
    if (spec.expected.status_code >= 400) {
      const { HttpError } = await import('../../../lib/http/errors.js');
      throw new HttpError(spec.expected.status_code, message, extensions ? { extensions } : {});
    }
    throw new GraphQLError(message, extensions ? { extensions } : {});
  }
  if ('return_value' in r) return r.return_value;
  const mapped = mappedAnswer(r, args);
  if (mapped !== undefined) return mapped;
  return isObject(parent) ? parent[key] : undefined;
}

/** The answer an `arg_mapping` gives for the call's arguments (a JSON text is parsed), if any. */
function mappedAnswer(r: GraphqlResolverSpec, args: Json): unknown {
  if (!isObject(r.arg_mapping)) return undefined;
  for (const v of Object.values(args)) {
    if (typeof v !== 'string' || !Object.hasOwn(r.arg_mapping, v)) continue;
    const answer = r.arg_mapping[v];
    if (typeof answer !== 'string') return answer;
    try {
      return JSON.parse(answer);
    } catch {
      return answer;
    }
  }
  return undefined;
}

/** Abstract types: `__typename` when the value names one, else the first possible type having all its keys. */
function resolveTypeOf(schema: GraphQLSchema, type: GraphQLInterfaceType | GraphQLUnionType) {
  return (value: unknown) => {
    if (isObject(value) && typeof value.__typename === 'string') return value.__typename;
    const keys = isObject(value) ? Object.keys(value) : [];
    return schema.getPossibleTypes(type).find((t) => keys.every((k) => k in t.getFields()))?.name;
  };
}

/** The field of the placeholder Query type given to an SDL without one (withQueryRoot). */
export const PLACEHOLDER_QUERY_FIELD = '_placeholder';

/**
 * The SDL with a Query type: a schema must have one (GraphQL spec §3.3.1), and a few corpus documents
 * give only `type Mutation` or `type Subscription`; they get `type Query { _placeholder: Boolean }`.
 */
export function withQueryRoot(sdl: string): string {
  const doc = parse(sdl);
  const hasQuery = doc.definitions.some((d) => (d.kind === Kind.OBJECT_TYPE_DEFINITION && d.name.value === 'Query') || (d.kind === Kind.SCHEMA_DEFINITION && d.operationTypes.some((o) => o.operation === 'query')));
  return hasQuery ? sdl : `${sdl}\n\ntype Query {\n  ${PLACEHOLDER_QUERY_FIELD}: Boolean\n}\n`;
}

/** The executable schema of a case: its SDL, its declared resolvers (see the module comment). */
export function caseSchema(spec: GraphqlSpec): GraphQLSchema {
  const schema = buildASTSchema(parse(withQueryRoot(spec.sdl)), { assumeValidSDL: true });
  const data = expectedData(spec);
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (type instanceof GraphQLInterfaceType || type instanceof GraphQLUnionType) type.resolveType = resolveTypeOf(schema, type);
    if (!(type instanceof GraphQLObjectType)) continue;
    const root = ROOTS.includes(type.name) || [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].includes(type);
    for (const field of Object.values(type.getFields())) {
      const declared = spec.resolvers[`${type.name}.${field.name}`];
      const resolve: GraphQLFieldResolver<unknown, unknown> = (parent, args, _ctx, info) => {
        const key = info.path.key as string;
        const source = root ? data : parent;
        if (declared) return declaredResolver(spec, declared, source, key, args as Json);
        return isObject(source) ? (key in source ? source[key] : source[field.name]) : undefined;
      };
      if (type === schema.getSubscriptionType()) {
        field.subscribe = async function* subscribe(parent, args, ctx, info) {
          yield { [info.path.key]: await resolve(parent, args, ctx, info) };
        };
        field.resolve = (payload, _args, _ctx, info) => (payload as Json)[info.path.key as string];
      } else {
        field.resolve = resolve;
      }
    }
  }
  return schema;
}

async function serve(raw: Json) {
  const spec = raw as GraphqlSpec;
  const { App } = await import('../../../lib/app/app.js');
  const { graphqlRouteForSchema, installGraphqlRoute } = await import('../../../lib/graphql/route.js');
  const app = new App({ host: '127.0.0.1', port: 0, graceful_shutdown: false, shutdown_timeout: 0 }, { logger: pino({ level: 'silent' }) });
  const route = graphqlRouteForSchema(spec.endpoint, 'POST', caseSchema(spec), { ...spec.limits }, spec.batching ? { batching: true } : {});
  installGraphqlRoute(app as never, route);
  await app.ready();
  const handle = await app.listen({ host: '127.0.0.1', port: 0, handleSignals: false });
  return { url: handle.url, close: () => handle.close() };
}

/** `expected` ⊆ `actual`: objects by their listed members, arrays item by item with equal lengths. */
export function isSubset(expected: unknown, actual: unknown): boolean {
  if (expected === null || typeof expected !== 'object') return expected === actual;
  if (actual === null || typeof actual !== 'object') return false;
  if (Array.isArray(expected)) return Array.isArray(actual) && expected.length === actual.length && expected.every((v, i) => isSubset(v, actual[i]));
  return Object.entries(expected).every(([k, v]) => isSubset(v, (actual as Json)[k]));
}

function deepEqual(a: unknown, b: unknown): boolean {
  return isSubset(a, b) && isSubset(b, a);
}

/** The differences between the case's expected answer and a GraphQL response (status, headers, body). */
export function compareGraphql(spec: GraphqlSpec, status: number, headers: Record<string, string>, body: unknown): Mismatch[] {
  const exp = spec.expected;
  if (status !== exp.status_code) return [{ what: 'status', expected: exp.status_code, actual: status }];
  const out: Mismatch[] = [];
  for (const [k, v] of Object.entries(exp.headers ?? {})) {
    const got = headers[k.toLowerCase()];
    if (got === undefined || got.toLowerCase() !== v.toLowerCase()) out.push({ what: `header ${k.toLowerCase()}`, expected: v, actual: got ?? '<<absent>>' });
  }
  // A batch's answer is an array of responses: the case lists their data in order.
  if (Array.isArray(exp.data)) {
    if (!Array.isArray(body) || body.length !== exp.data.length) return [...out, { what: 'body (batch)', expected: `${exp.data.length} responses`, actual: body }];
    exp.data.forEach((d, i) => {
      const got = isObject(body[i]) ? (body[i] as Json).data : undefined;
      if (!deepEqual(d ?? null, got ?? null)) out.push({ what: `body $[${i}].data`, expected: d, actual: got ?? null });
    });
    return out;
  }
  const b = isObject(body) ? body : {};
  if ('data' in exp && !deepEqual(exp.data ?? null, b.data ?? null)) out.push({ what: 'body $.data', expected: exp.data, actual: b.data ?? null });
  if (exp.data_partial !== undefined && !isSubset(exp.data_partial, b.data)) out.push({ what: 'body $.data (partial)', expected: exp.data_partial, actual: b.data ?? null });
  const errors = Array.isArray(b.errors) ? (b.errors as Json[]) : [];
  if (exp.errors) {
    if (errors.length !== exp.errors.length) out.push({ what: 'body $.errors length', expected: exp.errors.length, actual: errors.length });
    exp.errors.forEach((e, i) => {
      for (const k of ['message', 'path', 'locations', 'extensions']) {
        if (e[k] !== undefined && !isSubset(e[k], errors[i]?.[k])) out.push({ what: `body $.errors[${i}].${k}`, expected: e[k], actual: errors[i]?.[k] ?? '<<missing>>' });
      }
    });
  } else if (errors.length && exp.status_code < 300) {
    out.push({ what: 'body $.errors', expected: '<<absent>>', actual: errors });
  }
  return out;
}

async function playSubscription(spec: GraphqlSpec, baseUrl: string, options: PlayOptions): Promise<KindOutcome> {
  const url = `${baseUrl.replace(/^http/, 'ws').replace(/\/$/, '')}${spec.endpoint}`;
  const body = (isObject(spec.request.body) ? spec.request.body : {}) as { query?: string; variables?: Json; operationName?: string };
  const sent = [`graphql-transport-ws ${spec.endpoint}: subscribe`];
  const snap = await graphqlSubscriptionSnapshot(url, {
    query: body.query ?? '', ...(body.variables ? { variables: body.variables } : {}), ...(body.operationName ? { operationName: body.operationName } : {}),
    ...(spec.request.connection_params ? { connectionParams: spec.request.connection_params } : {}),
    ...(options.caseHeader ? { headers: { [options.caseHeader[0]]: options.caseHeader[1] } } : {}),
    timeoutMs: Math.min(options.timeoutMs, 3000),
  });
  if (!snap.acknowledged) return { mismatches: [], error: `subscription not acknowledged: ${JSON.stringify(snap.errors)}`, sent };
  // The handshake's 101 is the status of a subscription; its first event is the body.
  const status = spec.expected.status_code === 101 ? 101 : 200;
  const event = snap.event ?? (snap.errors.length ? { errors: snap.errors } : {});
  return { mismatches: compareGraphql(spec, status, {}, event), sent, expected: spec.expected, actual: event };
}

async function play(raw: Json, baseUrl: string, options: PlayOptions): Promise<KindOutcome> {
  const spec = raw as GraphqlSpec;
  if (spec.operation_type === 'subscription' && spec.request.method !== 'GET') return playSubscription(spec, baseUrl, options);
  const r = spec.request;
  const headers: Record<string, string> = { ...r.headers };
  if (options.caseHeader) headers[options.caseHeader[0]] = options.caseHeader[1];
  if (r.cookies) headers.Cookie = Object.entries(r.cookies).map(([k, v]) => `${k}=${v}`).join('; ');
  let body: string | FormData | undefined;
  if (r.multipart) {
    const form = new FormData();
    for (const p of r.multipart) form.append(p.name, p.filename !== undefined ? new Blob([p.content], { type: p.mimetype }) : p.content, ...(p.filename !== undefined ? [p.filename] : []));
    body = form;
    for (const k of Object.keys(headers)) if (k.toLowerCase() === 'content-type') delete headers[k];
  } else if (r.body !== undefined && r.method !== 'GET') {
    body = JSON.stringify(r.body);
    if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-type')) headers['Content-Type'] = 'application/json';
  }
  const sent = [`${r.method} ${r.path}${r.multipart ? ' (multipart)' : ''}`];
  const res = await fetch(new URL(r.path, baseUrl), { method: r.method, headers, ...(body !== undefined ? { body } : {}), signal: AbortSignal.timeout(options.timeoutMs) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Compared as text: a GraphQL answer that is not JSON fails on data and errors.
  }
  const got = Object.fromEntries(res.headers.entries());
  return { mismatches: compareGraphql(spec, res.status, got, parsed), sent, expected: spec.expected, actual: { status: res.status, body: parsed } };
}

export const graphqlRuntime: KindRuntime = { play, serve };
