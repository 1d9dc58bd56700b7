/**
 * Upgrade guards: checks an HTTP upgrade request must pass before the WebSocket handshake completes
 * (server auth, CORS origin, request id). A guard throws to reject (an HttpError, or anything else
 * for a bare 500) and may return headers to add to the 101 response (e.g. X-Request-ID).
 *
 * A rejected upgrade is answered on the raw socket with an RFC 9457 problem and the connection is
 * closed: the handshake never happened, so an HTTP response is the only thing the client can read
 * (RFC 6455 §4.2.2: "the server MUST … abort the WebSocket handshake" with an HTTP error).
 */
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { HttpError } from '../http/errors.js';
import { sendSocketProblem, writeSocketResponse } from '../http/socket-problem.js';
import { CorsConfig } from '../records/route.js';
import { flattenHeaders, type KeelRequest, type Middleware } from '../http/request.js';

export type UpgradeHeaders = Record<string, string>;
/** Throw to reject the upgrade; return headers to add to the 101 Switching Protocols response. */
export type UpgradeGuard = (req: KeelRequest) => void | UpgradeHeaders | Promise<void | UpgradeHeaders>;

/** A middleware's own rejection (it wrote a response), carried to the raw socket as-is. */
export class UpgradeRejection extends Error {
  constructor(readonly status: number, readonly headers: OutgoingHttpHeaders, readonly body: Buffer) {
    super(`Upgrade rejected with ${status}`);
  }
}


/**
 * Run connect-style middleware (keel's server-level list: request id, rate limit, JWT / API key
 * auth …) as a guard. A middleware that answers the request rejects the upgrade with that answer;
 * `next(err)` rejects with the error; headers set by the chain (X-Request-ID) go on the 101 response.
 */
export function middlewareGuard(middleware: readonly Middleware[]): UpgradeGuard {
  const chain = [...middleware];
  return function runMiddlewareGuard(req: KeelRequest): Promise<UpgradeHeaders> {
    const res = new ServerResponse(req);
    return new Promise<UpgradeHeaders>((resolve, reject) => {
      const chunks: Buffer[] = [];
      res.write = ((chunk: unknown) => {
        if (chunk) chunks.push(Buffer.from(chunk as string));
        return true;
      }) as ServerResponse['write'];
      res.end = ((chunk?: unknown) => {
        if (chunk && typeof chunk !== 'function') chunks.push(Buffer.from(chunk as string));
        settle(() => reject(new UpgradeRejection(res.statusCode, res.getHeaders(), Buffer.concat(chunks))));
        return res;
      }) as ServerResponse['end'];
      let i = 0;
      // 'close' lets middleware release what it holds per request (timeout timers, listeners).
      const settle = (fn: () => void) => { fn(); res.emit('close'); };
      const next = (err?: unknown): void => {
        if (err) return settle(() => reject(err));
        const mw = chain[i++];
        if (!mw) return settle(() => resolve(flattenHeaders(res.getHeaders())));
        try {
          mw(req, res, next);
        } catch (e) {
          reject(e);
        }
      };
      next();
    });
  };
}

/**
 * Reject browser upgrades from origins the CORS record does not allow. Browsers do not apply CORS to
 * WebSockets, so the server must check Origin itself (RFC 6455 §10.2); clients without an Origin
 * header (not browsers) pass.
 */
export function originGuard(cors: unknown = {}): UpgradeGuard {
  const config = CorsConfig.parse(cors, 'CorsConfig');
  return function checkOrigin(req: KeelRequest): void {
    const origin = req.headers.origin;
    if (origin !== undefined && !config.isOriginAllowed(origin)) {
      throw new HttpError(403, `Origin ${origin} is not allowed to open a WebSocket here`);
    }
  };
}

/** Run guards in order; the merged headers of all of them. */
export async function runGuards(guards: readonly UpgradeGuard[], req: KeelRequest): Promise<UpgradeHeaders> {
  const headers: UpgradeHeaders = {};
  for (const guard of guards) Object.assign(headers, (await guard(req)) ?? {});
  return headers;
}

/** Answer an upgrade request with an HTTP error (problem+json, or a middleware's own answer) on the raw socket and close it. */
export function rejectUpgrade(socket: Duplex, err: unknown): void {
  if (err instanceof UpgradeRejection) writeSocketResponse(socket, err.status, flattenHeaders(err.headers), err.body);
  else sendSocketProblem(socket, err);
}

/**
 * ws's own handshake checks (method, Upgrade, Sec-WebSocket-Key / -Version / -Protocol / -Extensions)
 * answer `text/html` unless the server listens to `wsClientError`; this is keel's problem+json answer
 * with the status ws would have sent (405 for a method other than GET, else 400).
 */
export function handshakeProblem(err: Error, headers: UpgradeHeaders = {}): HttpError {
  if (err.message === 'Invalid HTTP method') {
    return new HttpError(405, 'A WebSocket handshake is a GET request (RFC 6455 §4.1)', { headers: { ...headers, Allow: 'GET' } });
  }
  // RFC 6455 §4.4: name the versions this server speaks.
  const version: UpgradeHeaders = /Sec-WebSocket-Version/.test(err.message) ? { 'Sec-WebSocket-Version': '13, 8' } : {};
  return new HttpError(400, `WebSocket handshake refused: ${err.message}`, { headers: { ...headers, ...version } });
}

/** 404 for an upgrade to a path without a WebSocket route. */
export function notFoundUpgrade(socket: Duplex, req: IncomingMessage): void {
  rejectUpgrade(socket, new HttpError(404, `No WebSocket route for ${new URL(req.url ?? '/', 'http://x').pathname}`));
}

