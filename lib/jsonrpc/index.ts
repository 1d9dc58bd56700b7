/**
 * JSON-RPC 2.0 over HTTP: `POST JsonRpcConfig.endpoint_path` (default `/rpc`).
 *
 * HTTP envelope (the spec leaves it open; keel follows the common JSON-RPC-over-HTTP practice):
 * every JSON-RPC response, error or not, is `200 application/json`; a request made only of
 * notifications gets `204` with no body. HTTP-level failures (body too large, a non-JSON
 * Content-Type) are RFC 9457 problem details. See docs/api-descriptions.md.
 */
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { readRawBody } from '../http/body.js';
import { jsonPoisoningOf, type JsonPoisoning } from '../http/json-parse.js';
import { HttpError } from '../http/errors.js';
import { refuseDeepJson } from '../http/content.js';
import { jsonSize, NOT_SERIALISABLE } from '../http/json-size.js';
import { sendProblem } from '../http/problem.js';
import { JsonRpcConfig } from '../records/protocol.js';
import { DEFAULT_MAX_BODY_SIZE } from '../records/server.js';
import type { KeelRequest } from '../http/request.js';
import { mountAll, type MountSpec, type ProtocolHost, type RawHandler } from '../openapi/host.js';
import { run, type JsonRpcResponse } from './dispatch.js';
import { JSON_RPC_ERRORS } from './errors.js';
import { openRpcDocument, type OpenRpcInfo } from './openrpc.js';
import { jsonRpcOpenApi } from './openapi.js';
import { JsonRpcRegistry, type JsonRpcMethodInfoInput, type RpcHandler } from './registry.js';
import { registerRouteMethods } from './routes.js';
import type { RouteDefinition } from '../app/route-definition.js';
import { workGateOf, type AppWorkGate, type WorkGateHost } from '../server/cost.js';
import { jsonRpcAdmission, meterOf } from './work.js';

export * from './errors.js';
export * from './registry.js';
export { dispatch, dispatchOne, envelopeProblem, type DispatchOptions, type JsonRpcResponse, type JsonRpcSuccess, type JsonRpcFailure } from './dispatch.js';
export { registerRouteMethods, ROUTE_ERROR_CODE } from './routes.js';
export { jsonRpcAdmission, sendJsonRpcRefusal } from './work.js';
export { DEFAULT_JSONRPC_MAX_RESPONSE_BYTES } from '../records/protocol.js';
export { jsonRpcOpenApi, JSONRPC_OPENAPI_TAG, JSONRPC_OPERATION_ID } from './openapi.js';
export { openRpcDocument, OPENRPC_VERSION, DEFAULT_OPENRPC_TITLE, DEFAULT_OPENRPC_VERSION, type OpenRpcInfo } from './openrpc.js';

/** JsonRpcConfig as accepted from code: snake_case or camelCase keys. */
export type JsonRpcConfigInput = Partial<JsonRpcConfig> & { endpointPath?: string; enableBatch?: boolean; maxBatchSize?: number; maxResponseBytes?: number };

export interface JsonRpcHandlerOptions {
  /** The methods served. */
  registry: JsonRpcRegistry;
  /** JsonRpcConfig (defaults: endpoint `/rpc`, batches on, max_batch_size 100, max_response_bytes DEFAULT_JSONRPC_MAX_RESPONSE_BYTES = 4 MiB). */
  config?: JsonRpcConfigInput | Readonly<JsonRpcConfig>;
  /** `info` of the OpenRPC document `rpc.discover` returns. */
  discovery?: OpenRpcInfo;
  /** Body cap when the body was not read by the App already. Default `DEFAULT_MAX_BODY_SIZE` (10 MiB). */
  maxBodySize?: number | null;
  /** Errors handlers threw (other than JsonRpcError); the client sees a bare -32603. Default: console.error. */
  onHandlerError?: (err: unknown, method: string) => void;
  /** `__proto__` / `constructor.prototype` keys in the body. Default: refused with -32600 (the App passes its ServerConfig's). */
  jsonPoisoning?: JsonPoisoning;
  /**
   * The App's work limits (lib/server/cost.ts): what each batch costs is charged to its client's CPU budget.
   * Admission (the refusal before the body is read) is `jsonRpcAdmission(work)`, mounted before this handler.
   */
  work?: AppWorkGate;
}

function defaultHandlerErrorReporter(err: unknown, method: string): void {
  console.error(`keel: JSON-RPC method ${JSON.stringify(method)} threw`, err);
}

/** True for a missing Content-Type, `application/json` and any `+json` type (RFC 6839 §3.1). */
export function isJsonContentType(header: string | undefined): boolean {
  // What nearly every client sends, answered without splitting the header.
  if (header === 'application/json') return true;
  if (header === undefined || header.trim() === '') return true;
  const type = header.split(';', 1)[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

/** The error a result past JsonRpcConfig.max_response_bytes is answered with (-32603, §5.1), with the limit in `data`. */
function tooLarge(id: JsonRpcResponse['id'], maxBytes: number): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    error: { ...JSON_RPC_ERRORS.INTERNAL_ERROR, data: { reason: `The result is larger than max_response_bytes (${maxBytes} bytes)`, max_response_bytes: maxBytes } },
    id,
  });
}

/**
 * One response as JSON. A result is counted first (lib/http/json-size.ts, stopping at what is left of the
 * budget) and only serialised when it fits, so a huge result is refused without being written out; the
 * exact byte count of what was written then settles it. A result that cannot be serialised (a BigInt,
 * a cycle) fails only its own call.
 */
function serialiseOne(r: JsonRpcResponse, remaining: number, maxBytes: number): string {
  if (!('result' in r)) return JSON.stringify(r);
  const size = jsonSize(r.result, remaining);
  if (size === NOT_SERIALISABLE) return JSON.stringify({ jsonrpc: '2.0', error: { ...JSON_RPC_ERRORS.INTERNAL_ERROR }, id: r.id });
  if (size > remaining) return tooLarge(r.id, maxBytes);
  let text: string;
  try {
    text = JSON.stringify(r);
  } catch {
    return JSON.stringify({ jsonrpc: '2.0', error: { ...JSON_RPC_ERRORS.INTERNAL_ERROR }, id: r.id });
  }
  return Buffer.byteLength(text) > remaining ? tooLarge(r.id, maxBytes) : text;
}

/** The answer's JSON: results share one budget of `maxBytes`, in request order (a batch's calls together). */
function serialise(response: JsonRpcResponse | JsonRpcResponse[], maxBytes: number): string {
  if (!Array.isArray(response)) return serialiseOne(response, maxBytes, maxBytes);
  let remaining = maxBytes;
  const parts = response.map((r) => {
    const text = serialiseOne(r, remaining, maxBytes);
    remaining -= Buffer.byteLength(text);
    return text;
  });
  return `[${parts.join(',')}]`;
}

/**
 * The node-level handler of a JSON-RPC endpoint.
 *
 * @example
 * import { createServer } from 'node:http';
 * const registry = new JsonRpcRegistry().register({ method_name: 'ping' }, () => 'pong');
 * createServer(jsonRpcHandler({ registry })).listen(8000, '127.0.0.1');
 */
export function jsonRpcHandler(options: JsonRpcHandlerOptions): RawHandler {
  const config = JsonRpcConfig.parse(options.config ?? {}, 'JsonRpcConfig');
  const { registry } = options;
  const limit = options.maxBodySize === undefined ? DEFAULT_MAX_BODY_SIZE : options.maxBodySize;
  const discovery: OpenRpcInfo = { url: config.endpoint_path, ...options.discovery };
  // The discovery document only changes when methods are added; rebuild it lazily on change.
  let cached: { size: number; doc: unknown } | undefined;
  const discover = () => {
    if (!cached || cached.size !== registry.size) cached = { size: registry.size, doc: openRpcDocument(registry, discovery) };
    return cached.doc;
  };
  const dispatchOptions = {
    enableBatch: config.enable_batch,
    maxBatchSize: config.max_batch_size,
    discover,
    onHandlerError: options.onHandlerError ?? defaultHandlerErrorReporter,
    jsonPoisoning: options.jsonPoisoning,
  };
  const send = (res: ServerResponse, response: JsonRpcResponse | JsonRpcResponse[] | undefined): void => {
    if (response === undefined) {
      // Only notifications: the server MUST NOT reply (§4.1, §6), so no body at all.
      res.statusCode = 204;
      res.end();
      return;
    }
    const body = serialise(response, config.max_response_bytes);
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(body);
  };
  // Synchronous methods are answered in the same tick, with no promise: only async handlers and an
  // unread body wait.
  const respond = (req: KeelRequest, res: ServerResponse, raw: Buffer): void | Promise<void> => {
    // Work limits on, a batch: the parse, the calls' synchronous parts and the serialised answer are charged to the client.
    const meter = meterOf(options.work, req, raw);
    const t0 = meter ? performance.now() : 0;
    try {
      // Nesting past MAX_JSON_DEPTH is the same 400 problem as for a JSON body, before any parse.
      refuseDeepJson(raw);
      const response = run(registry, raw, dispatchOptions, req);
      if (!(response instanceof Promise)) {
        send(res, response);
        meter?.(t0);
        return;
      }
      meter?.(t0);
      return response.then((r) => {
        const t1 = meter ? performance.now() : 0;
        send(res, r);
        meter?.(t1);
      }).catch((err: unknown) => sendProblem(res, err));
    } catch (err) {
      meter?.(t0);
      return sendProblem(res, err);
    }
  };
  return function keelJsonRpc(req: KeelRequest, res: ServerResponse): void | Promise<void> {
    if (!isJsonContentType(req.headers['content-type'])) {
      sendProblem(res, new HttpError(415, 'JSON-RPC requests must be sent as application/json', { extensions: { accepted: ['application/json'] } }));
      return;
    }
    if (req.rawBody != null) return respond(req, res, req.rawBody);
    return readRawBody(req, limit).then((raw) => respond(req, res, raw), (err: unknown) => sendProblem(res, err));
  };
}

// ---------------------------------------------------------------- App integration

const registries = new WeakMap<object, JsonRpcRegistry>();

/** The registry `app.rpc()` fills (one per App, created on first use). */
export function rpcRegistryOf(app: object): JsonRpcRegistry {
  let r = registries.get(app);
  if (!r) {
    r = new JsonRpcRegistry();
    registries.set(app, r);
  }
  return r;
}

/** What `app.rpc(info, handler)` does: register a method on the App's endpoint (ConfigError on bad metadata). */
export function registerRpc(app: object, info: JsonRpcMethodInfoInput | string, handler: RpcHandler): void {
  rpcRegistryOf(app).register(typeof info === 'string' ? { method_name: info } : info, handler);
}

/**
 * The endpoint's mounts for a ServerConfig: none when `jsonrpc.enabled` is false, or when `jsonrpc`
 * is null and no method was registered. Methods registered with `jsonrpc: null` are served with
 * JsonRpcConfig's defaults: calling `app.rpc()` (or giving a route `jsonrpc` metadata) is the intent
 * to serve them. Routes with `jsonrpc` metadata are registered here (lib/jsonrpc/routes.ts).
 */
export function jsonRpcMounts(host: ProtocolHost & WorkGateHost & { routes?(): readonly RouteDefinition[] }): MountSpec[] {
  if (host.config.jsonrpc?.enabled === false) return [];
  const routes = host.routes?.() ?? [];
  if (routes.some((r) => r.jsonrpc)) registerRouteMethods(rpcRegistryOf(host), routes);
  const registered = registries.get(host);
  const config = host.config.jsonrpc ?? (registered && registered.size > 0 ? JsonRpcConfig.defaults() : null);
  if (!config) return [];
  const openapi = host.config.openapi;
  const registry = rpcRegistryOf(host);
  // ServerConfig.work_limits (lib/server/cost.ts): each batch charged to its client's CPU budget, requests refused past it.
  const work = workGateOf(host);
  const handler = jsonRpcHandler({
    registry,
    config,
    maxBodySize: host.config.max_body_size,
    jsonPoisoning: jsonPoisoningOf(host.config),
    discovery: { title: openapi?.title, version: openapi?.version, description: openapi?.description },
    work,
  });
  // Described for the OpenAPI document (read when it is first served, so every method is in).
  return [{ method: 'POST', path: config.endpoint_path, handler, readBody: true, middleware: work ? [jsonRpcAdmission(work)] : undefined, openapi: () => jsonRpcOpenApi(registry, config) }];
}

/** Installer for lib/app/builtins.ts. */
export function installJsonRpc(host: ProtocolHost & WorkGateHost): void {
  mountAll(host, jsonRpcMounts(host));
}
