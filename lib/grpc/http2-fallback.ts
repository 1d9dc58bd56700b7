/**
 * Non-gRPC requests on an HTTP/2 connection (lib/grpc/server.ts): handed to the HTTP/1 server's `request`
 * listeners through node's http2 compatibility API, or answered 505.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { constants as h2, type Http2Server, type Http2ServerRequest, type ServerHttp2Stream } from 'node:http2';
import { problem, sendProblem } from '../http/problem.js';

const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade']);

/** What a non-gRPC HTTP/2 request gets: the HTTP/1 server's handler through node's http2 compatibility API, or a 505 problem. */
export type Http2FallbackMode = 'compat' | 'reject';

/**
 * Route `http2Server`'s compatibility 'request' events to `server`'s `request` listeners, and return node's
 * compatibility 'stream' listener, removed from `http2Server`: the caller hands it only non-gRPC streams.
 * Call before adding a 'stream' listener of one's own.
 */
export function takeCompatListener(server: Server, http2Server: Http2Server): (...args: unknown[]) => void {
  // node's compatibility layer turns 'stream' into 'request' (Http2ServerRequest/Response); take its
  // 'stream' listener so that only non-gRPC streams go through it.
  http2Server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // A request whose END_STREAM came in an empty DATA frame before it was dispatched (streams are dispatched at
    // the end of the turn they arrived in, ./h2-abuse.ts) has ended already: node reads an empty stream to
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
  const compat = http2Server.listeners('stream')[0] as (...args: unknown[]) => void;
  http2Server.removeAllListeners('stream');
  return compat;
}

/** The answer to a non-gRPC HTTP/2 request when the fallback is 'reject' (or during shutdown). */
export function reject505(stream: ServerHttp2Stream): void {
  const body = JSON.stringify(problem(505, 'This port answers HTTP/2 only for gRPC (content-type application/grpc); use HTTP/1.1.'));
  stream.on('error', () => {});
  stream.respond({ [h2.HTTP2_HEADER_STATUS]: 505, 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(body) });
  stream.end(body);
}
