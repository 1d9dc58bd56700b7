/**
 * The App builder (spec: App, Programmatic operations): register routes, hooks, mounts, upgrades
 * and Express routers; build a router once; listen.
 */
import type { IncomingMessage } from 'node:http';
import { pino, type Logger } from 'pino';
import { AppError, ConfigError } from '../http/errors.js';
import { logBase, logLevelFromEnv } from '../ops/log-level.js';
import { HookRegistry, type Hook, type HookPhase } from './hooks.js';
import type { RequestData, HandlerFunction, Handler } from './handler.js';
import { ServerConfig, type ApiKeyConfigInput, type JwtConfigInput, type ServerConfigInput } from '../records/server.js';
import { parseMethod, type HttpMethod } from '../records/protocol.js';
import { parseRouteDefinition, withCheckedKey, type RouteDefinition, type RouteDefinitionInput } from './route-definition.js';
import type { Middleware, NextFunction } from '../http/request.js';
import { buildRouter } from './dispatch.js';
import type { ListenOptions } from '../server/server.js';
import { listen, onStopSignals, settleAll } from '../server/server.js';
import { injectInto, type InjectChain, type InjectOptions } from './inject.js';
import { loadedProtocol, loadProtocols, protocolsUsed, PROTOCOL_OF_METHOD } from './builtins.js';
import { installBackground, memoryBackground } from '../background/install.js';
import type { BackgroundBackend } from '../background/bullmq.js';
import { JobRegistry, type JobHandler } from '../background/jobs.js';
import { jobTracing } from '../observability/job-spans.js';
import { MemoryPubSub, type PubSub } from '../pubsub/index.js';
import { mountFeatures, serverRateLimit } from './features.js';
import { checkObservabilityPackages, instrumentRouter, KEEL_READINESS_CHECKS, listenWorkerProbes } from '../observability/index.js';
import { prepareMergedRouter, type ExpressRouterLike, type MergedRouter, type MergeRouterOptions } from './merge.js';
import type { DynamicSchemaConfigInput, GraphQlRouteConfig, SchemaConfigInput } from '../records/graphql.js';
import type {
  AppCore, KeelRouter, Mount, MountOptions, ProtocolRegistration, RawHandler, ServerFactory, ServerHandle, UpgradeHandler,
} from './plugin.js';
// Protocol modules are loaded by app.ready() (lib/app/builtins.ts): dependency-free types only here.
import type { AppGraphqlRouteOptions, AppWebSocketHandler, AppWebSocketOptions } from './protocol-api.js';
import type { GrpcProtoSource, GrpcServiceHandlers, GrpcServiceOptions } from '../grpc/types.js';
import type { JsonRpcMethodInfoInput, RpcHandler } from '../jsonrpc/registry.js';
import type { SecurityHeadersOptions } from '../../middleware/security-headers/index.js';
import type { RateLimitExtensions } from '../../middleware/rate-limit/index.js';

import type {
  AuthTypes, DefaultAuthTypes, HandlerObject, ResponsesInput, RouteApiKey, RouteAuth, RouteHandler, RouteParameters, ServerAuthOf, TypedRouteOptions,
} from './typed-route.js';
import type { ApiKeyAuthConfigInput, AuthorizationConfigInput, JwtAuthConfigInput } from '../records/route.js';

export type { RawHandler, MountOptions, Mount, UpgradeHandler, ExpressRouterLike };

/**
 * The signature of `app.get/post/put/patch/delete/head/options`: the handler's data is typed from the path
 * pattern and the option schemas (lib/app/typed-route.ts), a `response` schema types its return value.
 *
 * Two call signatures, a handler object's first: a function handler is checked against the second, last one, so
 * TypeScript reports a wrong return value at the offending property ("Type 'string' is not assignable to type
 * 'number'" at `id:`), where a single signature taking `RouteHandler | HandlerObject` reported the whole handler
 * in a 2 KB message at its first column.
 */
export type RouteMethod<Self, SA extends AuthTypes = DefaultAuthTypes> = (<
  const Pm extends RouteParameters | undefined = undefined,
  const B extends object | undefined = undefined,
  const R extends object | undefined = undefined,
  const BR extends boolean | undefined = undefined,
  const Rs extends ResponsesInput | undefined = undefined,
  const J extends JwtAuthConfigInput | null | undefined = undefined,
  const K extends ApiKeyAuthConfigInput | null | undefined = undefined,
  const Az extends AuthorizationConfigInput | null | undefined = undefined,
>(path: string, handler: HandlerObject, options?: TypedRouteOptions<Pm, B, R, BR, Rs, J, K, Az>) => Self) & (<
  const P extends string,
  const Pm extends RouteParameters | undefined = undefined,
  const B extends object | undefined = undefined,
  const R extends object | undefined = undefined,
  const BR extends boolean | undefined = undefined,
  const Rs extends ResponsesInput | undefined = undefined,
  const J extends JwtAuthConfigInput | null | undefined = undefined,
  const K extends ApiKeyAuthConfigInput | null | undefined = undefined,
  const Az extends AuthorizationConfigInput | null | undefined = undefined,
>(
  path: P,
  handler: RouteHandler<P, Pm, B, R, BR, Rs, RouteAuth<J, Az, SA>, RouteApiKey<K, SA>>,
  options?: TypedRouteOptions<Pm, B, R, BR, Rs, J, K, Az>,
) => Self);

/** What a late call would have done, for the AppError of `#assertOpen`. */
const REGISTRATION_WHAT: Readonly<Record<string, string>> = {
  rpc: 'register an RPC method',
  ws: 'add a WebSocket route',
  grpc: 'register a gRPC service',
  registerGraphqlRoute: 'add a GraphQL route',
  registerGraphqlSdlRoute: 'add a GraphQL route',
};

/** What `createApp(config)` / `new App(config)` accept (generated from the ServerConfig record). */
export type { ServerConfigInput };

export interface AppOptions {
  /**
   * pino logger (default: pino at KEEL_LOG_LEVEL, `info` when unset, `error` under NODE_ENV=test; an
   * unknown level is a ConfigError listing the valid ones).
   */
  logger?: Logger;
  /** Security headers (helmet, API defaults) on every response; `false` turns them off. Default on. */
  securityHeaders?: SecurityHeadersOptions | false;
  /**
   * How the server-level rate limit (ServerConfig.rate_limit) keys and stores its buckets: a shared
   * `RedisStore` for several instances, a `key(req)` behind a reverse proxy. Default: memory, socket address.
   */
  rateLimit?: RateLimitExtensions;
  /**
   * Where background jobs run (`background_tasks.enabled`): in this process (default), or
   * `bullmqBackground({ connection })` for a queue in Redis shared by every instance (docs/scaling.md).
   */
  background?: BackgroundBackend;
  /**
   * How events reach subscribers (GraphQL subscriptions, `app.publish()` to WebSocket sessions):
   * a `MemoryPubSub` per App (default), or `new RedisPubSub({ connection })` to reach every instance.
   */
  pubsub?: PubSub;
  /**
   * Your own dependencies for the readiness endpoint (`ServerConfig.readiness`), by name: each resolves when
   * the dependency is up and rejects (or throws) when it is not, e.g. `{ db: () => pool.query('SELECT 1') }`.
   * Bounded like keel's own probes (500 ms) and cached with them (docs/operations.md).
   */
  readinessChecks?: Readonly<Record<string, () => unknown>>;
}

/** What `app.runWorker()` resolves to: a job process with no HTTP server. */
export interface WorkerHandle {
  /** Stop taking jobs, let running ones finish (or hand them back) within drain_timeout_secs. Idempotent. */
  close(): Promise<void>;
  /** `http://host:port` of the probe server (/health, readiness, metrics) when ServerConfig.readiness or .metrics is on. */
  readonly url?: string;
}

/**
 * `app.route({...})`: the route options plus method, path and handler; the handler's `data` is typed
 * from `path` and the schemas (lib/app/typed-route.ts).
 */
export type TypedRouteDefinition<P extends string, Pm, B, R, BR = undefined, Rs = undefined, J = undefined, K = undefined, Az = undefined, SA extends AuthTypes = DefaultAuthTypes> = TypedRouteOptions<Pm, B, R, BR, Rs, J, K, Az> & {
  method: string | readonly string[];
  path: P;
  handler: RouteHandler<P, Pm, B, R, BR, Rs, RouteAuth<J, Az, SA>, RouteApiKey<K, SA>> | HandlerObject;
};

function defaultLogger(): Logger {
  return pino({ level: logLevelFromEnv(), base: logBase('keel') });
}

/**
 * An application: routes, hooks, mounts and routers, plus its frozen ServerConfig.
 *
 * @example
 * const app = new App({ port: 0 });
 * app.get('/hello/{name}', (data) => ({ hello: data.pathParams.name }));
 * const server = await app.listen();
 * await server.close();
 */
export class App<SA extends AuthTypes = DefaultAuthTypes> implements AppCore {
  readonly config: Readonly<ServerConfig>;
  readonly logger: Logger;
  /** Server-wide security-header options (AppOptions.securityHeaders). */
  readonly securityHeaders: SecurityHeadersOptions | false;
  /** Store and key options of the server-level rate limit (AppOptions.rateLimit). */
  readonly rateLimitOptions: RateLimitExtensions;
  /** Where events are published and subscribed (AppOptions.pubsub). */
  readonly pubsub: PubSub;
  /** Your readiness checks (AppOptions.readinessChecks). */
  readonly readinessChecks: Readonly<Record<string, () => unknown>>;
  /** Named background jobs (`app.job()`). */
  readonly jobs = new JobRegistry();
  readonly #background: BackgroundBackend;
  readonly hooks = new HookRegistry();
  readonly #routes: RouteDefinition[] = [];
  readonly #mounts: Mount[] = [];
  readonly #upgrades = new Map<string, UpgradeHandler>();
  readonly #uses: Middleware[] = [];
  readonly #routers: MergedRouter[] = [];
  /** Calls of protocol methods (`ws`, `rpc`, `grpc`, `registerGraphql*`), installed when the router is built. */
  readonly #registrations: ProtocolRegistration[] = [];
  readonly #onStart: ((handle: ServerHandle, app: App) => void | Promise<void>)[] = [];
  readonly #preShutdown: (() => void | Promise<void>)[] = [];
  readonly #onShutdown: (() => void | Promise<void>)[] = [];
  /** Protocol modules keep their state here (keyed by module name). */
  readonly extensions = new Map<string, unknown>();
  #serverFactory: ServerFactory | undefined;
  #built: KeelRouter | undefined;

  constructor(config: ServerConfigInput | Readonly<ServerConfig> = {}, options: AppOptions = {}) {
    this.config = ServerConfig.parse(config);
    withCheckedKey(this.config.jwt_auth, 'JwtConfig', 'ServerConfig.jwt_auth');
    this.logger = options.logger ?? defaultLogger();
    this.securityHeaders = options.securityHeaders ?? {};
    this.rateLimitOptions = options.rateLimit ?? {};
    this.pubsub = options.pubsub ?? new MemoryPubSub();
    this.readinessChecks = options.readinessChecks ?? {};
    for (const [name, fn] of Object.entries(this.readinessChecks)) {
      if (typeof fn !== 'function') throw new AppError('Server', `AppOptions.readinessChecks.${name} must be a function that resolves when the dependency is up, got ${typeof fn}`);
      if (KEEL_READINESS_CHECKS.includes(name)) throw new AppError('Server', `AppOptions.readinessChecks.${name}: keel's own check has that name; choose another (e.g. "db")`);
    }
    this.#background = options.background ?? memoryBackground;
    if (typeof this.#background?.create !== 'function' || typeof this.#background.load !== 'function') {
      throw new AppError('Server', 'AppOptions.background must be a background backend, e.g. bullmqBackground({ connection: process.env.REDIS_URL }); leave it out for the in-process executor');
    }
    if (typeof this.pubsub?.publish !== 'function' || typeof this.pubsub.subscribe !== 'function') {
      throw new AppError('Server', 'AppOptions.pubsub must be a PubSub (publish, subscribe), e.g. new RedisPubSub({ connection: process.env.REDIS_URL }); leave it out for the in-memory one');
    }
  }

  /**
   * Register a named background job, run as `fn(payload, ctx)` for `data.background.enqueue(name, payload)`.
   * Register the same jobs on every instance (and job machine) at start-up: a queue in Redis stores
   * the name and the JSON payload, not the function (docs/scaling.md). Bad or duplicate name: AppError now.
   */
  job<P = unknown>(name: string, fn: JobHandler<P>): this {
    this.jobs.register(name, fn as JobHandler);
    return this;
  }

  /** Publish `payload` (a JSON value) on `topic` to every subscriber, on every instance when the pubsub is shared. */
  async publish(topic: string, payload: unknown): Promise<void> {
    await this.pubsub.publish(topic, payload);
  }

  /** spec: App.new() / App.default(): an application with the default ServerConfig. */
  static default(): App {
    return new App();
  }

  #assertOpen(what: string): void {
    if (this.#built) throw new AppError('Route', `Cannot ${what} after the router was built`);
  }

  /**
   * Register a route. Records are parsed now; a bad route throws AppError('Route'). The handler's
   * `data.pathParams` is typed from `path`, `data.body` / `query` / `headers` / `cookies` from the
   * schemas, its return value from `response`.
   */
  route<
    const P extends string, const Pm extends RouteParameters | undefined = undefined, const B extends object | undefined = undefined, const R extends object | undefined = undefined,
    const BR extends boolean | undefined = undefined, const Rs extends ResponsesInput | undefined = undefined, const J extends JwtAuthConfigInput | null | undefined = undefined,
    const K extends ApiKeyAuthConfigInput | null | undefined = undefined, const Az extends AuthorizationConfigInput | null | undefined = undefined,
  >(
    def: TypedRouteDefinition<P, Pm, B, R, BR, Rs, J, K, Az, SA>,
  ): this {
    this.#assertOpen('add a route');
    const parsed = parseRouteDefinition(def as RouteDefinitionInput);
    for (const m of parsed.methods) {
      const dup = this.#routes.find((r) => r.methods.includes(m) && r.compiled.pattern === parsed.compiled.pattern);
      if (dup) throw new AppError('Route', `Route ${m} ${parsed.path} is already registered (as ${dup.path})`);
    }
    this.#routes.push(parsed);
    return this;
  }

  #add(method: string, path: string, handler: unknown, options: object = {}): this {
    // Typed by the caller's signature (RouteMethod); registered as any route is.
    return (this as App).route({ ...options, method, path, handler } as RouteDefinitionInput) as this;
  }

  /** `app.get('/users/{id:int}', (data) => data.pathParams.id /* number *\/, { parameters, response })`. */
  readonly get: RouteMethod<this, SA> = ((path: string, handler: unknown, options?: object) => this.#add('GET', path, handler, options)) as RouteMethod<this, SA>;
  /** `app.post('/users', (data) => data.body.email /* string *\/, { body: { type: 'object', ... } })`. */
  readonly post: RouteMethod<this, SA> = ((path: string, handler: unknown, options?: object) => this.#add('POST', path, handler, options)) as RouteMethod<this, SA>;
  readonly put: RouteMethod<this, SA> = ((path: string, handler: unknown, options?: object) => this.#add('PUT', path, handler, options)) as RouteMethod<this, SA>;
  readonly patch: RouteMethod<this, SA> = ((path: string, handler: unknown, options?: object) => this.#add('PATCH', path, handler, options)) as RouteMethod<this, SA>;
  readonly delete: RouteMethod<this, SA> = ((path: string, handler: unknown, options?: object) => this.#add('DELETE', path, handler, options)) as RouteMethod<this, SA>;
  readonly head: RouteMethod<this, SA> = ((path: string, handler: unknown, options?: object) => this.#add('HEAD', path, handler, options)) as RouteMethod<this, SA>;
  readonly options: RouteMethod<this, SA> = ((path: string, handler: unknown, options?: object) => this.#add('OPTIONS', path, handler, options)) as RouteMethod<this, SA>;

  /** Hooks for every route, in the spec's phase order. */
  onRequest(hook: Hook): this {
    this.hooks.add('on_request', hook);
    return this;
  }
  preValidation(hook: Hook): this {
    this.hooks.add('pre_validation', hook);
    return this;
  }
  preHandler(hook: Hook): this {
    this.hooks.add('pre_handler', hook);
    return this;
  }
  onResponse(hook: Hook): this {
    this.hooks.add('on_response', hook);
    return this;
  }
  onError(hook: Hook): this {
    this.hooks.add('on_error', hook);
    return this;
  }
  /** A named hook that routes reference through LifecycleHooksConfig (resolved within its phase). */
  hook(phase: HookPhase, name: string, fn: Hook): this {
    this.hooks.register(phase, name, fn);
    return this;
  }

  /** Extra server-level middleware, after keel's own server-level features. */
  use(mw: Middleware): this {
    this.#assertOpen('add middleware');
    if (typeof mw !== 'function') throw new AppError('Route', 'app.use() expects a (req, res, next) function');
    this.#uses.push(mw);
    return this;
  }

  /** A node-level handler at `path` (find-my-way pattern or `{name}` placeholders) behind server middleware. */
  mount(method: string | string[] | '*', path: string, handler: RawHandler, options: MountOptions = {}): this {
    this.#assertOpen('mount a handler');
    const methods = method === '*' ? '*' : (Array.isArray(method) ? method : [method]).map((m) => parseMethod(m, `mount(${path}).method`));
    this.#mounts.push({ methods, path, handler, options });
    return this;
  }

  /**
   * Register a JSON-RPC 2.0 method, served at JsonRpcConfig.endpoint_path (default `/rpc`; lib/jsonrpc,
   * docs/api-descriptions.md). Bad metadata, a duplicate or an `rpc.` name: ConfigError when the router is built.
   */
  rpc(info: JsonRpcMethodInfoInput | string, handler: RpcHandler): this {
    return this.#register('rpc', [info, handler]);
  }

  /**
   * Keep a call of a protocol method until the router is built: the protocol module is loaded by
   * `ready()` and checks the call then (a bad one fails `intoRouter()` / `listen()`).
   */
  #register(method: keyof typeof PROTOCOL_OF_METHOD & string, args: unknown[]): this {
    this.#assertOpen(REGISTRATION_WHAT[method] ?? `call ${method}()`);
    this.#registrations.push({ method, args });
    return this;
  }

  /** Handle HTTP upgrades (WebSocket) at an exact path. */
  upgrade(path: string, handler: UpgradeHandler): this {
    if (this.#upgrades.has(path)) throw new AppError('Route', `An upgrade handler for ${path} is already registered`);
    this.#upgrades.set(path, handler);
    return this;
  }

  /** The server-level middleware (request id, tracing, rate limit, auth, `use()`), for WebSocket upgrade guards (lib/ws). */
  /** The server-level rate limit alone (gRPC calls draw from the same buckets as HTTP). */
  serverRateLimit(): Middleware | undefined {
    return serverRateLimit(this);
  }

  serverMiddleware(): readonly Middleware[] {
    return mountFeatures(this, { methods: '*', path: '', handler: () => undefined, options: { securityHeaders: false } }, this.#uses);
  }

  /**
   * spec: register_graphql_route: built-in schema `query_only` | `query_mutation` | `full` at `path`
   * (GraphQL over HTTP + graphql-transport-ws; keel/graphql, docs/graphql.md). Checked when the router
   * is built: unknown schema_type is AppError GraphQl from `intoRouter()` / `listen()`.
   */
  registerGraphqlRoute(path: string, method: string, schemaType: 'query_only' | 'query_mutation' | 'full' | (string & {}), config: SchemaConfigInput = {}, route?: GraphQlRouteConfig | AppGraphqlRouteOptions): this {
    return this.#register('registerGraphqlRoute', [path, method, schemaType, config, route]);
  }

  /** spec: register_graphql_sdl_route: an SDL schema whose resolvers serve `responseData`. Bad SDL: AppError GraphQl when the router is built. */
  registerGraphqlSdlRoute(path: string, method: string, sdl: string, responseData: unknown, config: DynamicSchemaConfigInput, route?: GraphQlRouteConfig | AppGraphqlRouteOptions): this {
    return this.#register('registerGraphqlSdlRoute', [path, method, sdl, responseData, config, route]);
  }

  /** A WebSocket route at an exact path (keel/ws): `handler` gets a WebSocketSession of typed messages. */
  ws(path: string, handler: AppWebSocketHandler, options: AppWebSocketOptions = {}): this {
    return this.#register('ws', [path, handler, options]);
  }

  /**
   * spec: merge_axum_router → an Express router (or app) consulted after keel's own routes. Returns
   * the App. It keeps the semantics of its Express major version (lib/app/merge.ts): a whole app runs as
   * itself; a bare Router runs on `options.express`, or on the project's Express when that is the
   * router's major version. An Express 4 Router with no Express 4 to run it is an AppError now.
   */
  mergeRouter(router: ExpressRouterLike, options?: MergeRouterOptions): this {
    this.#assertOpen('merge a router');
    this.#routers.push(prepareMergedRouter(router, options));
    return this;
  }

  /** spec: attach_axum_router → the same, as an incremental mutation. */
  attachRouter(router: ExpressRouterLike, options?: MergeRouterOptions): void {
    this.mergeRouter(router, options);
  }

  onStart(fn: (handle: ServerHandle, app: App) => void | Promise<void>): this {
    this.#onStart.push(fn);
    return this;
  }
  /**
   * Run `fn` when shutdown begins, while in-flight HTTP requests finish: close long-lived connections
   * (WebSocket, HTTP/2) that would otherwise hold the server open until `shutdown_timeout`.
   */
  preShutdown(fn: () => void | Promise<void>): this {
    this.#preShutdown.push(fn);
    return this;
  }
  /** Run `fn` once in-flight requests have finished (or shutdown_timeout passed): drain queues, close pools. */
  onShutdown(fn: () => void | Promise<void>): this {
    this.#onShutdown.push(fn);
    return this;
  }
  /**
   * Register a gRPC service from a .proto (or protobufjs Root), served on the same port over h2c when
   * ServerConfig.grpc is set and enabled (docs/grpc.md). Handlers are keyed by rpc name.
   */
  grpc(proto: GrpcProtoSource, serviceName: string, handlers: GrpcServiceHandlers, options?: GrpcServiceOptions): this {
    if (!this.config.grpc) {
      throw new AppError('Route', `gRPC service "${serviceName}" registered while ServerConfig.grpc is null; set grpc (e.g. { grpc: {} }) to serve it`);
    }
    return this.#register('grpc', [proto, serviceName, handlers, options]);
  }
  /** Replace how the listening server is created (gRPC uses this to serve HTTP/2 on the same port). */
  setServerFactory(factory: ServerFactory): this {
    this.#serverFactory = factory;
    return this;
  }

  /** The registered routes, in order (OpenAPI generation reads these). */
  routes(): readonly RouteDefinition[] {
    return this.#routes;
  }
  mounts(): readonly Mount[] {
    return this.#mounts;
  }
  upgrades(): ReadonlyMap<string, UpgradeHandler> {
    return this.#upgrades;
  }
  get serverFactory(): ServerFactory | undefined {
    return this.#serverFactory;
  }
  get startHooks(): readonly ((handle: ServerHandle, app: App) => void | Promise<void>)[] {
    return this.#onStart;
  }
  get preShutdownHooks(): readonly (() => void | Promise<void>)[] {
    return this.#preShutdown;
  }
  get shutdownHooks(): readonly (() => void | Promise<void>)[] {
    return this.#onShutdown;
  }

  /**
   * Load the protocol modules this App uses (its config and its `ws` / `rpc` / `grpc` /
   * `registerGraphql*` calls) with `import()`, so that `intoRouter()` can build. `listen()` awaits it;
   * an App embedded with `intoRouter()` awaits it first. A protocol whose packages are missing
   * rejects with an AppError naming the `npm install` command. Resolves to the App; idempotent.
   *
   * @example
   * const app = createApp({ openapi: { enabled: true } }, (app) => app.get('/pets', listPets));
   * await app.ready();
   * expressApp.use(app.intoRouter());
   */
  async ready(): Promise<this> {
    await loadProtocols(protocolsUsed(this.config, this.#registrations, this.#routes));
    checkObservabilityPackages(this.config);
    if (this.config.background_tasks.enabled) await this.#background.load();
    return this;
  }

  /**
   * spec: into_router(). Builds once (protocols, background executor, validators, pipelines) and
   * returns a Connect-style function: under Express `app.use(keel.intoRouter())` unmatched requests go
   * to `next()`; as a node:http handler they get a 404 problem. An App using a protocol module
   * (GraphQL, WebSocket, gRPC, JSON-RPC, OpenAPI, AsyncAPI) must have been made `ready()` first.
   */
  intoRouter(): KeelRouter {
    if (this.#built) return this.#built;
    const used = protocolsUsed(this.config, this.#registrations, this.#routes);
    const missing = used.filter((name) => !loadedProtocol(name));
    if (missing.length) {
      throw new AppError('Server', `This App uses ${missing.map((n) => `keel/${n}`).join(', ')}, loaded when it starts: await app.ready() before app.intoRouter() (app.listen() does it)`);
    }
    try {
      for (const name of used) {
        loadedProtocol(name)!.install(this, this.#registrations.filter((r) => PROTOCOL_OF_METHOD[r.method] === name));
      }
      // After the protocols, whose registrations may still be refused: a refused build starts no executor.
      this.#checkJobs();
      installBackground(this, this.#background, this.jobs);
      // Spans on: events get PRODUCER (and, across instances, CONSUMER) spans (lib/observability/job-spans.ts).
      if (this.config.opentelemetry?.enabled) this.pubsub.traceWith?.(jobTracing(this.config.opentelemetry));
      // Stores made without a logger log their down / back lines through the App's (issue 36).
      this.pubsub.useLogger?.(this.logger);
      (this.rateLimitOptions.store as { useLogger?(l: Logger): void } | undefined)?.useLogger?.(this.logger);
      // Readiness, metrics and spans (ServerConfig.readiness / metrics / opentelemetry) wrap it; off: nothing per request.
      this.#built = instrumentRouter(this, buildRouter(this, { routes: this.#routes, mounts: this.#mounts, uses: this.#uses, routers: this.#routers as never[] }));
    } catch (err) {
      // keel's own errors and bad arguments (a TypeError naming the option) reach the caller as they are.
      if (err instanceof AppError || err instanceof ConfigError || err instanceof TypeError) throw err;
      throw new AppError('Server', `Building the router failed: ${(err as Error).message}`, { cause: err });
    }
    return this.#built;
  }

  #checkJobs(): void {
    if (this.jobs.size > 0 && !this.config.background_tasks.enabled) {
      throw new AppError('Server', `Background jobs are registered (${this.jobs.names().join(', ')}) but background_tasks.enabled is false: set background_tasks: { enabled: true }`);
    }
  }

  /**
   * Worker-only mode: run this App's background jobs from the shared queue and serve no HTTP (a job
   * machine). Needs a durable backend (`AppOptions.background: bullmqBackground(...)`), background
   * tasks enabled and at least one `app.job()`. SIGTERM / SIGINT (when `graceful_shutdown`) drain it
   * and exit 0.
   *
   * @example
   * const app = createApp({ background_tasks: { enabled: true } }, registerJobs, { background: bullmqBackground({ connection: process.env.REDIS_URL! }) });
   * await app.runWorker();
   */
  async runWorker(options: { handleSignals?: boolean; host?: string; port?: number } = {}): Promise<WorkerHandle> {
    if (!this.#background.durable) {
      throw new AppError('Server', 'app.runWorker() needs a shared job queue: createApp(config, setup, { background: bullmqBackground({ connection: process.env.REDIS_URL }) })');
    }
    if (!this.config.background_tasks.enabled) throw new AppError('Server', 'app.runWorker() needs background_tasks: { enabled: true }');
    if (this.jobs.size === 0) throw new AppError('Server', 'app.runWorker() has no jobs to run: register them with app.job(name, fn) first');
    await this.ready();
    const executor = installBackground(this, this.#background, this.jobs)!;
    // Readiness / metrics on: /health, /ready, /metrics on host:port (docs/operations.md, "Worker-only processes").
    const probes = await listenWorkerProbes(this, options);
    let closing: Promise<void> | undefined;
    let removeSignals = (): void => {};
    const address = probes?.address();
    const handle: WorkerHandle = {
      close: () => (closing ??= (async () => {
        removeSignals();
        await executor.beginShutdown?.();
        await settleAll(this, this.#onShutdown);
        if (probes) await new Promise<void>((resolve) => probes.close(() => resolve()).closeAllConnections());
      })()),
      ...(address && typeof address === 'object' ? { url: `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}` } : {}),
    };
    if (options.handleSignals ?? this.config.graceful_shutdown) removeSignals = onStopSignals(this, 'worker shutting down', () => handle.close());
    this.logger.info({ jobs: this.jobs.names() }, 'background worker running');
    return handle;
  }

  /** spec: into_router_and_config(): the router plus the frozen ServerConfig, for embedding. */
  intoRouterAndConfig(): { router: KeelRouter; config: Readonly<ServerConfig> } {
    return { router: this.intoRouter(), config: this.config };
  }

  /**
   * Serve one request in-process, without a socket or a listening server (lib/app/inject.ts): the full
   * pipeline (hooks, validation, middleware, limits, problem answers) through light-my-request. The
   * App is made `ready()` first, as `listen()` does. With no argument, a builder.
   *
   * @example
   * const res = await app.inject({ method: 'POST', url: '/notes', payload: { text: 'hi' } });
   * assert.equal(res.statusCode, 201);
   * const chained = await app.inject().get('/notes').query({ limit: '5' }).end();
   */
  inject(options?: string | InjectOptions): InjectChain {
    return injectInto(this, options);
  }

  /** Bind `host:port` from the ServerConfig (overridable) and serve. */
  listen(options: ListenOptions = {}): Promise<ServerHandle> {
    return listen(this, options);
  }
}

/**
 * Build an App from a ServerConfig and an optional setup function.
 *
 * @example
 * const app = createApp({ port: 0, enable_request_id: true }, (app) => {
 *   app.get('/health', () => ({ ok: true }));
 * });
 */
export function createApp<const J extends JwtConfigInput | null | undefined = undefined, const K extends ApiKeyConfigInput | null | undefined = undefined>(
  config: ServerConfigInput & { jwt_auth?: J; api_key_auth?: K } = {},
  setup?: (app: App<ServerAuthOf<J, K>>) => void,
  options: AppOptions = {},
): App<ServerAuthOf<J, K>> {
  // The type parameter only carries what the server-level jwt_auth / api_key_auth give every route's
  // `data.auth` / `request.apiKey` (lib/app/typed-route.ts); the App is the same at run time.
  const app = new App(config, options) as App<ServerAuthOf<J, K>>;
  setup?.(app);
  return app;
}

export type { RequestData, IncomingMessage };
