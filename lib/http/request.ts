/**
 * What keel and its middleware add to node:http's IncomingMessage. Every middleware factory reads
 * and writes only these properties (the same ones Express users know: `req.body`, `req.auth`), so
 * a factory works under `app.use` in Express and inside keel's compiled pipeline alike.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface KeelRequestExtensions {
  /** X-Request-ID of this request (requestId middleware). */
  requestId?: string;
  /** Verified JWT claims (jwtAuth middleware; express-jwt's convention). */
  auth?: Record<string, unknown>;
  /** Set by apiKeyAuth: which header/query carried the accepted key (never the key itself). */
  apiKey?: { source: 'header' | 'query'; index: number };
  /** Raw request body, read once under the body-size cap (bodyLimit middleware / keel's body reader). */
  rawBody?: Buffer;
  /** Parsed body (Express convention). */
  body?: unknown;
  /** W3C trace context of this request (httpTrace middleware). */
  /** W3C Trace Context of this request (httpTrace); `tracestate` is the caller's, passed on unchanged. */
  traceContext?: { traceId: string; spanId: string; parentSpanId?: string; flags: string; tracestate?: string };
  /** Per-request scratch space shared by hooks and handlers. */
  state?: Record<string, unknown>;
  /** Set by timeout when its 408 was delivered (connect-timeout's flag): a late handler can skip its answer. */
  timedout?: boolean;
}

/*
 * The same properties on Express's `Request`, for apps written against @types/express (4 or 5):
 * `req.auth`, `req.requestId`, `req.traceContext`, `req.apiKey` type-check without casts.
 *
 * Express's types build their Request on the global `Express.Request` interface, which exists for
 * this purpose (passport augments it the same way). A global namespace needs no module to resolve,
 * so a project without @types/express compiles unchanged (strict, without skipLibCheck). It is in
 * this file because every factory's declarations import it.
 */
declare global {
  namespace Express {
    interface Request extends KeelRequestExtensions {}
  }
}

export type KeelRequest = IncomingMessage & KeelRequestExtensions;

/** Connect-style next(): call with an error to hand it on, without to continue. */
export type NextFunction = (err?: unknown) => void;

/**
 * The one middleware shape: a named `(req, res, next)` function that relies only on node:http.
 * Middleware that rejects a request writes the problem response itself (lib/http/problem.ts sendProblem)
 * so that Express's HTML error page never reaches an API client.
 */
export type Middleware = (req: KeelRequest, res: ServerResponse, next: NextFunction) => void;

/** Header map with one string per name (repeated values joined with ", ", RFC 9110 §5.3). */
export function flattenHeaders(headers: Readonly<Record<string, string | number | readonly string[] | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in headers) {
    const v = headers[k];
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  return out;
}
