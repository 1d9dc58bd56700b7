/**
 * Which protocol modules an App uses, and loading them (docs/architecture.md, "Protocols").
 *
 * GraphQL, gRPC, WebSocket and the OpenAPI pages need packages keel does not install (optional peer
 * dependencies: graphql, ws, @grpc/proto-loader, swagger-ui-express, ...); an App that uses none of
 * them loads none of them. `app.ready()` (awaited by `app.listen()`) loads the protocols the App's
 * config and registrations use with `import()`, the same way compiled and under tsx: the module is
 * the one instance the process has, with keel's own error classes. A missing package is an AppError
 * naming the `npm install` command, before anything is served.
 */
import { AppError } from '../http/errors.js';
import { missingPackages, missingPackagesError } from '../ops/packages.js';
import type { ProtocolName, ProtocolPlugin, ProtocolRegistration } from './plugin.js';
import type { RouteDefinition } from './route-definition.js';
import type { ServerConfig } from '../records/server.js';

interface ProtocolModule {
  protocol: ProtocolPlugin;
}

interface ProtocolEntry {
  /** Literal specifiers (relative to this file: `dist/lib/x/install.js` compiled, `lib/x/install.ts` under tsx). */
  load(): Promise<ProtocolModule>;
  /** Optional peer dependencies the protocol imports, with the major versions keel is tested with. */
  packages: readonly string[];
}

/** Each protocol's module and the packages it needs (package.json peerDependencies; docs/protocols.md). */
export const PROTOCOLS: Readonly<Record<ProtocolName, ProtocolEntry>> = {
  graphql: { load: () => import('../graphql/install.js'), packages: ['graphql@16', 'graphql-http@1', 'graphql-ws@6', 'ws@8', 'lru-cache@11'] },
  grpc: { load: () => import('../grpc/install.js'), packages: ['@grpc/proto-loader@0.8', 'protobufjs@8'] },
  ws: { load: () => import('../ws/install.js'), packages: ['ws@8'] },
  jsonrpc: { load: () => import('../jsonrpc/install.js'), packages: [] },
  // The document needs no package; each page checks its own when its mounts are built (lib/openapi/pages.ts).
  openapi: { load: () => import('../openapi/install.js'), packages: [] },
  asyncapi: { load: () => import('../asyncapi/install.js'), packages: [] },
};

/** The order protocols are installed in when the router is built. */
const ORDER: readonly ProtocolName[] = ['openapi', 'asyncapi', 'jsonrpc', 'ws', 'graphql', 'grpc'];

/** App methods → the protocol serving them. */
export const PROTOCOL_OF_METHOD: Readonly<Record<string, ProtocolName>> = {
  rpc: 'jsonrpc',
  ws: 'ws',
  registerGraphqlRoute: 'graphql',
  registerGraphqlSdlRoute: 'graphql',
  grpc: 'grpc',
};

/** Loaded modules, shared by every App of the process. */
const loaded = new Map<ProtocolName, ProtocolPlugin>();

/** The protocols an App uses: turned on by its config, or by registrations made through its methods. */
export function protocolsUsed(config: Readonly<ServerConfig>, registrations: readonly ProtocolRegistration[], routes: readonly RouteDefinition[]): ProtocolName[] {
  const used = new Set<ProtocolName>();
  for (const r of registrations) used.add(PROTOCOL_OF_METHOD[r.method]!);
  if (config.openapi?.enabled) used.add('openapi');
  if (config.asyncapi?.enabled) used.add('asyncapi');
  // Served when the record is on, or (record null) when methods or routes with `jsonrpc` metadata exist.
  if (config.jsonrpc ? config.jsonrpc.enabled : routes.some((r) => r.jsonrpc)) used.add('jsonrpc');
  return ORDER.filter((name) => used.has(name));
}

/** The loaded protocol, if `loadProtocols` loaded it in this process. */
export function loadedProtocol(name: ProtocolName): ProtocolPlugin | undefined {
  return loaded.get(name);
}

/** Load `names` with `import()`; a protocol whose packages are missing is an AppError with the install command. */
export async function loadProtocols(names: readonly ProtocolName[]): Promise<void> {
  await Promise.all(names.map(async (name) => {
    if (loaded.has(name)) return;
    const entry = PROTOCOLS[name];
    const missing = missingPackages(entry.packages);
    if (missing.length) throw missingPackagesError(`keel/${name}`, missing);
    let mod: ProtocolModule;
    try {
      mod = await entry.load();
    } catch (err) {
      throw new AppError('Server', `Loading keel/${name} failed: ${(err as Error).message}`, { cause: err });
    }
    loaded.set(name, mod.protocol);
  }));
}
