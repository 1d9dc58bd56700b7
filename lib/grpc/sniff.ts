/**
 * HTTP/1.1 and cleartext HTTP/2 (h2c, "prior knowledge": RFC 9113 §3.3) on one port: every new connection is
 * sniffed; one that opens with the HTTP/2 client preface goes to the node:http2 server, anything else to the
 * node:http server's own 'connection' listeners, so `app.listen()`, WebSocket upgrades and HTTP/1.1 keep-alive
 * are untouched.
 */
import type http from 'node:http';
import type { Http2Server } from 'node:http2';
import type { Socket } from 'node:net';

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

/**
 * Take over `server`'s 'connection' listeners: HTTP/2 connections go to `http2Server` (destroyed once
 * `isShuttingDown()`), the rest to the listeners taken. Returns what shutdown calls: connections still being
 * sniffed get SHUTDOWN_SNIFF_GRACE_MS, or are closed at once if they have sent part of the preface.
 */
export function sniffProtocols(server: http.Server, http2Server: Http2Server, timeoutMs: number, isShuttingDown: () => boolean): () => void {
  const http1Listeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  /** Connections whose protocol is not known yet, with what shutdown does to each. */
  const sniffing = new Map<Socket, () => void>();
  server.on('connection', function sniffProtocol(socket: Socket) {
    let head: Buffer = Buffer.alloc(0);
    let timer = setTimeout(() => socket.destroy(), timeoutMs);
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
      if (prefixMatches && !isShuttingDown()) {
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
  return () => {
    for (const atShutdown of sniffing.values()) atShutdown();
  };
}
