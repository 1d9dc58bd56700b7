/**
 * HTTP/1.1 and cleartext HTTP/2 (h2c, "prior knowledge": RFC 9113 §3.3) on one port. Every new connection
 * is sniffed (./sniff.ts): one that opens with the HTTP/2 client preface goes to a node:http2 server, anything
 * else to the node:http server it arrived on. Here: the HTTP/2 server's streams, gRPC calls to the router, the
 * rest to the HTTP/1 server's handler (./http2-fallback.ts), and the shutdown of both. HTTP/1.1 `Upgrade: h2c`
 * (RFC 7540 §3.2, removed in RFC 9113) is not supported; gRPC clients use prior knowledge.
 */
import http from 'node:http';
import http2, { constants as h2, type Http2Server, type Http2Session, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { Logger } from 'pino';
import { GrpcConfig } from '../records/protocol.js';
import { ServerConfig } from '../records/server.js';
import { handleGrpcCall, isGrpcRequest, type GrpcCallSettings, type GrpcGuard } from './call.js';
import type { ServerCall } from './server-call.js';
import { HEALTH_SERVICE } from './health.js';
import type { GrpcRouter } from './router.js';
import { H2Sessions, type H2Refusals } from './sessions.js';
import { h2AbuseLimitsOf, type H2AbuseLimits, type H2Breach } from './h2-abuse.js';
import { trackStreamLimit } from './stream-limit.js';
import { GrpcStatus, encodeGrpcMessage } from './status.js';
import { ClientCalls } from './client-calls.js';
import type { GrpcTracing } from '../observability/grpc-spans.js';
import { WorkRefusal, type AppWorkGate } from '../server/cost.js';
import { admitCall, refuseCallForWork, type GrpcCharge } from './work.js';
import { DEFAULT_SNIFF_TIMEOUT_MS, sniffProtocols } from './sniff.js';
import { reject505, takeCompatListener, type Http2FallbackMode } from './http2-fallback.js';

export { HTTP2_PREFACE, DEFAULT_SNIFF_TIMEOUT_MS, SHUTDOWN_SNIFF_GRACE_MS } from './sniff.js';
export type { Http2FallbackMode } from './http2-fallback.js';

/** ServerConfig's default `h2_*` rates, for a server attached without an App. */
const DEFAULT_H2_ABUSE_LIMITS = h2AbuseLimitsOf(ServerConfig.defaults());

export interface GrpcServerOptions {
  /** Server auth for gRPC calls (see GrpcGuard). */
  guard?: GrpcGuard;
  /** Services the guard skips; default `['grpc.health.v1.Health']` (probes carry no credentials). */
  publicServices?: readonly string[];
  /** Echo or generate `x-request-id` response metadata (the App passes ServerConfig.enable_request_id). Default `false`. */
  requestId?: boolean;
  /** Non-gRPC HTTP/2 requests: `'compat'` (default) hands them to the HTTP/1 server's `request` listeners. */
  http2Fallback?: Http2FallbackMode;
  /** Silent-connection limit before the protocol is known; default `DEFAULT_SNIFF_TIMEOUT_MS` (30000). */
  sniffTimeoutMs?: number;
  /** Errors thrown by handlers that are not GrpcErrors (logging). */
  onError?: (err: unknown, path: string) => void;
  /** A SERVER span per call (the App passes its own when `ServerConfig.opentelemetry` is on). Default: none. */
  tracing?: GrpcTracing;
  /** Where HTTP/2 connections refused by `max_h2_sessions` / `max_h2_sessions_per_client` are logged (warn, one line per second with counts). Default none. */
  logger?: Pick<Logger, 'warn'>;
  /** The App's work limits (ServerConfig.work_limits): calls refused past their client's CPU budget, their work charged to it. */
  work?: AppWorkGate;
  /** node:http options of the HTTP/1.1 server createDualServer makes (e.g. `connectionsCheckingInterval`). */
  httpOptions?: http.ServerOptions;
  /**
   * HTTP/2 reset and stream rates per connection and per client (./h2-abuse.ts); the App passes ServerConfig's
   * `h2_*` keys. Default: ServerConfig's defaults (`null`: none).
   */
  h2Limits?: H2AbuseLimits | null;
}

/** The HTTP/2 side attached to an HTTP/1 server. */
export interface GrpcAttachment {
  /** The node:http2 server connections are handed to (not listening itself). */
  readonly http2Server: Http2Server;
  /** Open HTTP/2 sessions (refused ones are not counted). */
  readonly sessions: ReadonlySet<Http2Session>;
  /** HTTP/2 connections refused since the server started, by the cap that refused them. */
  readonly refused: Readonly<H2Refusals>;
  /** HTTP/2 sessions closed with GOAWAY ENHANCE_YOUR_CALM for a reset or stream rate, by the limit they broke. */
  readonly calmed: Readonly<Record<H2Breach, number>>;
  /** gRPC calls refused by max_calls_per_client since the server started. */
  readonly refusedCalls: () => number;
  /** Times an HTTP/2 session was held (SETTINGS_MAX_CONCURRENT_STREAMS 0 until a call ended): its client was refused a call, or it opened while its client was at max_calls_per_client. */
  readonly heldSessions: () => number;
  /** gRPC calls refused by the work limits (CPU budget, overload) since the server started. */
  readonly refusedWork: () => number;
  /**
   * Graceful shutdown: health turns NOT_SERVING, new calls get UNAVAILABLE, every session gets GOAWAY and
   * may finish its calls (an idle one closes at once), except that a call whose client is still sending ends
   * UNAVAILABLE after `shutdown_stream_grace`; sessions still open after `timeoutMs` are destroyed,
   * and so are connections whose protocol is not known yet.
   */
  shutdown(timeoutMs?: number): Promise<void>;
}

/** The answer to a call past max_calls_per_client (Trailers-Only, RESOURCE_EXHAUSTED, a retry hint of 1 s: gRFC A6). */
const CALLS_PER_CLIENT_REFUSAL = Object.freeze({
  [h2.HTTP2_HEADER_STATUS]: 200,
  'content-type': 'application/grpc',
  'grpc-status': String(GrpcStatus.RESOURCE_EXHAUSTED),
  'grpc-message': encodeGrpcMessage('Too many calls in flight from this client (max_calls_per_client); retry later'),
  'grpc-retry-pushback-ms': '1000',
});

function refuseCall(stream: ServerHttp2Stream): void {
  stream.on('error', () => {});
  if (stream.destroyed || stream.closed) return;
  // node dumps the unread request once the stream closes (a server stream nobody reads).
  stream.respond(CALLS_PER_CLIENT_REFUSAL, { endStream: true });
}

/**
 * Add gRPC over h2c to an existing `http.Server` (call before or after `listen`). The server keeps its own
 * `request`/`upgrade` listeners; only connections that open with the HTTP/2 preface are taken.
 *
 * @example
 * const server = http.createServer(handler);
 * const grpc = attachGrpc(server, router, { max_message_size: 1_048_576 }, { guard });
 * server.listen(8000, '127.0.0.1');
 * // on shutdown: await grpc.shutdown(30_000)
 */
export function attachGrpc(server: http.Server, router: GrpcRouter, config: unknown = {}, options: GrpcServerOptions = {}): GrpcAttachment {
  const cfg = GrpcConfig.parse(config ?? {}, 'grpc');
  let shuttingDown = false;
  const settings: GrpcCallSettings = {
    maxMessageSize: cfg.max_message_size,
    compression: cfg.enable_compression,
    requestTimeoutMs: cfg.request_timeout === null ? undefined : cfg.request_timeout * 1000,
    maxStreamResponseBytes: cfg.max_stream_response_bytes,
    streamRequestLimits: { bytes: cfg.max_stream_request_bytes, messages: cfg.max_stream_request_messages },
    requestId: options.requestId ?? false,
    guard: options.guard,
    publicServices: new Set(options.publicServices ?? [HEALTH_SERVICE]),
    isShuttingDown: () => shuttingDown,
    onError: options.onError,
    tracing: options.tracing,
  };
  const abuse = options.h2Limits === undefined ? DEFAULT_H2_ABUSE_LIMITS : options.h2Limits ?? undefined;
  const http2Server = http2.createServer({
    settings: { maxConcurrentStreams: cfg.max_concurrent_streams },
    // Streams beyond max_concurrent_streams are refused by the HTTP/2 layer (spec: gRPC errors 3).
  });
  const sessions = new H2Sessions({
    idleTimeoutMs: cfg.h2_idle_timeout * 1000,
    maxSessions: cfg.max_h2_sessions,
    maxSessionsPerClient: cfg.max_h2_sessions_per_client,
    keepalive: cfg.enable_keepalive ? { intervalMs: cfg.keepalive_interval * 1000, timeoutMs: cfg.keepalive_timeout * 1000 } : undefined,
    logger: options.logger,
    abuse,
  });
  http2Server.on('session', (session: Http2Session) => {
    // Lowered for a while by max_calls_per_client's holds and a suspect client's new sessions (./stream-limit.ts).
    trackStreamLimit(session, cfg.max_concurrent_streams);
    sessions.add(session);
  });
  // Before the 'stream' listener below: node's own is taken out (./http2-fallback.ts).
  const compat = (options.http2Fallback ?? 'compat') === 'compat' ? takeCompatListener(server, http2Server) : undefined;

  // max_calls_per_client across the client's sessions (lib/grpc/client-calls.ts).
  const callsPerClient = cfg.max_calls_per_client === null ? undefined : new ClientCalls(cfg.max_calls_per_client, cfg.max_concurrent_streams);
  if (callsPerClient) http2Server.on('session', (session: Http2Session) => callsPerClient.onSession(session));
  const work = options.work;
  let refusedWork = 0;
  /** Calls running, for shutdown: those whose client is still sending end after shutdown_stream_grace. */
  const calls = new Set<ServerCall>();
  // Reset and stream rates first: a calmed session's streams, and reset ones, reach no handler (CVE-2023-44487).
  http2Server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, rawHeaders: unknown) => {
    // Reset in the read that brought its HEADERS (rapid reset, CVE-2023-44487): nobody can answer it, its reset is
    // charged by ./h2-abuse.ts, and nothing else may count it (its 'close' may have been emitted already).
    if (stream.destroyed) return;
    // max_calls_per_client across all the client's sessions (max_concurrent_streams bounds one), counted here, in
    // node's HEADERS callback: the first refusal holds the client's sessions before the rest of the read becomes
    // streams (./client-calls.ts). The refusal is one static Trailers-Only answer, so a refused burst costs little.
    const refused = callsPerClient !== undefined && isGrpcRequest(headers) && !callsPerClient.admit(stream);
    sessions.admitStream(stream, () => (refused ? refuseCall(stream) : dispatchStream(stream, headers, flags, rawHeaders)));
  });
  function dispatchStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, rawHeaders: unknown): void {
    if (isGrpcRequest(headers)) {
      let charge: GrpcCharge | undefined;
      if (work) {
        // The client's CPU budget (lib/server/cost.ts): refused before the message is read or decoded.
        try {
          charge = admitCall(work, stream, headers);
        } catch (err) {
          if (!(err instanceof WorkRefusal)) throw err;
          refusedWork++;
          return refuseCallForWork(stream, err);
        }
      }
      const call = handleGrpcCall(stream, headers, router, settings, charge);
      calls.add(call);
      stream.once('close', () => calls.delete(call));
    }
    else if (compat && !shuttingDown) compat.call(http2Server, stream, headers, flags, rawHeaders);
    else reject505(stream);
  }

  const sniffingAtShutdown = sniffProtocols(server, http2Server, options.sniffTimeoutMs ?? DEFAULT_SNIFF_TIMEOUT_MS, () => shuttingDown);

  return {
    http2Server,
    sessions: sessions.open,
    refused: sessions.refused,
    calmed: sessions.abuse?.calmed ?? { h2_resets_per_second: 0, h2_client_resets_per_second: 0, h2_streams_per_second: 0, h2_client_streams_per_second: 0 },
    refusedCalls: () => callsPerClient?.refused ?? 0,
    heldSessions: () => callsPerClient?.held ?? 0,
    refusedWork: () => refusedWork,
    async shutdown(timeoutMs = 30_000): Promise<void> {
      shuttingDown = true;
      router.health?.shutdown();
      // A connection still being sniffed has no request in flight: a short grace for one on its way.
      sniffingAtShutdown();
      // A client stream the client keeps open would hold its session, and the shutdown, to timeoutMs.
      const grace = setTimeout(() => { for (const call of calls) call.endIfClientSending(); }, cfg.shutdown_stream_grace * 1000);
      grace.unref();
      await sessions.shutdown(timeoutMs);
      clearTimeout(grace);
    },
  };
}

/** An `http.Server` for `http1Handler` with gRPC attached; `server.grpc` is the attachment. */
export function createDualServer(
  http1Handler: http.RequestListener,
  router: GrpcRouter,
  config: unknown = {},
  options: GrpcServerOptions = {},
): http.Server & { grpc: GrpcAttachment } {
  const server = http.createServer(options.httpOptions ?? {}, http1Handler) as http.Server & { grpc: GrpcAttachment };
  server.grpc = attachGrpc(server, router, config, options);
  return server;
}
