/**
 * The one-way boundary between keel's core and its protocols (docs/architecture.md, "Protocols").
 *
 * A protocol module (lib/graphql, lib/grpc, lib/ws, lib/jsonrpc, lib/openapi, lib/asyncapi) exports a
 * `protocol: ProtocolPlugin` from its `install.ts` and sees the App only through `ProtocolHost`. It
 * never imports lib/app/app.ts (nor the router, features or server modules); the core never imports a
 * protocol module statically: the App loads the ones it uses with `import()` in `app.ready()`
 * (lib/app/builtins.ts). Types only: this file loads nothing.
 */
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { HookRegistry } from './hooks.js';
import type { HttpMethod } from '../records/protocol.js';
import type { ServerConfig } from '../records/server.js';
import type { KeelRequest, Middleware, NextFunction } from '../http/request.js';
import type { RouteDefinition } from './route-definition.js';
import type { SecurityHeadersOptions } from '../../middleware/security-headers/index.js';
import type { RateLimitExtensions } from '../../middleware/rate-limit/index.js';
import type { PubSub } from '../pubsub/memory.js';
import type { ServerFactory, ServerHandle } from '../server/server.js';

/** A node-level handler behind the server-level middleware (used by protocol modules). */
export type RawHandler = (req: KeelRequest, res: ServerResponse) => void | Promise<void>;

export interface MountOptions {
  /** Read the body (under max_body_size) into `req.rawBody` before the handler runs. */
  readBody?: boolean;
  /** Skip server-level authentication (public pages such as API docs). */
  public?: boolean;
  /** Security headers for this mount (docs pages need a CSP that allows their assets); false: none. */
  securityHeaders?: SecurityHeadersOptions | false;
  /** Extra Connect-style middleware for this mount, after keel's server-level features. */
  middleware?: Middleware[];
  /**
   * How this mount appears in the App's OpenAPI document (keel/openapi, when `ServerConfig.openapi` is on):
   * its operations, or a function giving them when the document is generated (the first time it is
   * served, after every protocol was installed). Without it the mount is not listed (docs pages, assets).
   */
  openapi?: MountOpenApi | (() => MountOpenApi | undefined);
  /**
   * A page a person opens in a browser or a client (`'Swagger UI'`, `'OpenAPI document'`, `'GraphiQL'`…): `listen()`'s
   * start-up line lists each with its URL, so a newcomer sees where the documentation is.
   */
  page?: string;
}

/** HTTP methods an OpenAPI Path Item describes (OpenAPI 3.1 §4.8.9.1), lower-case as its keys. */
export type OpenApiMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';

/**
 * A mount's operations for the OpenAPI document. Protocols describe themselves with this, so OpenAPI
 * generation never imports them (docs/api-descriptions.md, "Mounted protocols").
 */
export interface MountOpenApi {
  /**
   * OpenAPI 3.1 Operation Objects (§4.8.10) by method, written as they go into the document. They may
   * refer to `#/components/schemas/<name>` of `schemas` below and to `#/components/schemas/ProblemDetails`
   * (RFC 9457, always present). An `operationId` already used by a route gets a `_2` suffix; a 401
   * response and the server's security requirement are added when the mount is not public and the
   * server authenticates.
   */
  operations: Readonly<Partial<Record<OpenApiMethod, Readonly<Record<string, unknown>>>>>;
  /**
   * JSON Schemas (draft-07 or 2020-12, as routes take them) added to `components.schemas`, converted as
   * route schemas are (local `definitions` hoisted, `nullable` made a type). A name another schema already
   * holds is renamed (`Name_2`) and the `$ref`s of these operations and schemas follow.
   */
  schemas?: Readonly<Record<string, unknown>>;
}

export interface Mount {
  methods: HttpMethod[] | '*';
  path: string;
  handler: RawHandler;
  options: MountOptions;
}

export type UpgradeHandler = (req: KeelRequest, socket: Duplex, head: Buffer) => void;

/** How the server layer creates and hands out the listening server (lib/server/server.ts). */
export type { ServerFactory, ServerHandle };

export type KeelRouter = ((req: KeelRequest, res: ServerResponse, next?: NextFunction) => void) & {
  /** Route an HTTP upgrade (WebSocket) to its handler, or refuse it with 404. */
  handleUpgrade(req: KeelRequest, socket: Duplex, head: Buffer): void;
};

/** The protocols keel ships, each a subpath export (`keel/<name>`) loaded only by Apps that use it. */
export type ProtocolName = 'graphql' | 'grpc' | 'ws' | 'jsonrpc' | 'openapi' | 'asyncapi';

/**
 * What a protocol may do with an App: the App's extension points. Everything a protocol serves goes
 * through `mount` / `upgrade` (behind the server-level middleware) or, for gRPC, `setServerFactory`.
 */
export interface ProtocolHost {
  /** The parsed, frozen ServerConfig. */
  readonly config: Readonly<ServerConfig>;
  readonly logger: Logger;
  /** Per-App state of protocol modules, keyed by module name. */
  readonly extensions: Map<string, unknown>;
  /** Where events are published and subscribed (AppOptions.pubsub): memory, or Redis across instances. */
  readonly pubsub: PubSub;
  /** A node-level handler at `path` behind the server-level middleware. */
  mount(method: string | string[] | '*', path: string, handler: RawHandler, options?: MountOptions): unknown;
  /** Handle HTTP upgrades (WebSocket) at an exact path. */
  upgrade(path: string, handler: UpgradeHandler): unknown;
  onStart(fn: (handle: ServerHandle) => void | Promise<void>): unknown;
  onShutdown(fn: () => void | Promise<void>): unknown;
  /**
   * Runs when shutdown starts, while HTTP drains: close long-lived connections (WebSockets, gRPC GOAWAY)
   * so they do not hold the drain until `shutdown_timeout`.
   */
  preShutdown(fn: () => void | Promise<void>): unknown;
  /** The registered keel routes, in order (OpenAPI generation, JSON-RPC route methods). */
  routes(): readonly RouteDefinition[];
  /** The mounts so far, in order; complete once every protocol is installed (OpenAPI generation). */
  mounts(): readonly Mount[];
  /** Replace how the listening server is created (gRPC serves HTTP/2 on the same port). */
  setServerFactory(factory: ServerFactory): unknown;
  /** The server-level middleware chain (request id, rate limit, auth, `app.use`), for upgrade guards. */
  serverMiddleware(): readonly Middleware[];
  /** The server-level rate limit alone (the same buckets as HTTP), for protocols outside the HTTP chain (gRPC). */
  serverRateLimit(): Middleware | undefined;
}

/** One call of an App method a protocol serves (`app.ws(...)`, `app.rpc(...)`, ...), kept until the router is built. */
export interface ProtocolRegistration {
  /** The App method, e.g. `registerGraphqlSdlRoute`. */
  readonly method: string;
  readonly args: readonly unknown[];
}

/** What a protocol's `install.ts` exports as `protocol`. */
export interface ProtocolPlugin {
  readonly name: ProtocolName;
  /**
   * Put the protocol on `host` when the router is built, from the App's config and the registrations
   * made through the App's methods for this protocol (in call order). Throws AppError / ConfigError
   * for a bad registration: the App does not start.
   */
  install(host: ProtocolHost, registrations: readonly ProtocolRegistration[]): void;
}

/**
 * What the core's own modules (router, features, server) need from an App: the protocol view plus
 * what the builder collected. Implemented by `App`; declared here so those modules never import lib/app/app.ts.
 */
export interface AppCore extends ProtocolHost {
  readonly hooks: HookRegistry;
  /** Server-wide security-header options (AppOptions.securityHeaders). */
  readonly securityHeaders: SecurityHeadersOptions | false;
  /** Store and key options of the server-level rate limit (AppOptions.rateLimit). */
  readonly rateLimitOptions: RateLimitExtensions;
  upgrades(): ReadonlyMap<string, UpgradeHandler>;
  readonly serverFactory: ServerFactory | undefined;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the App passes itself
  readonly startHooks: readonly ((handle: ServerHandle, app: any) => void | Promise<void>)[];
  readonly shutdownHooks: readonly (() => void | Promise<void>)[];
  readonly preShutdownHooks: readonly (() => void | Promise<void>)[];
  /** Load the protocol modules the App uses (see lib/app/builtins.ts). */
  ready(): Promise<unknown>;
  intoRouter(): KeelRouter;
}
