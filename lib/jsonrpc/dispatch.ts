/**
 * JSON-RPC 2.0 dispatch (https://www.jsonrpc.org/specification), transport-free: bytes in, response
 * object(s) out, `undefined` when nothing is to be sent (notifications only).
 *
 * Why not jayson's Server.call? It was the first choice, but it leaves a batch holding a nested array
 * unanswered (the callback never fires, so the HTTP request hangs), sends no `data` explaining an
 * Invalid Request, and spells the reserved messages differently from §5.1. The protocol itself is
 * small; what keel adds (schema-checked params and results, batch limits) sits naturally here.
 */
import { JSON_RPC_ERRORS, JsonRpcError, describeSchemaErrors, invalidParamsData, type JsonRpcErrorObject } from './errors.js';
import type { JsonRpcId, JsonRpcRegistry, RegisteredRpcMethod, RpcContext } from './registry.js';
import { isThenable } from '../app/handler.js';
import { HttpError } from '../http/errors.js';
import { DEFAULT_JSON_POISONING, parseJsonText, type JsonPoisoning } from '../http/json-parse.js';
import type { KeelRequest } from '../http/request.js';
import { traceOperation } from '../observability/operation-spans.js';
import { requestTraceOf } from '../observability/spans.js';

export interface JsonRpcSuccess {
  jsonrpc: '2.0';
  result: unknown;
  id: JsonRpcId;
}
export interface JsonRpcFailure {
  jsonrpc: '2.0';
  error: JsonRpcErrorObject;
  id: JsonRpcId;
}
export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;

export interface DispatchOptions {
  /** Accept batches (arrays of calls). */
  enableBatch: boolean;
  /** Most calls one batch may hold. */
  maxBatchSize: number;
  /** Result of the built-in `rpc.discover` (an OpenRPC document); absent: the method is not offered. */
  discover?: () => unknown;
  /** Told about errors a handler threw that are not JsonRpcError (the client only sees -32603). */
  onHandlerError?: (err: unknown, method: string) => void;
  /** `__proto__` / `constructor.prototype` keys: refused (-32600, the default), removed or kept (ServerConfig.on_proto_poisoning). */
  jsonPoisoning?: JsonPoisoning;
}

type ReservedError = (typeof JSON_RPC_ERRORS)[keyof typeof JSON_RPC_ERRORS];

function failure(id: JsonRpcId, err: ReservedError | JsonRpcErrorObject, data?: unknown): JsonRpcFailure {
  const error: JsonRpcErrorObject = { code: err.code, message: err.message };
  if (data !== undefined) error.data = data;
  else if ('data' in err && err.data !== undefined) error.data = err.data;
  return { jsonrpc: '2.0', error, id };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isValidId(id: unknown): id is JsonRpcId {
  return id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

/** Why a call object is not a valid Request object (§4), or undefined when it is. */
export function envelopeProblem(msg: unknown): string | undefined {
  if (!isObject(msg)) return 'a request must be a JSON object';
  if (msg.jsonrpc !== '2.0') return "jsonrpc must be '2.0'";
  if (typeof msg.method !== 'string') return 'method must be a string';
  if ('params' in msg && msg.params !== undefined && typeof msg.params !== 'object') return 'params must be an object or array';
  if ('params' in msg && msg.params === null) return 'params must be an object or array';
  if ('id' in msg && !isValidId(msg.id)) return 'id must be a string, number, or null';
  return undefined;
}

/** Params a method sees when the client omitted them (§4.2: params MAY be omitted). */
function defaultParams(schema: unknown): unknown {
  return isObject(schema) && schema.type === 'array' ? [] : {};
}

/** A value now, or later when a handler is async. Sync handlers are answered without a promise. */
export type Eventually<T> = T | Promise<T>;

function handlerFailure(err: unknown, id: JsonRpcId, method: RegisteredRpcMethod, options: DispatchOptions): JsonRpcFailure {
  if (err instanceof JsonRpcError) return failure(id, err.toJSON());
  options.onHandlerError?.(err, method.info.method_name);
  return failure(id, JSON_RPC_ERRORS.INTERNAL_ERROR);
}

function settle(method: RegisteredRpcMethod, result: unknown, id: JsonRpcId): JsonRpcSuccess | JsonRpcFailure {
  // §5: `result` is REQUIRED on success; a handler that returns nothing answers null.
  if (result === undefined) result = null;
  if (method.validateResult && !method.validateResult(result)) {
    return failure(id, JSON_RPC_ERRORS.INTERNAL_ERROR, {
      reason: `The result of ${JSON.stringify(method.info.method_name)} does not match its result_schema`,
      errors: describeSchemaErrors(method.validateResult.errors, result),
    });
  }
  return { jsonrpc: '2.0', result, id };
}

function invoke(method: RegisteredRpcMethod, params: unknown, ctx: RpcContext, options: DispatchOptions): Eventually<JsonRpcSuccess | JsonRpcFailure> {
  const id = ctx.id ?? null;
  if (method.validateParams) {
    if (params === undefined) params = defaultParams(method.info.params_schema);
    if (!method.validateParams(params)) {
      return failure(id, JSON_RPC_ERRORS.INVALID_PARAMS, invalidParamsData(describeSchemaErrors(method.validateParams.errors, params)));
    }
  }
  let result: unknown;
  try {
    result = method.handler(params, ctx);
  } catch (err) {
    return handlerFailure(err, id, method, options);
  }
  if (!isThenable(result)) return settle(method, result, id);
  return Promise.resolve(result).then((value) => settle(method, value, id), (err: unknown) => handlerFailure(err, id, method, options));
}

/** A call's span attributes (OpenTelemetry JSON-RPC semantic conventions). */
function rpcAttributes(method: string, id: JsonRpcId | undefined): Record<string, string> {
  const a: Record<string, string> = { 'rpc.system': 'jsonrpc', 'rpc.jsonrpc.version': '2.0', 'rpc.method': method };
  if (id !== undefined && id !== null) a['rpc.jsonrpc.request_id'] = String(id);
  return a;
}

/** An error answer's code and message on the call's span. */
function rpcOutcome(response: JsonRpcResponse): { attributes: Record<string, string | number>; error: string } | undefined {
  if (!('error' in response)) return undefined;
  return { attributes: { 'rpc.jsonrpc.error_code': response.error.code, 'rpc.jsonrpc.error_message': response.error.message }, error: response.error.message };
}

/** dispatchOne without the promise when the method answers synchronously. */
export function runOne(
  registry: JsonRpcRegistry,
  msg: unknown,
  options: DispatchOptions,
  request?: KeelRequest,
): Eventually<JsonRpcResponse | undefined> {
  const problem = envelopeProblem(msg);
  if (problem !== undefined) {
    // An invalid Request is always answered, even without an id (§5). Its id is echoed when it could
    // be read: a well-typed id in an object that at least carries a `jsonrpc` member. Without that
    // member the object is not recognisably JSON-RPC 2.0, so nothing in it is trusted: id null.
    const id = isObject(msg) && 'jsonrpc' in msg && isValidId(msg.id) ? msg.id : null;
    return failure(id, JSON_RPC_ERRORS.INVALID_REQUEST, { reason: problem });
  }
  const call = msg as { method: string; params?: unknown; id?: JsonRpcId };
  const notification = !('id' in call);
  const id = notification ? null : (call.id as JsonRpcId);
  let response: Eventually<JsonRpcResponse>;
  if (call.method === 'rpc.discover' && options.discover) {
    response = { jsonrpc: '2.0', result: options.discover(), id };
  } else {
    const method = registry.get(call.method);
    if (!method) {
      response = failure(id, JSON_RPC_ERRORS.METHOD_NOT_FOUND, { method: call.method });
    } else {
      const ctx: RpcContext = { request, id: notification ? undefined : id, notification, method: method.info };
      // Spans on: one INTERNAL span per call (lib/observability/operation-spans.ts); off: invoke alone.
      response = requestTraceOf(request)
        ? traceOperation(request, call.method, () => rpcAttributes(call.method, notification ? undefined : id), () => invoke(method, call.params, ctx, options), rpcOutcome)
        : invoke(method, call.params, ctx, options);
    }
  }
  if (!notification) return response;
  // A notification is never answered (§4.1), but an async handler still runs to its end first.
  return isThenable(response) ? response.then(() => undefined) : undefined;
}

/** Run one call; undefined for a notification (whatever happened, §4.1). */
export async function dispatchOne(
  registry: JsonRpcRegistry,
  msg: unknown,
  options: DispatchOptions,
  request?: KeelRequest,
): Promise<JsonRpcResponse | undefined> {
  return runOne(registry, msg, options, request);
}

function answered(responses: readonly (JsonRpcResponse | undefined)[]): JsonRpcResponse[] | undefined {
  const sent = responses.filter((r): r is JsonRpcResponse => r !== undefined);
  return sent.length > 0 ? sent : undefined;
}

/** dispatch without the promise when every method called answers synchronously. */
export function run(
  registry: JsonRpcRegistry,
  body: string | Buffer,
  options: DispatchOptions,
  request?: KeelRequest,
): Eventually<JsonRpcResponse | JsonRpcResponse[] | undefined> {
  let payload: unknown;
  try {
    payload = parseJsonText(typeof body === 'string' ? body : body.toString('utf8'), options.jsonPoisoning ?? DEFAULT_JSON_POISONING);
  } catch (err) {
    // Valid JSON, but not an acceptable Request object (§5.1 -32600) when it carries a poisoning key.
    if (err instanceof HttpError) return failure(null, JSON_RPC_ERRORS.INVALID_REQUEST, { reason: err.message });
    return failure(null, JSON_RPC_ERRORS.PARSE_ERROR, { reason: (err as Error).message });
  }
  if (!Array.isArray(payload)) return runOne(registry, payload, options, request);
  // Batch errors that concern the whole batch are one Response object, not an array (§6).
  if (!options.enableBatch) return failure(null, JSON_RPC_ERRORS.INVALID_REQUEST, { reason: 'batch requests are disabled on this endpoint' });
  if (payload.length === 0) return failure(null, JSON_RPC_ERRORS.INVALID_REQUEST, { reason: 'a batch must not be empty' });
  if (payload.length > options.maxBatchSize) {
    return failure(null, JSON_RPC_ERRORS.INVALID_REQUEST, {
      reason: `a batch of ${payload.length} requests exceeds max_batch_size ${options.maxBatchSize}`,
      max_batch_size: options.maxBatchSize,
    });
  }
  // Calls of a batch run concurrently (§6 allows any order); responses keep the request order.
  const responses = payload.map((msg) => runOne(registry, msg, options, request));
  return responses.some(isThenable) ? Promise.all(responses).then(answered) : answered(responses as (JsonRpcResponse | undefined)[]);
}

/** Parse a request body and dispatch it: a response, a batch of responses, or undefined (nothing to send). */
export async function dispatch(
  registry: JsonRpcRegistry,
  body: string | Buffer,
  options: DispatchOptions,
  request?: KeelRequest,
): Promise<JsonRpcResponse | JsonRpcResponse[] | undefined> {
  return run(registry, body, options, request);
}
