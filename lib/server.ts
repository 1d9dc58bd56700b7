/**
 * Serving an App: bind, graceful shutdown (SIGTERM/SIGINT), and node:cluster workers.
 *
 * Shutdown order: stop accepting; close idle keep-alive sockets; let in-flight requests finish
 * (answering them with `Connection: close`); run onShutdown hooks (background drain); after
 * `shutdown_timeout` seconds, destroy whatever is left.
 */
import cluster from 'node:cluster';
import http, { type RequestListener, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AppCore as App, ServerFactory, ServerHandle } from './plugin.js';
import { AppError, ERROR_CODES, type ErrorCode } from './errors.js';
import { problemFor, PROBLEM_CONTENT_TYPE } from './problem.js';

export type { ServerFactory, ServerHandle };

export interface ListenOptions {
  /** Override ServerConfig.port (0 = any free port). */
  port?: number;
  /** Override ServerConfig.host. */
  host?: string;
  /** Install SIGTERM/SIGINT handlers (default: ServerConfig.graceful_shutdown). */
  handleSignals?: boolean;
}


export async function listen(app: App, options: ListenOptions = {}): Promise<ServerHandle> {
  const cfg = app.config;
  if (cfg.workers > 1 && cluster.isPrimary) return runPrimary(app, options);
  await app.ready();
  const router = app.intoRouter();
  const listener: RequestListener = (req, res) => router(req, res);
  const server = app.serverFactory ? app.serverFactory(listener) : http.createServer(listener);
  server.on('upgrade', (req, socket, head) => router.handleUpgrade(req, socket, head));
  server.on('clientError', answerClientError);
  // Slowloris protection (node's own defaults are generous): headers must arrive within 30 s.
  server.headersTimeout = 30_000;
  server.keepAliveTimeout = 5_000;

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
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];
  const onSignal = (signal: NodeJS.Signals) => {
    app.logger.info({ signal }, 'shutting down');
    void handle.close().then(() => process.exit(0));
  };
  const handle: ServerHandle = {
    server,
    host: addr.address,
    port: addr.port,
    url: `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`,
    close() {
      closing ??= shutdown(app, server, cfg.shutdown_timeout * 1000).finally(() => {
        for (const s of signals) process.off(s, onSignal);
      });
      return closing;
    },
  };
  if (options.handleSignals ?? cfg.graceful_shutdown) for (const s of signals) process.once(s, onSignal);
  for (const fn of app.startHooks) await fn(handle, app);
  app.logger.info({ url: handle.url }, 'listening');
  return handle;
}

async function shutdown(app: App, server: Server, timeoutMs: number): Promise<void> {
  // In-flight responses tell keep-alive clients not to reuse the connection (RFC 9112 §9.6).
  server.on('request', (_req, res) => res.setHeader('Connection', 'close'));
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const idleSweep = setInterval(() => server.closeIdleConnections(), 100);
  let timer: NodeJS.Timeout | undefined;
  const forced = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const hooks = Promise.allSettled(app.shutdownHooks.map((fn) => Promise.resolve().then(fn)));
  const outcome = await Promise.race([Promise.all([closed, hooks]).then(() => 'ok' as const), forced]);
  clearInterval(idleSweep);
  clearTimeout(timer);
  if (outcome === 'timeout') {
    app.logger.warn({ timeoutMs }, 'shutdown timeout reached; closing remaining connections');
    server.closeAllConnections();
    await closed;
  }
}

/** Primary process of a `workers > 1` server: fork, restart crashed workers, forward shutdown. */
async function runPrimary(app: App, options: ListenOptions): Promise<ServerHandle> {
  const cfg = app.config;
  let stopping = false;
  const fork = () => cluster.fork({ KEEL_WORKER: '1' });
  for (let i = 0; i < cfg.workers; i++) fork();
  cluster.on('exit', (worker, code) => {
    if (!stopping) {
      app.logger.warn({ pid: worker.process.pid, code }, 'worker exited; starting another');
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
  const body = JSON.stringify(problemFor(code, detail));
  const { status } = ERROR_CODES[code];
  s.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Bad Request'}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}
