/**
 * The gRPC service registry: loads `.proto` definitions with @grpc/proto-loader, binds handlers to
 * methods and answers `/package.Service/Method` lookups. Registration problems (unknown service, a
 * handler name that matches no method) throw AppError at start-up, never at call time.
 */
import * as protoLoader from '@grpc/proto-loader';
import { AppError } from '../http/errors.js';
import { suggest } from '../records/define.js';
import { installHealth, type HealthRegistry } from './health.js';
import { installReflection } from './reflection.js';
import type { GrpcCallContext, GrpcHandler, GrpcMethod, GrpcMethodKind, GrpcProtoSource, GrpcServiceEntry, GrpcServiceHandlers, GrpcServiceOptions } from './types.js';

// Dependency-free (no proto-loader types), so the App's own declarations can use them (lib/app/app.ts).
export type {
  GrpcIncomingMetadata, GrpcCallContext, UnaryHandler, ServerStreamingHandler, ClientStreamingHandler, BidiStreamingHandler, GrpcHandler,
  GrpcServiceHandlers, GrpcServiceOptions, GrpcProtoSource, GrpcLoaderOptions, GrpcMethodKind, GrpcMethod, GrpcServiceEntry, GrpcServiceRegistry,
} from './types.js';


/**
 * How messages become handler objects (proto-loader options). keel's defaults keep field names as in the
 * .proto, give int64 values as strings (no precision loss), enums as names, and fill defaults.
 */
export const DEFAULT_GRPC_LOADER_OPTIONS: Readonly<protoLoader.Options> = Object.freeze({
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});

export interface GrpcRouterOptions {
  /** Serve `grpc.health.v1.Health` (default `true`). */
  health?: boolean;
  /** Serve server reflection v1 and v1alpha (default `true`). */
  reflection?: boolean;
}

interface MethodDefinitionLike {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  originalName?: string;
  requestDeserialize: (b: Buffer) => unknown;
  responseSerialize: (v: unknown) => Buffer;
  requestType?: { fileDescriptorProtos?: Buffer[] };
}

function kindOf(def: MethodDefinitionLike): GrpcMethodKind {
  if (def.requestStream) return def.responseStream ? 'bidi_streaming' : 'client_streaming';
  return def.responseStream ? 'server_streaming' : 'unary';
}

function loadDefinition(source: GrpcProtoSource, options: GrpcServiceOptions): protoLoader.PackageDefinition {
  const loader = { ...(options.loader ?? DEFAULT_GRPC_LOADER_OPTIONS), ...(options.includeDirs ? { includeDirs: options.includeDirs } : {}) } as protoLoader.Options;
  try {
    if (typeof source === 'string' || Array.isArray(source)) return protoLoader.loadSync(source as string | string[], loader);
    if (typeof (source as { toJSON?: unknown }).toJSON === 'function') {
      return protoLoader.fromJSON((source as { toJSON(): unknown }).toJSON() as never, loader);
    }
    return source as protoLoader.PackageDefinition;
  } catch (err) {
    throw new AppError('Route', `Loading gRPC definitions failed: ${(err as Error).message}`, { cause: err });
  }
}

function isServiceDefinition(v: unknown): v is Record<string, MethodDefinitionLike> {
  if (!v || typeof v !== 'object' || 'format' in v) return false;
  const methods = Object.values(v as object);
  return methods.length > 0 && methods.every((m) => typeof (m as MethodDefinitionLike)?.path === 'string');
}

/**
 * The registry of gRPC services one server answers.
 *
 * @example
 * const router = createGrpcRouter();
 * router.addService('examples/grpc/greeter.proto', 'keel.examples.Greeter', {
 *   SayHello: ({ name }) => ({ message: `Hello, ${name}` }),
 * });
 */
export class GrpcRouter {
  private readonly byPath = new Map<string, GrpcMethod>();
  private readonly entries = new Map<string, GrpcServiceEntry>();
  /** Serving status of the standard health service (undefined when health is off). */
  readonly health: HealthRegistry | undefined;

  constructor(options: GrpcRouterOptions = {}) {
    if (options.health ?? true) this.health = installHealth(this);
    if (options.reflection ?? true) installReflection(this);
    for (const name of this.entries.keys()) this.health?.set(name, 'SERVING');
  }

  /**
   * Register `serviceName` (fully qualified, e.g. `example.v1.UserService`) from `source` with `handlers`.
   * Methods without a handler answer UNIMPLEMENTED; a handler name that matches no method throws.
   */
  addService(source: GrpcProtoSource, serviceName: string, handlers: GrpcServiceHandlers, options: GrpcServiceOptions = {}): this {
    const pkg = loadDefinition(source, options);
    const def = pkg[serviceName];
    if (!isServiceDefinition(def)) {
      const services = Object.keys(pkg).filter((k) => isServiceDefinition(pkg[k]));
      const hint = suggest(serviceName, services);
      throw new AppError('Route', `gRPC service "${serviceName}" is not defined${hint ? `; did you mean "${hint}"?` : services.length ? `; defined services: ${services.join(', ')}` : ''}`);
    }
    if (this.entries.has(serviceName)) throw new AppError('Route', `gRPC service "${serviceName}" is already registered`);
    const byName = new Map<string, string>();
    for (const [name, m] of Object.entries(def)) {
      byName.set(name, name);
      if (m.originalName) byName.set(m.originalName, name);
    }
    const bound = new Map<string, GrpcHandler>();
    for (const [key, handler] of Object.entries(handlers)) {
      const name = byName.get(key);
      if (!name) {
        const hint = suggest(key, Object.keys(def));
        throw new AppError('Route', `gRPC handler "${key}" matches no method of ${serviceName}${hint ? `; did you mean "${hint}"?` : `; methods: ${Object.keys(def).join(', ')}`}`);
      }
      if (typeof handler !== 'function') throw new AppError('Route', `gRPC handler "${key}" of ${serviceName} must be a function, got ${typeof handler}`);
      bound.set(name, handler);
    }
    const methods: GrpcMethod[] = Object.entries(def).map(([name, m]) => ({
      path: m.path,
      service: serviceName,
      name,
      kind: kindOf(m),
      handler: bound.get(name),
      decode: m.requestDeserialize,
      encode: m.responseSerialize,
    }));
    const first = Object.values(def)[0]!;
    const entry: GrpcServiceEntry = {
      name: serviceName,
      methods,
      fileDescriptorProtos: first.requestType?.fileDescriptorProtos ?? [],
      symbols: symbolsOf(pkg),
    };
    for (const m of methods) this.byPath.set(m.path, m);
    this.entries.set(serviceName, entry);
    this.health?.set(serviceName, 'SERVING');
    return this;
  }

  /** The method for a `:path`, if registered. */
  lookup(path: string): GrpcMethod | undefined {
    return this.byPath.get(path);
  }

  /** Registered services (fully-qualified names), including health and reflection when on. */
  services(): GrpcServiceEntry[] {
    return [...this.entries.values()];
  }

  /** True when only the built-in services are registered. */
  get empty(): boolean {
    return this.services().every((s) => s.name.startsWith('grpc.'));
  }
}

function symbolsOf(pkg: protoLoader.PackageDefinition): Set<string> {
  const out = new Set<string>();
  for (const [name, def] of Object.entries(pkg)) {
    out.add(name);
    if (isServiceDefinition(def)) for (const m of Object.keys(def)) out.add(`${name}.${m}`);
  }
  return out;
}

/** A new registry; health and reflection are on unless turned off. */
export function createGrpcRouter(options: GrpcRouterOptions = {}): GrpcRouter {
  return new GrpcRouter(options);
}
