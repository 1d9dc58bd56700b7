/**
 * Built-in protocol installers, run by the App when it is built (see docs/architecture.md), and the
 * on-demand loading of the protocol modules behind them.
 *
 * Why on demand: GraphQL, gRPC, WebSocket, OpenAPI, AsyncAPI and JSON-RPC pull in big libraries
 * (graphql, @grpc/grpc-js, protobufjs, ws, swagger-ui-express, ...); an app that uses none of them
 * must not pay their start-up time and memory. Each protocol's `install.ts` registers what the App
 * calls with `provideProtocol()` when it is evaluated, so importing `keel/<protocol>` makes it
 * available; otherwise the App loads it the first time it is needed (a registration method such as
 * `app.ws()`, or a ServerConfig record that turns the protocol on) with a synchronous `require()` of
 * the ES module (Node ≥ 20.19 / 22.12), so the App's methods and `intoRouter()` stay synchronous.
 */
import { createRequire } from 'node:module';
import type { App } from './app.js';
import { AppError } from './errors.js';
import { installBackground } from './background/install.js';

export type Installer = (app: App) => void | Promise<void>;

/** What the App calls in each protocol module (types only: nothing is loaded for them). */
export interface BuiltinProtocols {
  graphql: typeof import('./graphql/install.js').graphqlProtocol;
  grpc: typeof import('./grpc/install.js').grpcProtocol;
  ws: typeof import('./ws/install.js').webSocketProtocol;
  jsonrpc: typeof import('./jsonrpc/install.js').jsonRpcProtocol;
  openapi: typeof import('./openapi/install.js').openApiProtocol;
  asyncapi: typeof import('./asyncapi/install.js').asyncApiProtocol;
}
export type ProtocolName = keyof BuiltinProtocols;

/** Relative to this file, so the same specifier finds `dist/lib/x/install.js` and, under tsx, `lib/x/install.ts`. */
const INSTALL_MODULES: Record<ProtocolName, string> = {
  graphql: './graphql/install.js',
  grpc: './grpc/install.js',
  ws: './ws/install.js',
  jsonrpc: './jsonrpc/install.js',
  openapi: './openapi/install.js',
  asyncapi: './asyncapi/install.js',
};

const provided = new Map<ProtocolName, unknown>();
const requireModule = createRequire(import.meta.url);

/** Called once by each `lib/<protocol>/install.ts` when it is evaluated. */
export function provideProtocol<K extends ProtocolName>(name: K, protocol: BuiltinProtocols[K]): void {
  provided.set(name, protocol);
}

/** Whether the protocol module has been loaded in this process (imported, or loaded by an App). */
export function isProtocolLoaded(name: ProtocolName): boolean {
  return provided.has(name);
}

/**
 * The protocol module, loaded now if nothing imported it yet.
 *
 * A module that registered itself elsewhere was loaded as a second copy: CommonJS require hooks
 * (tsx, ts-node) compile ES modules to CommonJS, with their own copies of keel's errors and records,
 * so `instanceof` and the App's shared state would silently break. That is an AppError telling the
 * user to import the module instead, never a half-working protocol.
 */
export function loadProtocol<K extends ProtocolName>(name: K): BuiltinProtocols[K] {
  let protocol = provided.get(name);
  if (protocol === undefined) {
    const how = `import 'keel/${name}' (or anything from it) before configuring it`;
    try {
      requireModule(INSTALL_MODULES[name]);
    } catch (err) {
      // A Node without require(esm) (before 20.19 / 22.12) says so with ERR_REQUIRE_ESM: importing works there.
      const hint = (err as { code?: unknown }).code === 'ERR_REQUIRE_ESM' ? `; ${how}` : '';
      throw new AppError('Server', `Loading keel/${name} failed: ${(err as Error).message}${hint}`, { cause: err });
    }
    protocol = provided.get(name);
    if (protocol === undefined) {
      throw new AppError('Server', `keel/${name} could not be loaded on demand in this process (a CommonJS require hook such as tsx's loads a separate copy); ${how}`);
    }
  }
  return protocol as BuiltinProtocols[K];
}

/** Each protocol installer, loading its module only when the App's config or routes use it. */
export const BUILTIN_INSTALLERS: Installer[] = [
  installBackground,
  (app) => {
    if (isProtocolLoaded('openapi') || app.config.openapi?.enabled) loadProtocol('openapi').installOpenApi(app);
  },
  (app) => {
    if (isProtocolLoaded('asyncapi') || app.config.asyncapi?.enabled) loadProtocol('asyncapi').installAsyncApi(app);
  },
  (app) => {
    // Served when the record is on, or (record null) when a route carries `jsonrpc` metadata;
    // methods from `app.rpc()` already loaded the module.
    const record = app.config.jsonrpc;
    const wanted = record ? record.enabled : app.routes().some((r) => r.jsonrpc);
    if (isProtocolLoaded('jsonrpc') || wanted) loadProtocol('jsonrpc').installJsonRpc(app);
  },
  (app) => {
    // Services exist only through `app.grpc()`, which loaded the module.
    if (isProtocolLoaded('grpc')) loadProtocol('grpc').installGrpc(app);
  },
];
