/**
 * The types of gRPC handlers and services, free of @grpc/proto-loader and protobufjs types so that
 * the App's declarations (`app.grpc()`, lib/app/app.ts) type-check in a project without those packages.
 */
import type { GrpcMetadataInit } from './status.js';

export type GrpcMethodKind = 'unary' | 'server_streaming' | 'client_streaming' | 'bidi_streaming';

/** Incoming metadata: string values, Buffers for `-bin` keys (base64-decoded). */
export type GrpcIncomingMetadata = Readonly<Record<string, string | Buffer>>;

/** What every handler gets besides its request(s). */
export interface GrpcCallContext {
  /** `/package.Service/Method`. */
  readonly path: string;
  readonly service: string;
  readonly method: string;
  readonly metadata: GrpcIncomingMetadata;
  /** Aborted when the client cancels, the deadline passes or the call ends early (stream byte cap). */
  readonly signal: AbortSignal;
  /** Epoch milliseconds of the deadline (min of `grpc-timeout` and `request_timeout`), if any. */
  readonly deadline: number | undefined;
  /** `x-request-id` of this call, when request ids are on. */
  readonly requestId: string | undefined;
  /** What the guard returned (e.g. verified JWT claims). */
  readonly auth: Readonly<Record<string, unknown>> | undefined;
  /** Remote address of the connection. */
  readonly peer: string | undefined;
  /** Send response headers (initial metadata) now; at most once, before the first message. */
  sendMetadata(metadata: GrpcMetadataInit): void;
  /** Add trailing metadata, sent beside `grpc-status`. */
  setTrailer(key: string, value: string | Buffer): void;
}

// `any` by default: message shapes come from the .proto at run time; callers narrow with the generics.
export type UnaryHandler<Req = any, Res = any> = (request: Req, call: GrpcCallContext) => Res | Promise<Res>;
export type ServerStreamingHandler<Req = any, Res = any> = (request: Req, call: GrpcCallContext) => AsyncIterable<Res> | Iterable<Res>;
export type ClientStreamingHandler<Req = any, Res = any> = (requests: AsyncIterable<Req>, call: GrpcCallContext) => Res | Promise<Res>;
export type BidiStreamingHandler<Req = any, Res = any> = (requests: AsyncIterable<Req>, call: GrpcCallContext) => AsyncIterable<Res> | Iterable<Res>;
export type GrpcHandler = UnaryHandler | ServerStreamingHandler | ClientStreamingHandler | BidiStreamingHandler;
/** Handlers by rpc name as written in the .proto (`GetUser`) or in lowerCamelCase (`getUser`). */
export type GrpcServiceHandlers = Readonly<Record<string, GrpcHandler>>;

/** proto-loader's conversion options (`@grpc/proto-loader` Options), written structurally. */
export interface GrpcLoaderOptions {
  keepCase?: boolean;
  longs?: unknown;
  enums?: unknown;
  bytes?: unknown;
  defaults?: boolean;
  arrays?: boolean;
  objects?: boolean;
  oneofs?: boolean;
  json?: boolean;
  includeDirs?: string[];
}

export interface GrpcServiceOptions {
  /** proto-loader options; default `DEFAULT_GRPC_LOADER_OPTIONS` (`{ keepCase: true, longs: String, enums: String, defaults: true, oneofs: true }`). */
  loader?: GrpcLoaderOptions;
  /** Directories searched for `import`ed .proto files. */
  includeDirs?: string[];
}

/** A .proto path (or paths), a protobufjs Root (anything with `toJSON()`), or a proto-loader PackageDefinition. */
export type GrpcProtoSource = string | readonly string[] | { toJSON(): unknown } | Readonly<Record<string, object>>;


/** One callable method. */
export interface GrpcMethod {
  readonly path: string;
  readonly service: string;
  readonly name: string;
  readonly kind: GrpcMethodKind;
  readonly handler: GrpcHandler | undefined;
  readonly decode: (bytes: Buffer) => unknown;
  readonly encode: (message: unknown) => Buffer;
}

/** A registered service: its methods and the serialized FileDescriptorProtos it was built from (for reflection). */
export interface GrpcServiceEntry {
  readonly name: string;
  readonly methods: readonly GrpcMethod[];
  readonly fileDescriptorProtos: readonly Buffer[];
  /** Fully-qualified names of the messages, enums and services of the same definition (reflection lookups). */
  readonly symbols: ReadonlySet<string>;
}

/** What health and reflection need from the router (GrpcRouter implements it). */
export interface GrpcServiceRegistry {
  addService(source: GrpcProtoSource, serviceName: string, handlers: GrpcServiceHandlers, options?: GrpcServiceOptions): unknown;
  services(): readonly GrpcServiceEntry[];
}
