/**
 * Serving an App: bind, graceful shutdown (SIGTERM/SIGINT), and node:cluster workers.
 *
 * Shutdown order (docs/operations.md): stop accepting; every response from then on (in-flight ones
 * included) carries `Connection: close`; idle keep-alive sockets close after `shutdown_idle_grace_ms`
 * (a request already on its way is answered, with close); preShutdown hooks close
 * long-lived connections (gRPC GOAWAY, WebSocket 1001) while in-flight requests finish, for up to
 * `shutdown_timeout` seconds, after which what is left is destroyed; only then do onShutdown hooks
 * run (the background executor drains), so a request still in flight can enqueue its job.
 */
import cluster from 'node:cluster';
import http, { type RequestListener, type Server } from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { ServerConfig } from '../records/server.js';
import { boundSlowReader, boundUnreadBody, ConnectionLimits, type ConnectionLimitsInput } from './connections.js';
import { AppError, ERROR_CODES, type ErrorCode } from '../http/errors.js';
import { problemFor, PROBLEM_CONTENT_TYPE } from '../http/problem.js';
import { writeSocketResponse } from '../http/socket-problem.js';
import { serveClusterMetrics } from '../observability/cluster.js';
import { ConnectionCap, resolveMaxConnections } from './connection-cap.js';
import { RequestShedder } from './shedding.js';
import { FairReads } from './fair-reads.js';
import { WORK_GATE_EXTENSION, type AppWorkGate } from './cost.js';
import { DEFAULT_METRICS_PATH, DEFAULT_READINESS_PATH } from '../records/observability.js';
import { clientBudgetOf, countConnections, isOverClientBudget, OVER_BUDGET_GRACE_MS, trustProxyWarning } from './client-budget.js';

/**
 * Creates the listening server for a request listener (gRPC swaps in a dual HTTP/1.1 + h2c server);
 * `options` carries node:http server options the factory passes to `http.createServer`.
 */
export type ServerFactory = (listener: RequestListener, options: http.ServerOptions) => Server;

export interface ServerHandle {
  readonly server: Server;
  readonly host: string;
  readonly port: number;
  /** `http://host:port` */
  readonly url: string;
  /** Graceful shutdown; resolves when every connection is closed. Idempotent. */
  close(): Promise<void>;
}

/**
 * The App as `listen()` serves it. Declared here, so the server layer imports nothing of the App's
 * (docs/architecture.md, "Layers"); the App (lib/app/app.ts) has all of it.
 */
export interface ServedApp {
  readonly config: Readonly<ServerConfig>;
  readonly logger: Logger;
  /** Per-App state (the client budget across connections is kept here). */
  readonly extensions: Map<string, unknown>;
  ready(): Promise<unknown>;
  intoRouter(): RequestListener & { handleUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void };
  readonly serverFactory: ServerFactory | undefined;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the App passes itself
  readonly startHooks: readonly ((handle: ServerHandle, app: any) => void | Promise<void>)[];
  readonly shutdownHooks: readonly (() => void | Promise<void>)[];
  readonly preShutdownHooks: readonly (() => void | Promise<void>)[];
  /** The mounts, for the pages the start-up line lists (`MountOptions.page`). */
  mounts(): readonly { readonly path: string; readonly options: { readonly page?: string } }[];
}
type App = ServedApp;

export interface ListenOptions {
  /** Override ServerConfig.port (0 = any free port). */
  port?: number;
  /** Override ServerConfig.host. */
  host?: string;
  /** Install SIGTERM/SIGINT handlers (default: ServerConfig.graceful_shutdown). */
  handleSignals?: boolean;
  /** Connection limits: unread-body drain cap and deadline, header / request / keep-alive timeouts (lib/server/connections.ts). */
  limits?: ConnectionLimitsInput;
}


export async function listen(app: App, options: ListenOptions = {}): Promise<ServerHandle> {
  const cfg = app.config;
  if (cfg.workers > 1 && cluster.isPrimary) return runPrimary(app, options);
  const limits = ConnectionLimits.parse(options.limits ?? {}, 'ListenOptions.limits');
  await app.ready();
  const router = app.intoRouter();
  const sendTimeoutMs = cfg.send_timeout * 1000;
  // Cheap work shed too while the event loop is late (ServerConfig.shed_event_loop_*, ./shedding.ts).
  const shedder = RequestShedder.create({
    maxEventLoopDelayMs: cfg.shed_event_loop_delay_ms,
    maxEventLoopUtilization: cfg.shed_event_loop_utilization,
    exemptPaths: ['/health', cfg.readiness?.path ?? DEFAULT_READINESS_PATH, cfg.metrics?.path ?? DEFAULT_METRICS_PATH],
    // The App's work gate, once something made it (lib/server/cost.ts).
    expensiveWorkBusy: () => (app.extensions.get(WORK_GATE_EXTENSION) as AppWorkGate | undefined)?.gate.busy ?? false,
  });
  const serve = (req: http.IncomingMessage, res: http.ServerResponse) => {
    boundSlowReader(req, res, sendTimeoutMs);
    router(req, res);
  };
  // While the loop is late, heavy clients' requests are spread over turns, light ones read first (./fair-reads.ts).
  // A request held longer than shedding's threshold is shed when its turn comes: the wait is the delay it saw.
  const overdue = shedder && cfg.shed_event_loop_delay_ms > 0
    ? { afterMs: cfg.shed_event_loop_delay_ms, shed: (req: http.IncomingMessage, res: http.ServerResponse, waitedMs: number) => shedder.shed503(req, res, waitedMs, shedder.monitor.sample.utilization) }
    : undefined;
  const fair = FairReads.create({ maxEventLoopDelayMs: cfg.fair_read_event_loop_delay_ms, turnMs: cfg.fair_read_turn_ms, serve, overdue, connections: () => sockets.size });
  const listener: RequestListener = (req, res) => {
    if (isOverClientBudget(req.socket)) return refuseOverBudget(res);
    boundUnreadBody(req, res, limits);
    if (shedder?.shedIfOverloaded(req, res)) return;
    if (fair?.active && fair.admit(req, res)) return;
    serve(req, res);
  };
  const serverOptions: http.ServerOptions = { connectionsCheckingInterval: limits.connections_check_interval_ms };
  const server = app.serverFactory ? app.serverFactory(listener, serverOptions) : http.createServer(serverOptions, listener);
  server.on('upgrade', (req, socket, head) => {
    if (isOverClientBudget(socket)) return writeSocketResponse(socket, 503, OVER_BUDGET_HEADERS, overBudgetBody());
    router.handleUpgrade(req, socket, head);
  });
  server.on('clientError', answerClientError);
  // Slowloris protection (node's own defaults are generous); the request deadline also bounds a body
  // that trickles in before any answer.
  server.headersTimeout = limits.headers_timeout_ms;
  server.requestTimeout = limits.request_receive_timeout_ms;
  server.keepAliveTimeout = limits.keep_alive_timeout_ms;
  // Also when a serverFactory ignored serverOptions: node reads it when listening starts.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = limits.connections_check_interval_ms;
  // Every socket (HTTP/1.1, upgraded, HTTP/2), so shutdown can mark in-flight answers and destroy leftovers.
  const sockets = new Set<Socket>();
  // Connections per client (ServerConfig.max_connections_per_client): HTTP/1.1, WebSocket and h2c alike.
  countConnections(server, clientBudgetOf(app));
  // Connections per server, fair between addresses (ServerConfig.max_connections, ./connection-cap.ts).
  const maxConnections = resolveMaxConnections(cfg.max_connections);
  if (maxConnections !== null) {
    const cap = new ConnectionCap(maxConnections);
    server.on('connection', (socket: Socket) => cap.admit(socket));
  }
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  const host = options.host ?? cfg.host;
  const port = options.port ?? cfg.port;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(new AppError('Server', `Cannot listen on ${host}:${port}: ${err.message}`, { cause: err }));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  let removeSignals = (): void => {};
  const handle: ServerHandle = {
    server,
    host: addr.address,
    port: addr.port,
    url: `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`,
    close() {
      closing ??= shutdown(app, server, sockets, cfg.shutdown_timeout * 1000, limits.shutdown_idle_grace_ms).finally(() => (removeSignals(), shedder?.close(), fair?.close()));
      return closing;
    },
  };
  if (options.handleSignals ?? cfg.graceful_shutdown) removeSignals = onStopSignals(app, 'shutting down', () => handle.close());
  for (const fn of app.startHooks) await fn(handle, app);
  const pages = documentationPages(app, handle.url);
  app.logger.info(pages ? { url: handle.url, pages } : { url: handle.url }, 'listening');
  const trustWarning = trustProxyWarning(cfg.trust_proxy);
  if (trustWarning) app.logger.warn({ trust_proxy: cfg.trust_proxy }, trustWarning);
  return handle;
}

async function shutdown(app: App, server: Server, sockets: ReadonlySet<Socket>, timeoutMs: number, idleGraceMs: number): Promise<void> {
  // RFC 9112 §9.6: answers from now on tell keep-alive clients not to reuse the connection; answers
  // already being prepared on open connections too (node only decides at writeHead). Prepended: the
  // router may answer synchronously inside its own 'request' listener.
  server.prependListener('request', (_req, res: http.ServerResponse) => {
    res.shouldKeepAlive = false;
  });
  for (const socket of sockets) {
    const res = (socket as Socket & { _httpMessage?: http.ServerResponse | null })._httpMessage;
    if (res && !res.headersSent) res.shouldKeepAlive = false;
  }
  // Stop accepting. Not http.Server#close(): since node 19 it also destroys every idle keep-alive
  // connection at once, and a client's next request may already be on the wire to it (a fast
  // handler leaves every connection idle between requests): that request would be lost (ECONNRESET).
  const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
  // An idle connection gets `idleGraceMs` for such a request, which is answered with Connection: close
  // (node then closes it); connections still idle after that are closed, and so on every period for
  // connections whose answer had started before shutdown.
  const idleSweep = setInterval(() => {
    server.closeIdleConnections();
    // node counts a connection as idle only after its first request: one that never sent a byte held
    // a server's whole shutdown_timeout (issue 26). After the same grace, it is closed too.
    for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy();
  }, Math.max(idleGraceMs, 10));
  let timer: NodeJS.Timeout | undefined;
  const forced = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const pre = settleAll(app, app.preShutdownHooks);
  const outcome = await Promise.race([Promise.all([closed, pre]).then(() => 'ok' as const), forced]);
  clearInterval(idleSweep);
  clearTimeout(timer);
  if (outcome === 'timeout') {
    app.logger.warn({ timeoutMs, connections: sockets.size }, 'shutdown timeout reached; closing remaining connections');
    server.closeAllConnections();
    for (const socket of sockets) socket.destroy();
    await closed;
  }
  stopDeadlineChecks(server);
  // Only now: requests that were in flight have finished, and may have enqueued background jobs.
  await settleAll(app, app.shutdownHooks);
}

/**
 * What http.Server#close() would have done besides closing idle connections: stop node's timer that
 * checks the header and request deadlines (it kept them enforced while connections drained).
 */
function stopDeadlineChecks(server: Server): void {
  const key = Object.getOwnPropertySymbols(server).find((s) => s.description === 'http.server.connectionsCheckingInterval');
  if (key) clearInterval((server as unknown as Record<symbol, NodeJS.Timeout>)[key]);
}

/** Run hooks side by side; a failing hook is logged and does not stop the others or the shutdown. */
/**
 * SIGTERM and SIGINT log `message` and run `close` (once), then exit 0. Returns the function that
 * removes the listeners (called when the server or worker closes some other way).
 */
export function onStopSignals(app: Pick<App, 'logger'>, message: string, close: () => Promise<unknown>): () => void {
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];
  const onSignal = (signal: NodeJS.Signals) => {
    app.logger.info({ signal }, message);
    void close().then(() => process.exit(0));
  };
  for (const s of signals) process.once(s, onSignal);
  return () => {
    for (const s of signals) process.off(s, onSignal);
  };
}

/** Run every hook, each after the previous tick; a failing one is logged, never stops the others. */
export async function settleAll(app: Pick<App, 'logger'>, hooks: readonly (() => void | Promise<void>)[]): Promise<void> {
  const results = await Promise.allSettled(hooks.map((fn) => Promise.resolve().then(fn)));
  for (const r of results) if (r.status === 'rejected') app.logger.error({ err: r.reason }, 'shutdown hook failed');
}

/** Primary process of a `workers > 1` server: fork, restart crashed workers, forward shutdown. */
async function runPrimary(app: App, options: ListenOptions): Promise<ServerHandle> {
  const cfg = app.config;
  let stopping = false;
  const fork = () => cluster.fork({ KEEL_WORKER: '1' });
  // A scrape reaching one worker answers for all of them (docs/operations.md, "Metrics").
  const metrics = cfg.metrics?.enabled ? serveClusterMetrics() : undefined;
  for (let i = 0; i < cfg.workers; i++) fork();
  cluster.on('exit', (worker, code, signal) => {
    metrics?.retire(worker);
    if (!stopping) {
      // worker_pid: the logger's own `pid` is the primary's (one key per name in a line).
      app.logger.warn({ worker_pid: worker.process.pid, code, signal }, 'worker exited; starting another');
      metrics?.restarted();
      fork();
    }
  });
  await new Promise<void>((resolve) => {
    let n = 0;
    cluster.on('listening', () => {
      if (++n === cfg.workers) resolve();
    });
  });
  const port = options.port ?? cfg.port;
  const host = options.host ?? cfg.host;
  let closing: Promise<void> | undefined;
  const handle: ServerHandle = {
    server: undefined as unknown as Server,
    host,
    port,
    url: `http://${host}:${port}`,
    close() {
      stopping = true;
      closing ??= Promise.all(
        Object.values(cluster.workers ?? {}).map(
          (w) => new Promise<void>((resolve) => {
            if (!w || w.isDead()) return resolve();
            w.once('exit', () => resolve());
            w.process.kill('SIGTERM');
          }),
        ),
      ).then(() => undefined);
      return closing;
    },
  };
  if (options.handleSignals ?? cfg.graceful_shutdown) {
    for (const s of ['SIGTERM', 'SIGINT'] as const) process.once(s, () => void handle.close().then(() => process.exit(0)));
  }
  return handle;
}

const OVER_BUDGET_HEADERS = { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Retry-After': String(OVER_BUDGET_GRACE_MS / 1000) };
const overBudgetBody = () => Buffer.from(JSON.stringify(problemFor('KEEL_CLIENT_CONNECTION_LIMIT',
  'This client has as many connections open as the server allows (max_connections_per_client); reuse one, or try again later')));

/** A request on a connection past its client's limit: 503 problem and close (RFC 9110 §15.6.4, RFC 9112 §9.6). */
function refuseOverBudget(res: http.ServerResponse): void {
  const body = overBudgetBody();
  res.shouldKeepAlive = false;
  res.writeHead(503, { ...OVER_BUDGET_HEADERS, 'Content-Length': body.length });
  res.end(body);
}

/** node's HTTP parser error codes → the problem a client gets instead of node's bare status line. */
const PARSER_ERRORS: Readonly<Record<string, [ErrorCode, string]>> = {
  HPE_HEADER_OVERFLOW: ['KEEL_HEADERS_TOO_LARGE', 'The request header fields are too large'],
  // The connection ended before Content-Length bytes arrived (RFC 9112 §6.3, item 5).
  HPE_INVALID_EOF_STATE: ['KEEL_CONTENT_LENGTH_MISMATCH', 'Content-Length header does not match actual body size'],
  ERR_HTTP_REQUEST_TIMEOUT: ['KEEL_REQUEST_TIMEOUT', 'The request was not received in time'],
};

/**
 * Malformed requests never reach a route: node reports them here. Answer with problem+json (the one
 * error path) and close, since the connection's framing can no longer be trusted (RFC 9112 §11.2).
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const s = socket as Socket;
  if (err.code === 'ECONNRESET' || !s.writable || (s as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent) {
    s.destroy();
    return;
  }
  const [code, detail] = PARSER_ERRORS[err.code ?? ''] ?? (['KEEL_BAD_REQUEST', 'The request could not be parsed as HTTP/1.1'] as [ErrorCode, string]);
  writeSocketResponse(s, ERROR_CODES[code].status, { 'Content-Type': PROBLEM_CONTENT_TYPE }, Buffer.from(JSON.stringify(problemFor(code, detail))));
}

/**
 * The pages a person opens (mounts carrying `MountOptions.page`: API documentation, GraphiQL…) by name → URL, for the
 * start-up line; undefined when the App has none. A mount path's `{param}` segments are left as written.
 */
export function documentationPages(app: Pick<App, 'mounts'>, base: string): Record<string, string> | undefined {
  let pages: Record<string, string> | undefined;
  for (const m of app.mounts()) if (m.options.page) (pages ??= {})[m.options.page] ??= base + m.path;
  return pages;
}
