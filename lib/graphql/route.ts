/**
 * A GraphQL route: schema + limits → one node handler (GraphQL over HTTP, playground page and assets)
 * and one upgrade handler (graphql-transport-ws) on the same path. `installGraphqlRoute` puts both on
 * an App through its extension points (`mount`, `upgrade`, `preShutdown`; docs/architecture.md).
 */
import type { ClientBudget } from '../server/client-budget.js';
import type { ServerResponse } from 'node:http';
import type { JsonPoisoning } from '../http/json-parse.js';
import type { Duplex } from 'node:stream';
import type { GraphQLSchema } from 'graphql';
import { AppError } from '../http/errors.js';
import { problemFor, sendProblem } from '../http/problem.js';
import { DynamicSchemaConfig, GraphQlRouteConfig, SchemaConfig } from '../records/graphql.js';
import { parseMethod } from '../records/protocol.js';
import type { MountOpenApi } from '../app/plugin.js';
import type { KeelRequest } from '../http/request.js';
import { originGuard, type UpgradeGuard } from '../ws/guard.js';
import type { UpgradeHandler } from '../ws/upgrade.js';
import type { WebSocketFairnessOptions } from '../ws/fairness.js';
import { slicedPubSub } from '../ws/fanout.js';
import { builtinSchema } from './builtin-schemas.js';
import { createGraphqlHttpHandler } from './http.js';
import type { PersistedQueryOptions } from './persisted.js';
import type { GraphqlBatching } from './batch.js';
import type { AppWorkGate } from '../server/cost.js';
import { graphqlOpenApi } from './openapi.js';
import type { GraphqlLimits } from './limits.js';
import { PLAYGROUND_CSP, sendPlaygroundAsset, sendPlaygroundPage, wantsPlayground } from './playground.js';
import { MemoryPubSub, type PubSub } from './pubsub.js';
import { buildSdlSchema } from './sdl.js';
import type { Logger } from 'pino';
import { createGraphqlWsUpgradeHandler } from './subscriptions.js';

/** Where the playground's files are served, below the GraphQL path. */
export const PLAYGROUND_ASSETS_SEGMENT = '/graphiql';

export interface GraphqlRouteOptions {
  /** Serve the GraphiQL page on GET with `Accept: text/html`. Default false (spec). */
  enablePlayground?: boolean;
  /** Body cap, bytes; null = unlimited. Default: the App's max_body_size (1 MiB standalone). */
  maxBodySize?: number | null;
  /** Upgrade guards for the WebSocket side (server auth, origin, request id). Default none. */
  guards?: readonly UpgradeGuard[];
  /** A CorsConfig: subscription upgrades from browser origins it does not allow get 403. Default: any origin. */
  cors?: unknown;
  /** `__proto__` / `constructor.prototype` keys in JSON bodies. Default: refused (400); the App passes its ServerConfig's. */
  jsonPoisoning?: JsonPoisoning;
  /** Operations open at once per WebSocket connection. Default DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION (100). */
  maxSubscriptionsPerConnection?: number;
  /** Open WebSocket connections at once; more are refused with 503. Default DEFAULT_MAX_CONNECTIONS (1000). */
  maxConnections?: number;
  /** Per-socket message rate and send-buffer bound (keel/ws fairness). Default: the App's `ws_*` settings. */
  fairness?: WebSocketFairnessOptions;
  /** The budget of each client across its sockets (lib/server/client-budget.ts); an App passes its own. */
  clientBudget?: ClientBudget;
  /** Where the built-in schema's `addBook` publishes and `bookAdded` listens. Default: a MemoryPubSub per route (an App passes its `AppOptions.pubsub`). */
  pubsub?: PubSub;
  /**
   * Prefix of this route's topics: the built-in schema's `bookAdded` is `<prefix>bookAdded`, an SDL
   * route's Subscription field `f` is `<prefix>f`. Default: none (`bookAdded`); an App route on the
   * App's pub/sub uses `graphql:<path>:`, so two routes do not share events.
   */
  topicPrefix?: string;
  /**
   * SDL routes: each Subscription field streams the payloads published on its topic (`app.publish('graphql:<path>:<field>', value)`)
   * instead of emitting `response_data` once and completing (the spec's default). Default false.
   */
  subscriptionEvents?: boolean;
  /** Most lexical tokens in one query, over HTTP and WebSocket; more is refused with TOKEN_LIMIT_EXCEEDED. Default DEFAULT_MAX_TOKENS (5000). */
  maxTokens?: number;
  /** Checked for every WebSocket operation (see GraphqlWsOptions.operationGuard); an App passes its server-level rate limit. Default none. */
  operationGuard?: UpgradeGuard;
  /** Where lost WebSocket clients are noted (debug, throttled; GraphqlWsOptions.logger). An App passes its logger. Default none. */
  logger?: Pick<Logger, 'debug'>;
  /**
   * The gate of expensive work (lib/server/cost.ts): operations over HTTP and WebSocket are admitted, queued and
   * charged to the client's CPU budget. An App passes its own (ServerConfig.work_limits). Default none.
   */
  workGate?: AppWorkGate;
  /** Automatic persisted queries: the bounds of the kept texts, or false for none (GraphqlHttpOptions.persistedQueries). Default on. */
  persistedQueries?: PersistedQueryOptions | false;
  /** Batched operations (GraphqlHttpOptions.batching): true or `{ max_operations }`. Default false. */
  batching?: GraphqlBatching | boolean;
}

export interface GraphqlRoute {
  readonly path: string;
  /** HTTP methods served: `POST` routes also answer GET queries (GraphQL over HTTP §5). */
  readonly methods: readonly ('GET' | 'POST')[];
  readonly schema: GraphQLSchema;
  readonly limits: Readonly<GraphqlLimits>;
  readonly playground: boolean;
  /** Path prefix of the playground assets (`<path>/graphiql`). */
  readonly assetsPath: string;
  /** GraphQL over HTTP, the playground page and its assets. */
  handler(req: KeelRequest, res: ServerResponse): Promise<void>;
  /** graphql-transport-ws on the same path. */
  upgrade(req: KeelRequest, socket: Duplex, head: Buffer): void;
  /** Close open subscriptions (1001). */
  close(): Promise<void>;
}

function routeMethods(path: unknown, method: unknown): { path: string; methods: ('GET' | 'POST')[] } {
  if (typeof path !== 'string' || !path.startsWith('/')) throw new AppError('Route', `GraphQL route path must start with "/", got ${JSON.stringify(path)}`);
  let m: string;
  try {
    m = parseMethod(method, 'GraphQlRouteConfig.method');
  } catch (err) {
    throw new AppError('Route', `GraphQL route method ${JSON.stringify(method)} is not an HTTP method`, { cause: err });
  }
  if (m === 'POST') return { path, methods: ['POST', 'GET'] };
  if (m === 'GET') return { path, methods: ['GET'] };
  throw new AppError('Route', `GraphQL over HTTP uses GET or POST; ${m} cannot serve ${path}`);
}

/** Assemble a route from a built schema. */
export function graphqlRouteForSchema(path: string, method: unknown, schema: GraphQLSchema, limits: GraphqlLimits, options: GraphqlRouteOptions = {}): GraphqlRoute {
  const { methods } = routeMethods(path, method);
  const playground = options.enablePlayground ?? false;
  const assetsPath = path.replace(/\/$/, '') + PLAYGROUND_ASSETS_SEGMENT;
  const documentCache = options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens };
  const http = createGraphqlHttpHandler(schema, { limits, maxBodySize: options.maxBodySize, jsonPoisoning: options.jsonPoisoning, documentCache, workGate: options.workGate, ...(options.persistedQueries !== undefined ? { persistedQueries: options.persistedQueries } : {}), ...(options.batching !== undefined ? { batching: options.batching } : {}) });
  // Parsed here: a bad CorsConfig is a ConfigError at registration.
  const guards = [...(options.guards ?? []), ...(options.cors !== undefined ? [originGuard(options.cors)] : [])];
  const ws: UpgradeHandler = createGraphqlWsUpgradeHandler(schema, {
    limits, guards, documentCache, maxSubscriptionsPerConnection: options.maxSubscriptionsPerConnection, maxConnections: options.maxConnections,
    fairness: options.fairness, operationGuard: options.operationGuard, logger: options.logger, clientBudget: options.clientBudget, workGate: options.workGate,
  });
  const allow = methods.join(', ');

  async function graphqlRouteHandler(req: KeelRequest, res: ServerResponse): Promise<void> {
    const pathname = (req.url ?? '/').split('?', 1)[0]!;
    if (playground && pathname.startsWith(assetsPath + '/') && (req.method === 'GET' || req.method === 'HEAD')) {
      if (!sendPlaygroundAsset(res, pathname.slice(assetsPath.length + 1))) sendProblem(res, problemFor('KEEL_NOT_FOUND'));
      return;
    }
    if (playground && wantsPlayground(req)) return sendPlaygroundPage(res, path, assetsPath);
    if (!methods.includes(req.method as 'GET')) {
      sendProblem(res, problemFor('KEEL_METHOD_NOT_ALLOWED', `${req.method} is not allowed for ${path}`), { Allow: allow });
      return;
    }
    await http(req, res);
  }
  return {
    path, methods, schema, limits, playground, assetsPath,
    handler: graphqlRouteHandler,
    upgrade: (req, socket, head) => ws(req, socket, head),
    close: () => ws.close(),
  };
}

/** Route options from a GraphQlRouteConfig builder or plain options. */
export function routeOptions(route: GraphQlRouteConfig | GraphqlRouteOptions | undefined): GraphqlRouteOptions {
  if (route instanceof GraphQlRouteConfig) return { enablePlayground: route.isPlaygroundEnabled() };
  return route ?? {};
}

/**
 * spec: register_graphql_route. `schemaType` is `query_only`, `query_mutation` or `full`
 * (anything else: AppError GraphQl); `config` is a SchemaConfig (snake_case or camelCase).
 *
 * @example
 * const route = graphqlRoute('/graphql', 'POST', 'full', { depth_limit: 8 }, { enablePlayground: true });
 */
export function graphqlRoute(path: string, method: unknown, schemaType: string, config: unknown = {}, options: GraphqlRouteOptions = {}): GraphqlRoute {
  routeMethods(path, method);
  const cfg = SchemaConfig.parse(config ?? {}, 'SchemaConfig');
  // Deliveries to subscriptions (and their release) in slices per turn of the loop (lib/ws/fanout.ts).
  const schema = builtinSchema(schemaType, { pubsub: slicedPubSub(options.pubsub ?? new MemoryPubSub()), topic: options.topicPrefix !== undefined ? `${options.topicPrefix}bookAdded` : undefined });
  return graphqlRouteForSchema(path, method, schema, cfg, options);
}

/**
 * spec: register_graphql_sdl_route. Resolvers serve `responseData` by field name; `config` is a
 * DynamicSchemaConfig (introspection_enabled required). Bad SDL: AppError GraphQl.
 *
 * @example
 * const route = graphqlSdlRoute('/gql', 'POST', 'type Query { hello: String }', { hello: 'hi' }, { introspection_enabled: false });
 */
export function graphqlSdlRoute(path: string, method: unknown, sdl: string, responseData: unknown, config: unknown, options: GraphqlRouteOptions = {}): GraphqlRoute {
  routeMethods(path, method);
  const cfg = DynamicSchemaConfig.parse(config, 'DynamicSchemaConfig');
  if (options.subscriptionEvents !== undefined && typeof options.subscriptionEvents !== 'boolean') {
    throw new AppError('GraphQl', `GraphQL route option subscriptionEvents must be true or false, got ${JSON.stringify(options.subscriptionEvents)}`);
  }
  const events = options.subscriptionEvents ? { pubsub: slicedPubSub(options.pubsub ?? new MemoryPubSub()), topicPrefix: options.topicPrefix ?? '' } : undefined;
  const schema = buildSdlSchema(sdl, responseData, cfg, events);
  const limits = { introspection_enabled: cfg.introspection_enabled, depth_limit: cfg.max_depth, complexity_limit: cfg.max_complexity, max_response_bytes: cfg.max_response_bytes };
  return graphqlRouteForSchema(path, method, schema, limits, options);
}

/** What installGraphqlRoute needs from an App (its public extension points). */
export interface GraphqlHost {
  mount(
    method: string[], path: string, handler: (req: KeelRequest, res: ServerResponse) => void | Promise<void>,
    options?: { readBody?: boolean; public?: boolean; securityHeaders?: { content_security_policy: string }; openapi?: MountOpenApi; page?: string },
  ): unknown;
  upgrade(path: string, handler: (req: KeelRequest, socket: Duplex, head: Buffer) => void): unknown;
  preShutdown(fn: () => void | Promise<void>): unknown;
}

/** Mount `route` on an App: HTTP methods on its path, playground assets below it, WebSocket upgrades. */
export function installGraphqlRoute(app: GraphqlHost, route: GraphqlRoute): void {
  // readBody: the App reads the body under its max_body_size before the handler runs.
  // The playground page is served on the GraphQL path itself, so that path gets a CSP that lets it load.
  const csp = route.playground ? { securityHeaders: { content_security_policy: PLAYGROUND_CSP } } : {};
  // `openapi`: the route's operations in the App's OpenAPI document (when keel/openapi is on).
  app.mount([...route.methods], route.path, route.handler, { readBody: route.methods.includes('POST'), ...csp, openapi: graphqlOpenApi(route), page: route.playground ? 'GraphiQL' : 'GraphQL' });
  if (route.playground) app.mount(['GET', 'HEAD'], `${route.assetsPath}/{asset}`, route.handler, { public: true, ...csp });
  app.upgrade(route.path, route.upgrade);
  app.preShutdown(() => route.close());
}
