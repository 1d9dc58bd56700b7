/**
 * gRPC on keel's port: services from .proto files, the four call kinds, health and reflection.
 * See docs/grpc.md.
 */
export { GrpcRouter, createGrpcRouter, DEFAULT_GRPC_LOADER_OPTIONS } from './router.js';
export type {
  GrpcCallContext, GrpcHandler, GrpcIncomingMetadata, GrpcMethod, GrpcMethodKind, GrpcProtoSource, GrpcRouterOptions,
  GrpcServiceEntry, GrpcServiceHandlers, GrpcServiceOptions, UnaryHandler, ServerStreamingHandler, ClientStreamingHandler,
  BidiStreamingHandler,
} from './router.js';
export { GrpcStatus, GrpcError, grpcStatusName, grpcCodeForHttpStatus, statusFromError, encodeGrpcMessage, decodeGrpcMessage, UNKNOWN_ERROR_MESSAGE } from './status.js';
export type { GrpcStatusCode, GrpcStatusName, GrpcStatusObject, GrpcMetadataInit, GrpcMetadataValue } from './status.js';
export { attachGrpc, createDualServer, HTTP2_PREFACE, DEFAULT_SNIFF_TIMEOUT_MS, SHUTDOWN_SNIFF_GRACE_MS } from './server.js';
export type { GrpcAttachment, GrpcServerOptions, Http2FallbackMode } from './server.js';
export { H2_CLOSE_GRACE_MS, DEFAULT_H2_REFUSAL_LOG_INTERVAL_MS } from './sessions.js';
export { H2_CALM_GRACE_MS, type H2AbuseLimits, type H2Breach } from './h2-abuse.js';
export { isGrpcRequest, GRPC_COMPRESS_MIN_BYTES } from './call.js';
export type { GrpcGuard, GrpcGuardContext } from './call.js';
export { HealthRegistry, HEALTH_SERVICE } from './health.js';
export type { ServingStatus } from './health.js';
export { REFLECTION_SERVICES } from './reflection.js';
export { frameMessage, MessageDecoder, MessageTooLargeError, parseGrpcTimeout, GRPC_ENCODINGS } from './framing.js';
export { guardFromMiddleware } from './guard.js';
export { registerGrpcService, installGrpc, grpcStateOf, GRPC_EXTENSION, type GrpcAppState } from './install.js';
