/**
 * HTTP/1.1 and cleartext HTTP/2 (h2c, "prior knowledge": RFC 9113 §3.3) on one port. Every new connection
 * is sniffed: one that opens with the HTTP/2 client preface goes to a node:http2 server, anything else to the
 * node:http server it arrived on, so `app.listen()`, WebSocket upgrades and HTTP/1.1 keep-alive are untouched.
 * HTTP/1.1 `Upgrade: h2c` (RFC 7540 §3.2, removed in RFC 9113) is not supported; gRPC clients use prior knowledge.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import http2, { constants as h2, type Http2Server, type Http2Session, type Http2ServerRequest, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { GrpcConfig } from '../records/protocol.js';
import { ServerConfig } from '../records/server.js';
import { problem, sendProblem } from '../http/problem.js';
import { handleGrpcCall, isGrpcRequest, type GrpcCallSettings, type GrpcGuard } from './call.js';
import type { ServerCall } from './server-call.js';
import { HEALTH_SERVICE } from './health.js';
import type { GrpcRouter } from './router.js';
import { H2Sessions, type H2Refusals } from './sessions.js';
import { h2AbuseLimitsOf, type H2AbuseLimits, type H2Breach } from './h2-abuse.js';
import { GrpcStatus, encodeGrpcMessage } from './status.js';
import { ClientCalls } from './client-calls.js';
import type { GrpcTracing } from '../observability/grpc-spans.js';
import { WorkRefusal, type AppWorkGate } from '../server/cost.js';
import { admitCall, refuseCallForWork, type GrpcCharge } from './work.js';

/** ServerConfig's default `h2_*` rates, for a server attached without an App. */
const DEFAULT_H2_ABUSE_LIMITS = h2AbuseLimitsOf(ServerConfig.defaults());

/** RFC 9113 §3.4: the client connection preface. */
export const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** How long a new connection may stay silent before it is dropped (before it is known to be HTTP/1 or HTTP/2). */
export const DEFAULT_SNIFF_TIMEOUT_MS = 30_000;
/**
 * At shutdown, how long a connection whose protocol is not known yet may still send its first bytes, ms: 500
 * (a request already on its way is answered, as for idle HTTP/1.1 connections). One that has sent part of
 * the HTTP/2 preface is closed at once: a new HTTP/2 connection would be refused anyway.
 */
export const SHUTDOWN_SNIFF_GRACE_MS = 500;

const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

/** What a non-gRPC HTTP/2 request gets: the HTTP/1 server's handler through node's http2 compatibility API, or a 505 problem. */
export type Http2FallbackMode = 'compat' | 'reject';

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

function reject505(stream: ServerHttp2Stream): void {
  const body = JSON.stringify(problem(505, 'This port answers HTTP/2 only for gRPC (content-type application/grpc); use HTTP/1.1.'));
  stream.on('error', () => {});
  stream.respond({ [h2.HTTP2_HEADER_STATUS]: 505, 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(body) });
  stream.end(body);
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
    abuse: options.h2Limits === undefined ? DEFAULT_H2_ABUSE_LIMITS : options.h2Limits ?? undefined,
  });
  http2Server.on('session', (session: Http2Session) => sessions.add(session));

  let compat: ((...args: unknown[]) => void) | undefined;
  if ((options.http2Fallback ?? 'compat') === 'compat') {
    // node's compatibility layer turns 'stream' into 'request' (Http2ServerRequest/Response); take its
    // 'stream' listener so that only non-gRPC streams go through it.
    http2Server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      // A request whose END_STREAM came in an empty DATA frame before it was dispatched (a stream dispatched a
      // turn later once its session reset one, ./h2-abuse.ts) has ended already: node reads an empty stream to
      // its end by itself, 'end' does not repeat, and the compatibility request ends only on it. Ended here, or
      // a handler reading its body waited until request_timeout. (An ended stream had no data: nobody read it.)
      if ((req as unknown as Http2ServerRequest).stream.readableEnded) req.push(null);
      // RFC 9113 §8.2.2: connection-specific fields are malformed in HTTP/2 and node throws on them; handlers
      // written for HTTP/1.1 (e.g. `Connection: close` during shutdown) set them, so they are dropped here.
      const setHeader = res.setHeader.bind(res);
      res.setHeader = ((name: string, value: number | string | readonly string[]) =>
        CONNECTION_SPECIFIC.has(name.toLowerCase()) ? res : setHeader(name, value)) as typeof res.setHeader;
      try {
        server.emit('request', req, res);
      } catch {
        // An HTTP/1-only API used on an HTTP/2 response (e.g. setHeader('Connection')) throws here: answer
        // 500 rather than let the exception end the process.
        if (!res.headersSent) sendProblem(res, undefined);
        else res.destroy();
      }
    });
    compat = http2Server.listeners('stream')[0] as (...args: unknown[]) => void;
    http2Server.removeAllListeners('stream');
  }
  // max_calls_per_client across the client's sessions (lib/grpc/client-calls.ts).
  const callsPerClient = cfg.max_calls_per_client === null ? undefined : new ClientCalls(cfg.max_calls_per_client, cfg.max_concurrent_streams);
  if (callsPerClient) http2Server.on('session', (session: Http2Session) => callsPerClient.onSession(session));
  const work = options.work;
  let refusedWork = 0;
  /** Calls running, for shutdown: those whose client is still sending end after shutdown_stream_grace. */
  const calls = new Set<ServerCall>();
  // Reset and stream rates first: a calmed session's streams, and reset ones, reach no handler (CVE-2023-44487).
  http2Server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, rawHeaders: unknown) => {
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

  const http1Listeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const sniffTimeout = options.sniffTimeoutMs ?? DEFAULT_SNIFF_TIMEOUT_MS;
  /** Connections whose protocol is not known yet, with what shutdown does to each. */
  const sniffing = new Map<Socket, () => void>();
  server.on('connection', function sniffProtocol(socket: Socket) {
    let head: Buffer = Buffer.alloc(0);
    let timer = setTimeout(() => socket.destroy(), sniffTimeout);
    timer.unref();
    sniffing.set(socket, () => {
      // "PRI" is no HTTP/1.1 method: three bytes of the preface mean HTTP/2.
      if (head.length >= 3) return socket.destroy();
      clearTimeout(timer);
      timer = setTimeout(() => socket.destroy(), SHUTDOWN_SNIFF_GRACE_MS);
      timer.unref();
    });
    // node:http accepts sockets half-open (allowHalfOpen): a client that ends before its first request
    // would keep the socket until the sniff timeout.
    const onEnd = () => socket.destroy();
    const cleanup = () => {
      clearTimeout(timer);
      sniffing.delete(socket);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', cleanup);
    };
    const onData = (chunk: Buffer) => {
      head = head.length ? Buffer.concat([head, chunk]) : chunk;
      const n = Math.min(head.length, HTTP2_PREFACE.length);
      const prefixMatches = head.subarray(0, n).equals(HTTP2_PREFACE.subarray(0, n));
      if (prefixMatches && n < HTTP2_PREFACE.length) return; // could still be the preface: wait for more
      cleanup();
      socket.pause();
      socket.unshift(head);
      if (prefixMatches && !shuttingDown) {
        // node:http accepted this socket with allowHalfOpen (it ends HTTP/1.1 connections itself); node:http2
        // relies on the socket ending with the peer's FIN and never does. Left half-open, a session the client
        // closed kept its file descriptor until a keepalive PING went unanswered (95 s, issue 26).
        socket.allowHalfOpen = false;
        http2Server.emit('connection', socket);
      } else if (prefixMatches) socket.destroy();
      else {
        for (const l of http1Listeners) l.call(server, socket);
        // node:http's parser reads the socket handle directly from now on; the bytes already read (unshifted
        // above) still sit in the JS buffer and reach it as a 'data' event once the socket flows again.
        socket.resume();
      }
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('close', cleanup);
  });

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
      for (const atShutdown of sniffing.values()) atShutdown();
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
