/**
 * Routes exposed as RPC methods: a route registered with `jsonrpc: JsonRpcMethodInfo` (spec: "metadata for
 * a route exposed as an RPC method") is also callable as that method on the JSON-RPC endpoint. The
 * route's handler receives the call's params as `data.body`; its result becomes the RPC result.
 *
 * Over RPC the route's own pipeline does not run (its HTTP parameter validation, hooks and per-route
 * middleware): params are checked against the method's `params_schema` instead. Per-route
 * authentication would therefore not apply, so a route that requires it is refused at start-up rather
 * than exposed without its gate.
 */
import { ConfigError, HttpError } from '../http/errors.js';
import { toResponse, type RequestData } from '../app/handler.js';
import { flattenHeaders } from '../http/request.js';
import type { RouteDefinition } from '../app/route-definition.js';
import { JsonRpcError } from './errors.js';
import type { JsonRpcRegistry, RpcHandler } from './registry.js';

/** Code of the error sent when an exposed route answers with an HTTP error status (JSON-RPC §5.1 server-error range). */
export const ROUTE_ERROR_CODE = -32000;

function refuse(route: RouteDefinition, key: string, why: string): never {
  throw new ConfigError(`Invalid Route(${route.methods.join('|')} ${route.path}).jsonrpc: ${why}`, {
    record: 'JsonRpcMethodInfo', path: `Route(${route.methods.join('|')} ${route.path}).jsonrpc`, key, value: route.jsonrpc?.method_name,
  });
}

function routeMethod(route: RouteDefinition): RpcHandler {
  return async function keelRouteRpc(params, ctx) {
    const req = ctx.request;
    const data: RequestData = {
      method: 'POST',
      path: route.path,
      pathParams: {},
      query: {},
      headers: flattenHeaders(req?.headers ?? {}),
      cookies: {},
      body: params,
      rawBody: null,
      files: {},
      validatedParams: null,
      requestId: req?.requestId,
      auth: req?.auth,
      state: {},
    };
    let outcome: unknown;
    try {
      outcome = await route.handler.call(req as never, data);
    } catch (err) {
      outcome = err;
    }
    const r = toResponse(outcome);
    // A client error the handler chose to send (HttpError 4xx) keeps its message; anything else is -32603.
    if (r instanceof HttpError && r.status < 500) throw new JsonRpcError(ROUTE_ERROR_CODE, r.detail ?? r.title, { status: r.status });
    if (r instanceof Error) throw r;
    if (r.status_code >= 400) throw new JsonRpcError(ROUTE_ERROR_CODE, `The method answered with HTTP status ${r.status_code}`, { status: r.status_code, content: r.content });
    return r.content;
  };
}

/** Register every route that carries `jsonrpc` metadata; ConfigError for a route whose gate would not apply. */
export function registerRouteMethods(registry: JsonRpcRegistry, routes: readonly RouteDefinition[]): void {
  for (const route of routes) {
    if (!route.jsonrpc) continue;
    if (route.jwtAuth?.enabled) refuse(route, 'jwt_auth', 'a route with its own jwt_auth cannot be exposed over JSON-RPC (the check would not run there); protect the RPC endpoint with server-level jwt_auth instead.');
    if (route.apiKeyAuth?.enabled) refuse(route, 'api_key_auth', 'a route with its own api_key_auth cannot be exposed over JSON-RPC (the check would not run there); protect the RPC endpoint with server-level api_key_auth instead.');
    if (route.authorization) refuse(route, 'authorization', 'a route with an authorization record cannot be exposed over JSON-RPC (the check would not run there).');
    registry.register(route.jsonrpc, routeMethod(route));
  }
}
