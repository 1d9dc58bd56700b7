/**
 * Connection limits of a listening keel server (ListenOptions.limits; docs/operations.md).
 *
 * node:http keeps reading a request body nobody asked for: after an early answer (404, 401, 405, 413,
 * 429 …) it "dumps" the rest of the body to keep the connection usable, with no size cap and no
 * deadline, so a client can hold a socket (and a file descriptor) forever by trickling a body. keel
 * discards at most `unread_body_max_bytes` within `unread_body_timeout_ms` after such an answer and
 * then closes the socket. A body that is not going to fit (chunked, or a Content-Length over the cap)
 * is answered with `Connection: close` (RFC 9112 §9.6), so the client knows the connection ends;
 * Fastify does the same, closing instead of draining (its `forceCloseConnections`/`return503OnClosing`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { defineRecord, fail, t } from '../records/define.js';

/** Bytes of an unread request body discarded after an early answer before the socket is closed: 64 KiB. */
export const DEFAULT_UNREAD_BODY_MAX_BYTES = 64 * 1024;
/** Milliseconds the rest of an unread body may take after an early answer before the socket is closed: 5000. */
export const DEFAULT_UNREAD_BODY_TIMEOUT_MS = 5_000;
/** Milliseconds for the whole request (headers and body) to arrive (node's `server.requestTimeout`): 60000. */
export const DEFAULT_REQUEST_RECEIVE_TIMEOUT_MS = 60_000;
/** Milliseconds for the request headers to arrive (slowloris; node's `server.headersTimeout`): 30000. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 30_000;
/** Milliseconds an idle keep-alive connection stays open (node's `server.keepAliveTimeout`): 5000. */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** At shutdown, how long an idle keep-alive connection is left open for a request already on its way, ms: 500. */
export const DEFAULT_SHUTDOWN_IDLE_GRACE_MS = 500;
/** Longest period between two checks of a slow reader's progress (send_timeout), ms: 1000. */
export const SLOW_READER_CHECK_MS = 1_000;
/** How often node checks the header and request deadlines (`connectionsCheckingInterval`), ms: 1000. */
export const DEFAULT_CONNECTIONS_CHECK_INTERVAL_MS = 1_000;

export interface ConnectionLimits {
  unread_body_max_bytes: number;
  unread_body_timeout_ms: number;
  request_receive_timeout_ms: number;
  headers_timeout_ms: number;
  keep_alive_timeout_ms: number;
  connections_check_interval_ms: number;
  shutdown_idle_grace_ms: number;
}

/** ConnectionLimits input, snake_case or camelCase. */
export type ConnectionLimitsInput = Partial<ConnectionLimits> & {
  unreadBodyMaxBytes?: number;
  unreadBodyTimeoutMs?: number;
  requestReceiveTimeoutMs?: number;
  headersTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
  connectionsCheckIntervalMs?: number;
  shutdownIdleGraceMs?: number;
};

/**
 * The limits a listening server puts on every connection. 0 turns `request_receive_timeout_ms` /
 * `headers_timeout_ms` off (node's meaning); the headers deadline may not exceed the request one.
 */
export const ConnectionLimits = defineRecord<ConnectionLimits>(
  'ConnectionLimits',
  {
    unread_body_max_bytes: { type: t.integer(0), default: DEFAULT_UNREAD_BODY_MAX_BYTES, doc: 'Unread body bytes discarded after an early answer before the socket closes' },
    unread_body_timeout_ms: { type: t.integer(1), default: DEFAULT_UNREAD_BODY_TIMEOUT_MS, doc: 'Time the rest of an unread body may take after an early answer, ms' },
    request_receive_timeout_ms: { type: t.integer(0), default: DEFAULT_REQUEST_RECEIVE_TIMEOUT_MS, doc: 'Time for the whole request (headers and body) to arrive, ms; 0 = none' },
    headers_timeout_ms: { type: t.integer(0), default: DEFAULT_HEADERS_TIMEOUT_MS, doc: 'Time for the request headers to arrive, ms; 0 = none' },
    keep_alive_timeout_ms: { type: t.integer(0), default: DEFAULT_KEEP_ALIVE_TIMEOUT_MS, doc: 'Idle keep-alive connection lifetime, ms' },
    connections_check_interval_ms: { type: t.integer(100), default: DEFAULT_CONNECTIONS_CHECK_INTERVAL_MS, doc: 'How often the header and request deadlines are checked, ms' },
    shutdown_idle_grace_ms: { type: t.integer(0), default: DEFAULT_SHUTDOWN_IDLE_GRACE_MS, doc: 'At shutdown, how long idle keep-alive connections stay open for a request already sent, ms' },
  },
  {
    check(v, path) {
      if (v.request_receive_timeout_ms > 0 && (v.headers_timeout_ms === 0 || v.headers_timeout_ms > v.request_receive_timeout_ms)) {
        fail('ConnectionLimits', path, 'headers_timeout_ms', v.headers_timeout_ms, `at most request_receive_timeout_ms (${v.request_receive_timeout_ms}) and not 0`,
          'node refuses a headers deadline after the request deadline; lower headers_timeout_ms or raise request_receive_timeout_ms.');
      }
    },
  },
);

/**
 * Bound what is left of `req`'s body once `res` has answered without reading it. Call from the
 * request listener, before the handler. Costs nothing for requests without a body (RFC 9112 §6.3).
 */
export function boundUnreadBody(req: IncomingMessage, res: ServerResponse, limits: Readonly<ConnectionLimits>): void {
  const { headers } = req;
  const length = headers['content-length'];
  if (headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return;
  // HTTP/2 requests (node's compatibility API) share a session: a stream is reset, never its socket.
  if (req.httpVersionMajor !== 1) return;
  const socket = req.socket;
  // A body we would not discard in full (chunked: size unknown) ends the connection after the answer,
  // and the answer says so. A body the handler has read by then keeps the connection alive.
  if (length === undefined || Number(length) > limits.unread_body_max_bytes) {
    const writeHead = res.writeHead;
    res.writeHead = function writeHeadClosingUnread(this: ServerResponse, ...args: unknown[]) {
      if (!req.complete) this.shouldKeepAlive = false;
      return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as ServerResponse['writeHead'];
  }
  res.once('finish', () => {
    if (!req.complete && !req.destroyed) discardUnread(req, socket, limits);
  });
}

/**
 * node's own 'finish' handler has already resumed `req` to dump the body (and removed 'data'
 * listeners); count what still arrives and close the socket at the cap or the deadline.
 */
function discardUnread(req: IncomingMessage, socket: Socket, limits: Readonly<ConnectionLimits>): void {
  let seen = 0;
  const close = () => {
    cleanup();
    socket.destroy();
  };
  const timer = setTimeout(close, limits.unread_body_timeout_ms);
  const onData = (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > limits.unread_body_max_bytes) close();
  };
  const cleanup = () => {
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', cleanup);
    socket.off('close', cleanup);
  };
  req.on('data', onData);
  req.once('end', cleanup);
  socket.once('close', cleanup);
  req.resume();
}

/**
 * Cut a client that stops reading its answer (issue 26: slow readers pinned every answer they did not
 * read). Armed only while part of the answer waits in the socket's buffer: a handler that computes,
 * or a stream with nothing to send, is never cut. If no byte of the pending answer reached the client
 * in `timeoutMs` (checked every quarter of it, at most every SLOW_READER_CHECK_MS), the socket is destroyed (RFC 9112 §9.6 lets either side close; the answer cannot be
 * completed anyway). HTTP/1.1 only: an HTTP/2 stream has its own flow control within a shared session.
 */
export function boundSlowReader(req: IncomingMessage, res: ServerResponse, timeoutMs: number): void {
  if (timeoutMs <= 0 || req.httpVersionMajor !== 1) return;
  // Checked every quarter of the timeout (at most every second), so the cut comes within one period after the
  // timeout, not up to twice it: a check that saw progress used to wait a whole timeout again (issue 44 #10:
  // paused readers were cut at 55–60 s, the documented 30 s).
  const period = Math.max(10, Math.min(SLOW_READER_CHECK_MS, Math.floor(timeoutMs / 4)));
  const watched = res as Watched;
  // One state object and module-level wrappers: every request of every route passes here, and seven
  // closures (plus once()'s wrapper) per request were a measurable share of a hello answer (issue 48).
  // The 'close' listener that stops the watch is added when a check is first armed (SlowReader.arm):
  // most answers leave the socket's buffer at once and never arm one.
  watched[kReader] = new SlowReader(res, req.socket, timeoutMs, period, res.write, res.end);
  res.write = writeWatchingReader as ServerResponse['write'];
  res.end = endWatchingReader as ServerResponse['end'];
}

const kReader = Symbol('keel.slowReader');
type Watched = ServerResponse & { [kReader]?: SlowReader };
type Method = (...args: unknown[]) => unknown;

/** One response's watch (boundSlowReader). */
class SlowReader {
  timer: NodeJS.Timeout | undefined = undefined;
  /** Bytes of the answer that had left the socket's buffer, and libuv's queue, at the last progress. */
  completed = 0;
  queued = 0;
  /** When the pending answer last moved (performance.now()). */
  movedAt = 0;
  /** stopWatchingReader listens for the response's 'close' (from the first armed check on). */
  listening = false;

  constructor(
    readonly res: ServerResponse,
    readonly socket: Socket,
    readonly timeoutMs: number,
    readonly period: number,
    // The response's write / end underneath (node's, or an earlier wrapper's).
    readonly write: ServerResponse['write'],
    readonly end: ServerResponse['end'],
  ) {}

  // Progress is a write completing, or libuv's queue of the write in progress shrinking (one res.end
  // of 4 MB is one write: it only completes once the client has taken it all).
  queuedNow(): number {
    return (this.socket as Socket & { _handle?: { writeQueueSize?: number } | null })._handle?.writeQueueSize ?? 0;
  }

  snapshot(): void {
    this.completed = this.socket.bytesWritten - this.socket.writableLength;
    this.queued = this.queuedNow();
  }

  arm(): void {
    if (this.timer || this.socket.writableLength === 0) return;
    if (!this.listening) {
      this.listening = true;
      this.res.on('close', stopWatchingReader);
    }
    this.snapshot();
    this.movedAt = performance.now();
    this.timer = setTimeout(checkReader, this.period, this);
    this.timer.unref();
  }
}

function checkReader(w: SlowReader): void {
  w.timer = undefined;
  const socket = w.socket;
  if (socket.destroyed || socket.writableLength === 0) return;
  const nowCompleted = socket.bytesWritten - socket.writableLength;
  const nowQueued = w.queuedNow();
  const now = performance.now();
  if (nowCompleted > w.completed || nowQueued < w.queued) {
    w.movedAt = now;
    w.snapshot();
  } else if (now - w.movedAt >= w.timeoutMs) {
    socket.destroy();
    return;
  }
  w.timer = setTimeout(checkReader, w.period, w);
  w.timer.unref();
}

// `arguments`, not a rest array: V8 passes them on to apply() without allocating one per call.
function writeWatchingReader(this: Watched): boolean {
  const w = this[kReader]!;
  // eslint-disable-next-line prefer-rest-params
  const ok = (w.write as Method).apply(this, arguments as unknown as unknown[]) as boolean;
  w.arm();
  return ok;
}

function endWatchingReader(this: Watched): ServerResponse {
  const w = this[kReader]!;
  // eslint-disable-next-line prefer-rest-params
  const out = (w.end as Method).apply(this, arguments as unknown as unknown[]) as ServerResponse;
  w.arm();
  return out;
}

function stopWatchingReader(this: Watched): void {
  const w = this[kReader];
  if (w !== undefined) clearTimeout(w.timer);
}
