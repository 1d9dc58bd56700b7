/**
 * Upgrade guards: checks an HTTP upgrade request must pass before the WebSocket handshake completes
 * (server auth, CORS origin, request id). A guard throws to reject (an HttpError, or anything else
 * for a bare 500) and may return headers to add to the 101 response (e.g. X-Request-ID).
 *
 * A rejected upgrade is answered on the raw socket with an RFC 9457 problem and the connection is
 * closed: the handshake never happened, so an HTTP response is the only thing the client can read
 * (RFC 6455 §4.2.2: "the server MUST … abort the WebSocket handshake" with an HTTP error).
 */
import { ServerResponse, STATUS_CODES, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { HttpError } from '../errors.js';
import { PROBLEM_CONTENT_TYPE, toProblem, type ProblemDetails } from '../problem.js';
import { CorsConfig } from '../records/route.js';
import { flattenHeaders, type KeelRequest, type Middleware } from '../request.js';

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

/** Answer an upgrade request with an HTTP error on the raw socket and close it. */
export function rejectUpgrade(socket: Duplex, err: unknown): void {
  let status: number;
  let headers: UpgradeHeaders;
  let body: Buffer;
  if (err instanceof UpgradeRejection) {
    status = err.status;
    headers = flattenHeaders(err.headers);
    body = err.body;
  } else {
    const p: { problem: ProblemDetails; headers: Record<string, string> } = toProblem(err);
    status = p.problem.status;
    headers = { ...p.headers, 'Content-Type': PROBLEM_CONTENT_TYPE };
    body = Buffer.from(JSON.stringify(p.problem));
  }
  for (const k of Object.keys(headers)) if (/^(content-length|connection|transfer-encoding)$/i.test(k)) delete headers[k];
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`, 'Connection: close', `Content-Length: ${body.length}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (socket.writable) socket.end(Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n'), body]));
  else socket.destroy();
}

/** 404 for an upgrade to a path without a WebSocket route. */
export function notFoundUpgrade(socket: Duplex, req: IncomingMessage): void {
  rejectUpgrade(socket, new HttpError(404, `No WebSocket route for ${new URL(req.url ?? '/', 'http://x').pathname}`));
}

