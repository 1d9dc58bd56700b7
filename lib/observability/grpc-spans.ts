/**
 * gRPC calls as SERVER spans (OpenTelemetry RPC semantic conventions). gRPC is served beside the HTTP
 * router, on HTTP/2 streams (lib/grpc/server.ts), where no http instrumentation starts a span, so keel
 * starts one per call: named `<package>.<Service>/<Method>`, with `rpc.system: grpc`, `rpc.service`,
 * `rpc.method` and `rpc.grpc.status_code`; status ERROR (with the status message) for the codes the
 * conventions call server errors (UNKNOWN, DEADLINE_EXCEEDED, UNIMPLEMENTED, INTERNAL, UNAVAILABLE,
 * DATA_LOSS), and a handler's own exception as an `exception` event (the client gets UNKNOWN without
 * its message). Its parent is the caller's context from the call's metadata (`traceparent`, through the
 * SDK's propagator). Made by the App when `ServerConfig.opentelemetry` is on (lib/grpc/install.ts).
 */
import type { IncomingHttpHeaders } from 'node:http2';
import type { EventEmitter } from 'node:events';
import type { OpenTelemetryConfig } from '../records/observability.js';
import { spanKit, type KitSpan, type SpanKit } from './spans.js';

/** gRPC status codes that are the server's error (semantic conventions, "gRPC status"). */
const SERVER_ERRORS = new Set([2, 4, 12, 13, 14, 15]);

/** One call's span. */
export interface GrpcCallSpan {
  /** Run `fn` with the span active. */
  run<T>(fn: () => T): T;
  /** A handler's own failure (not a GrpcError): its exception event and message. */
  error(err: unknown): void;
  /** End it with the call's final status (once; later calls do nothing). */
  end(code: number, message: string): void;
}

/** Starts the calls' spans. */
export interface GrpcTracing {
  start(path: string, headers: IncomingHttpHeaders, stream: EventEmitter): GrpcCallSpan;
}

/** The App's gRPC tracing: undefined when spans are off. */
export function grpcTracing(config: Readonly<OpenTelemetryConfig> | null | undefined): GrpcTracing | undefined {
  if (!config?.enabled) return undefined;
  const kit = spanKit(config.tracer_name);
  return { start: (path, headers, stream) => startCall(kit, path, headers, stream) };
}

function startCall(kit: SpanKit, path: string, headers: IncomingHttpHeaders, stream: EventEmitter): GrpcCallSpan {
  const { api, tracer } = kit;
  const name = path.startsWith('/') ? path.slice(1) : path;
  const slash = name.lastIndexOf('/');
  const attributes: Record<string, string> = { 'rpc.system': 'grpc' };
  if (slash > 0) {
    attributes['rpc.service'] = name.slice(0, slash);
    attributes['rpc.method'] = name.slice(slash + 1);
  }
  const parent = api.propagation.extract(api.ROOT_CONTEXT, headers);
  const span: KitSpan = tracer.startSpan(slash > 0 ? name : 'grpc', { kind: api.SpanKind.SERVER, attributes }, parent);
  const ctx = api.trace.setSpan(parent, span);
  // The request's messages arrive as the stream's events: they resume the handler in the call's context.
  api.context.bind(ctx, stream);
  let ended = false;
  let errored = false;
  return {
    run: (fn) => api.context.with(ctx, fn),
    error(err) {
      errored = true;
      kit.recordError(span, err, 'gRPC handler failed');
    },
    end(code, message) {
      if (ended) return;
      ended = true;
      span.setAttribute('rpc.grpc.status_code', code);
      if (SERVER_ERRORS.has(code) && !errored) span.setStatus({ code: api.SpanStatusCode.ERROR, message });
      span.end();
    },
  };
}
