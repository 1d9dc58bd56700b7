/**
 * GraphQL over HTTP (https://graphql.github.io/graphql-over-http/) on graphql-http's handler.
 *
 * We use graphql-http's server-agnostic `createHandler` (the core that `graphql-http/lib/use/http`
 * wraps) with a thin node adapter of our own, because the packaged adapter reads the body without a
 * size cap and writes the response itself; keel needs the body read under `max_body_size` and the
 * status table of docs/graphql.md:
 *
 * - parse, validation, variable-coercion and limit errors (no `data`): 400 with `errors`
 *   (graphql-http answers 200 for these under `application/json`; the spec allows 4xx, see §7.1.2);
 * - execution errors: 200 with `data` and `errors`;
 * - a resolver throwing keel's GraphQlError AuthenticationError / AuthorizationError /
 *   RateLimitExceeded: 401 / 403 / 429 (its ERROR_CODES status), body still a GraphQL response;
 * - transport errors (405, 406, 413, 415, 500): RFC 9457 problem details via sendProblem.
 * A schema declaring `scalar Upload` also takes the GraphQL multipart request (file uploads, uploads.ts);
 * automatic persisted queries (persisted.ts) are served unless `persistedQueries: false`.
 * Unexpected resolver exceptions are reported as "Internal server error" without their message.
 */
import type { ServerResponse } from 'node:http';
import { createHandler, type OperationContext } from 'graphql-http';
import { execute, getOperationAST, GraphQLError, type ExecutionArgs, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { readRawBody } from '../http/body.js';
import { GraphQlError, HttpError, KeelError } from '../http/errors.js';
import { problemFor, sendProblem } from '../http/problem.js';
import { parseMediaType } from '../http/content.js';
import { DEFAULT_JSON_POISONING, type JsonPoisoning } from '../http/json-parse.js';
import type { KeelRequest } from '../http/request.js';
import { DocumentCache, isRejected, type DocumentCacheOptions } from './documents.js';
import type { GraphqlLimits } from './limits.js';
import { DEFAULT_GRAPHQL_MAX_RESPONSE_BYTES, responseTooLarge, resultExceeds } from './budget.js';
import { withoutSuggestions } from './suggestions.js';
import { operationFromMultipart, takesUploads } from './uploads.js';
import { PersistedQueries, withPersistedQuery, type PersistedQueryOptions } from './persisted.js';
import { batchBody, batchOf, DEFAULT_GRAPHQL_MAX_BATCH, type GraphqlBatching } from './batch.js';
import { refuseDeepQuery, requestBody } from './request-body.js';
import { runWork, type AppWorkGate } from '../server/cost.js';
import { traceOperation } from '../observability/operation-spans.js';
import { requestTraceOf } from '../observability/spans.js';

/** Default cap on a GraphQL request body when the App gives none: 1 MiB. */
export const DEFAULT_GRAPHQL_MAX_BODY_SIZE = 1024 * 1024;

export interface GraphqlHttpOptions {
  /**
   * Introspection / depth / complexity controls and the answer cap. Default: everything allowed, depth and
   * complexity unlimited, `max_response_bytes` DEFAULT_GRAPHQL_MAX_RESPONSE_BYTES (1 MiB; null = unlimited).
   */
  limits?: Partial<GraphqlLimits>;
  /** Body cap in bytes; null = unlimited. Default DEFAULT_GRAPHQL_MAX_BODY_SIZE (1 MiB). */
  maxBodySize?: number | null;
  /** Bounds of the cache of parsed and validated queries. Default: DocumentCache's defaults. */
  documentCache?: DocumentCacheOptions;
  /** Context value for resolvers. Default `{ req }`. */
  context?: (req: KeelRequest) => OperationContext | Promise<OperationContext>;
  /** `__proto__` / `constructor.prototype` keys in a JSON body. Default: refused with a 400 problem (the App passes its ServerConfig's). */
  jsonPoisoning?: JsonPoisoning;
  /**
   * The gate of expensive work (lib/server/cost.ts): a request is admitted before its body is read (429 / 503
   * problem with Retry-After otherwise), its operation queued and its measured time charged to the client.
   * Default none.
   */
  workGate?: AppWorkGate;
  /** Batched operations (a JSON array body, lib/graphql/batch.ts): true or `{ max_operations }`. Default false (one operation per request, GraphQL over HTTP). */
  batching?: GraphqlBatching | boolean;
  /** Automatic persisted queries (lib/graphql/persisted.ts): the bounds of the kept texts, or false to refuse none and serve none. Default on, DocumentCache's bounds. */
  persistedQueries?: PersistedQueryOptions | false;
}

/**
 * Per request, through graphql-http: the execution result, so the status can be chosen from the original thrown
 * errors; and a refusal decided before graphql-http parses the request (a persisted query not found).
 */
interface Executed { result: ExecutionResult | undefined; refusal?: GraphQLError }

/** One operation's answer: a GraphQL response (status, headers, body text), or a transport error's problem. */
type Operated = { status: number; headers: Record<string, string>; answer: string | null } | { problem: ReturnType<typeof problemFor>; extra: Record<string, string> };

/** The request whose operation is executed, on the execution args when it has spans. */
const TRACED = Symbol('keel.graphql.traced');
type TracedArgs = ExecutionArgs & { [TRACED]?: KeelRequest; contextValue?: OperationContext };

/**
 * graphql's execute, inside an INTERNAL span named per the GraphQL semantic conventions (`query getUser`,
 * `graphql.operation.type` / `.name`) when the request has spans (lib/observability/operation-spans.ts).
 */
function tracedExecute(args: ExecutionArgs): ReturnType<typeof execute> {
  const req = (args as TracedArgs)[TRACED];
  if (!req) return execute(args);
  const op = getOperationAST(args.document, args.operationName);
  const type = op?.operation ?? 'query';
  const name = op?.name?.value;
  return traceOperation(req, name ? `${type} ${name}` : type, (): Record<string, string> => (name ? { 'graphql.operation.type': type, 'graphql.operation.name': name } : { 'graphql.operation.type': type }), () => execute(args), (result) => {
    const first = (result as ExecutionResult).errors?.[0];
    return first ? { error: first.message } : undefined;
  });
}

/** The GraphQL context keel passes to resolvers by default. */
export interface GraphqlContext { req: KeelRequest }

const MESSAGE_HIDDEN = 'Internal server error';

function keelOf(err: unknown): KeelError | undefined {
  const original = err instanceof GraphQLError ? err.originalError : err;
  return original instanceof KeelError ? original : undefined;
}

/** Hide unexpected errors (500s never leak internals); give keel's GraphQlError a stable code. */
export function formatGraphqlError(err: Readonly<GraphQLError | Error>): GraphQLError | Error {
  // Plain Errors here are graphql-http's own request-parsing messages ("Missing query", …).
  if (!(err instanceof GraphQLError)) return new GraphQLError(err.message);
  const original = err.originalError;
  if (!original || original instanceof GraphQLError) return err;
  const keel = keelOf(err);
  const expose = keel !== undefined && (keel.status < 500 || keel instanceof GraphQlError && keel.status === 200);
  // An exposed application error that names its own code (`extensions.code`) keeps it: the client's contract.
  const own = expose && !(keel instanceof GraphQlError) && typeof err.extensions?.code === 'string' ? err.extensions.code : undefined;
  const code = own ?? (keel instanceof GraphQlError ? keel.kind.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase() : keel?.code ?? 'INTERNAL_SERVER_ERROR');
  return new GraphQLError(expose ? err.message : MESSAGE_HIDDEN, {
    nodes: err.nodes, source: err.source, positions: err.positions, path: err.path,
    extensions: { ...err.extensions, code },
  });
}

/** HTTP status of an execution result: 200 unless a resolver threw a keel error with its own status. */
function executionStatus(errors: readonly GraphQLError[]): number {
  let status = 200;
  for (const e of errors) {
    const keel = keelOf(e);
    if (!keel || keel.status === 200) continue;
    // 401/403/429 name the caller's problem and win over a 500 of some other field.
    if (status === 200 || (keel.status < 500 && status >= 500)) status = keel.status >= 500 ? 500 : keel.status;
  }
  return status;
}

/**
 * A node-level handler serving GraphQL over HTTP (GET for queries, POST for everything) for `schema`.
 *
 * @example
 * import { createServer } from 'node:http';
 * const handler = createGraphqlHttpHandler(builtinSchema('query_only'), { limits: { depth_limit: 5 } });
 * createServer((req, res) => void handler(req, res)).listen(4000, '127.0.0.1');
 */
export function createGraphqlHttpHandler(schema: GraphQLSchema, options: GraphqlHttpOptions = {}) {
  const limits: GraphqlLimits = {
    introspection_enabled: options.limits?.introspection_enabled ?? true,
    depth_limit: options.limits?.depth_limit ?? null,
    complexity_limit: options.limits?.complexity_limit ?? null,
    max_response_bytes: options.limits?.max_response_bytes === undefined ? DEFAULT_GRAPHQL_MAX_RESPONSE_BYTES : options.limits.max_response_bytes,
  };
  const maxResponseBytes = limits.max_response_bytes ?? null;
  const maxBodySize = options.maxBodySize === undefined ? DEFAULT_GRAPHQL_MAX_BODY_SIZE : options.maxBodySize;
  const poisoning = options.jsonPoisoning ?? DEFAULT_JSON_POISONING;
  const contextFor = options.context ?? ((req: KeelRequest) => ({ req }) as unknown as OperationContext);
  const documents = new DocumentCache(schema, limits, options.documentCache);
  const gate = options.workGate;
  const uploads = takesUploads(schema);
  const persisted = options.persistedQueries === false ? undefined : new PersistedQueries(options.persistedQueries);
  const batching = options.batching === true ? {} : options.batching || undefined;
  const handle = createHandler<KeelRequest, Executed, OperationContext>({
    schema,
    context: (req) => contextFor(req.raw),
    // Parse + validation (specified rules and the route's limits) through the per-route document
    // cache; graphql-http still checks the operation (GET mutations), builds the context and executes.
    execute: tracedExecute,
    onSubscribe: (req, params) => {
      if (req.context.refusal) return [req.context.refusal];
      let checked;
      try {
        checked = documents.prepare(params.query, params.variables);
      } catch {
        // DocumentCache answers every query fault with GraphQL errors; anything else is ours (no internals).
        return [new GraphQLError(MESSAGE_HIDDEN, { extensions: { code: 'INTERNAL_SERVER_ERROR' } })];
      }
      if (isRejected(checked)) return checked;
      const args: TracedArgs = { schema, document: checked, operationName: params.operationName, variableValues: params.variables };
      if (requestTraceOf(req.raw)) args[TRACED] = req.raw;
      return args;
    },
    // Variable coercion errors come from execution and suggest names too ("Did you mean \"title\"?").
    formatError: limits.introspection_enabled ? formatGraphqlError : (err) => hideSuggestion(formatGraphqlError(err)),
    onOperation: (req, _args, result) => {
      if (Symbol.asyncIterator in result) return undefined;
      // The answer cap after execution (lib/graphql/budget.ts): counted up to the limit, not serialised to
      // learn it is too large. An error that prevented a valid response: `data: null` (GraphQL spec §7.1.2).
      const answer: ExecutionResult = maxResponseBytes !== null && resultExceeds(result, maxResponseBytes)
        ? { data: null, errors: [responseTooLarge(maxResponseBytes)] }
        : result;
      req.context.result = answer;
      return answer;
    },
  });

  /** One operation through graphql-http, and the status table above applied to its answer. */
  const operate = async (req: KeelRequest, requestBody: string | Record<string, unknown> | null, requestUrl: string, headers: KeelRequest['headers']): Promise<Operated> => {
    const executed: Executed = { result: undefined };
    let body = requestBody;
    let url = requestUrl;
    if (persisted) ({ body, url, refusal: executed.refusal } = withPersistedQuery(persisted, body, url));
    const [payload, init] = await handle({ method: req.method ?? 'GET', url, headers, body, raw: req, context: executed });
    let status = init.status;
    const out = init.headers ?? {};
    if (status === 405 || status === 406 || status === 415) {
      // Not a GraphQL response: transport errors are problem details (RFC 9457).
      const code = status === 405 ? 'KEEL_METHOD_NOT_ALLOWED' : status === 406 ? 'KEEL_NOT_ACCEPTABLE' : 'KEEL_UNSUPPORTED_MEDIA_TYPE';
      const detail = status === 406 ? `Acceptable media types: ${out.accept ?? 'application/json'}` : payloadMessage(payload);
      const extra: Record<string, string> = {};
      if (out.allow) extra.Allow = out.allow;
      if (out.accept) extra.Accept = out.accept;
      return { problem: problemFor(code, detail), extra };
    }
    if (status === 200 && payload) {
      // No execution result with `data`: a request error (parse, validation, variable coercion,
      // limits; GraphQL spec §7.1.2), which graphql-http answers with 200 under application/json.
      const { result } = executed;
      status = result && 'data' in result ? executionStatus(result.errors ?? []) : 400;
    }
    let answer = payload;
    // The count before serialising leaves escapes and multi-byte characters out: the bytes decide.
    if (answer !== null && maxResponseBytes !== null && executed.result && Buffer.byteLength(answer) > maxResponseBytes) {
      answer = JSON.stringify({ data: null, errors: [responseTooLarge(maxResponseBytes).toJSON()] });
    }
    return { status, headers: out as Record<string, string>, answer };
  };

  return async function graphqlHttpHandler(req: KeelRequest, res: ServerResponse): Promise<void> {
    try {
      // Refused before the body is read: a client past its CPU budget, or an overloaded server (WorkRefusal).
      gate?.gate.admit(gate.keyOf(req));
      let body: string | Record<string, unknown> | null = null;
      // GET `variables` (and `extensions`) are JSON too: one nesting rule, checked before graphql-http parses them.
      if (req.method !== 'POST') refuseDeepQuery(req.url);
      let requestHeaders = req.headers;
      if (req.method === 'POST') {
        const raw = await readRawBody(req, maxBodySize);
        if (uploads && parseMediaType(req.headers['content-type'])?.type === 'multipart/form-data') {
          // The operation with its files in place, handed on as the JSON request it describes.
          body = await operationFromMultipart(raw, req.headers, poisoning);
          requestHeaders = { ...req.headers, 'content-type': 'application/json' };
        } else {
          body = requestBody(raw.toString('utf8'), req.headers['content-type'], poisoning);
        }
      }
      if (batching && typeof body === 'string') {
        const operations = batchOf(body, req.headers['content-type'], batching.max_operations ?? DEFAULT_GRAPHQL_MAX_BATCH, poisoning);
        if (operations) {
          // The whole batch is one piece of work: admitted, queued and charged together.
          const parts = await runWork(gate, req, res, async () => {
            const out: Operated[] = [];
            for (const op of operations) out.push(await operate(req, op, req.url ?? '/', requestHeaders));
            return out;
          });
          if (parts === undefined) return;
          const text = batchBody(parts.map((p) => ('problem' in p ? { detail: p.problem.detail ?? p.problem.title } : { answer: p.answer })));
          res.statusCode = 200;
          res.setHeader('Content-Type', parts.find((p): p is Extract<Operated, { status: number }> => 'status' in p)?.headers['content-type'] ?? 'application/json; charset=utf-8');
          res.setHeader('Content-Length', Buffer.byteLength(text));
          res.end(text);
          return;
        }
      }
      // Parse, validation and execution: queued, measured and charged to the client (lib/server/cost.ts).
      const operated = await runWork(gate, req, res, () => operate(req, body, req.url ?? '/', requestHeaders));
      if (operated === undefined) return;
      if ('problem' in operated) {
        sendProblem(res, operated.problem, operated.extra);
        return;
      }
      res.statusCode = operated.status;
      for (const k in operated.headers) res.setHeader(k, operated.headers[k]!);
      if (operated.answer !== null) res.setHeader('Content-Length', Buffer.byteLength(operated.answer));
      res.end(operated.answer ?? undefined);
    } catch (err) {
      // HttpError: body too large (413) or aborted (400); anything else is an internal error.
      sendProblem(res, err instanceof HttpError ? err : problemFor('KEEL_INTERNAL'));
    }
  };
}

function hideSuggestion(err: GraphQLError | Error): GraphQLError | Error {
  return err instanceof GraphQLError ? withoutSuggestions(err) : err;
}

function payloadMessage(payload: string | null): string | undefined {
  if (!payload) return undefined;
  try {
    const parsed = JSON.parse(payload) as { errors?: { message?: string }[] };
    return parsed.errors?.[0]?.message;
  } catch {
    return undefined;
  }
}
