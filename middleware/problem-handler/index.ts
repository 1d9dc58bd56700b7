/**
 * An Express error middleware that answers any error as RFC 9457 problem details: the other end of
 * `onReject: 'next'` (lib/http/reject.ts), and a drop-in last `app.use(...)` for a legacy Express app.
 *
 * - keel's HttpError (every factory's rejection, `handlerError`, a thrown `new HttpError(...)`):
 *   its status, type, title, detail and extension members, and the headers it carries
 *   (`WWW-Authenticate`, `Retry-After`, `RateLimit*`, `Allow`, …);
 * - an http-errors-style error (`createError(404)`, body-parser's 413/400, express-jwt's
 *   UnauthorizedError): `status` or `statusCode` from 400 to 599, the message as `detail` only when
 *   `expose` is true (http-errors sets it for 4xx), its `headers` (as Express's finalhandler does);
 * - anything else: a bare 500, without message, stack or any other internal.
 *
 * 5xx answers are logged (the error, the request id, method and URL): never to the client. When the
 * response has already started, the error goes on to `next(err)`, which is how Express wants it
 * (its default handler closes the connection).
 */
import type { ServerResponse } from 'node:http';
import { HttpError, KeelError } from '../../lib/http/errors.js';
import { problem, problemFor, sendProblem, toProblem, type ProblemDetails } from '../../lib/http/problem.js';
import type { KeelRequest, NextFunction } from '../../lib/http/request.js';

/** The part of a pino logger (or anything shaped like it) the handler uses. */
export interface ProblemLogger {
  error(obj: Record<string, unknown>, msg?: string): void;
}

export interface ProblemHandlerOptions {
  /**
   * Where 5xx errors are logged: a pino logger (or any `{ error(obj, msg) }`). Default
   * {@link defaultProblemLogger}: one line on stderr with the stack, as Express's own error handler
   * prints it; silent when NODE_ENV is 'test'. Pass `false` to log nothing.
   */
  logger?: ProblemLogger | false;
}

/** The default logger: `console.error` of the message and the error, silent under NODE_ENV=test (Express's finalhandler does the same). */
export const defaultProblemLogger: ProblemLogger = Object.freeze({
  error(obj: Record<string, unknown>, msg?: string): void {
    if (process.env.NODE_ENV === 'test') return;
    const { err, ...context } = obj;
    console.error(msg ?? 'request failed', context, err);
  },
});

/** An Express error middleware `(err, req, res, next)`; its four parameters are how Express knows it. */
export type ProblemErrorHandler = (err: unknown, req: KeelRequest, res: ServerResponse, next: NextFunction) => void;

/** RFC 9110 §5.1 field-name: headers an error carries are only copied when they are well-formed. */
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

interface LooseError {
  status?: unknown;
  statusCode?: unknown;
  expose?: unknown;
  message?: unknown;
  headers?: unknown;
}

/**
 * keel's HttpError from another copy of keel (an app that loads keel twice, e.g. from two
 * node_modules folders): `instanceof` fails across copies, the shape does not.
 */
function isHttpErrorShape(err: unknown): err is HttpError {
  const e = err as Partial<HttpError> | null;
  return typeof e === 'object' && e !== null && typeof e.status === 'number' && typeof e.title === 'string' && typeof e.type === 'string'
    && typeof e.extensions === 'object' && e.extensions !== null && typeof e.headers === 'object' && e.headers !== null;
}

/** The problem and headers for an error that is not one of keel's. */
function foreignProblem(err: unknown): { problem: ProblemDetails; headers: Record<string, string> } {
  const e = (typeof err === 'object' && err !== null ? err : {}) as LooseError;
  const raw = typeof e.status === 'number' ? e.status : e.statusCode;
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 400 || raw > 599) return { problem: problemFor('KEEL_INTERNAL'), headers: {} };
  // Only an error that says it may be shown (http-errors: 4xx) gives its message to the client.
  const detail = e.expose === true && typeof e.message === 'string' && e.message !== '' ? e.message : undefined;
  const headers: Record<string, string> = {};
  if (typeof e.headers === 'object' && e.headers !== null) {
    for (const [k, v] of Object.entries(e.headers)) {
      if (FIELD_NAME.test(k) && (typeof v === 'string' || typeof v === 'number') && !/[\r\n]/.test(String(v))) headers[k] = String(v);
    }
  }
  return { problem: raw === 500 ? problemFor('KEEL_INTERNAL', detail) : problem(raw, detail), headers };
}

/**
 * Render any error as `application/problem+json` with its real status (see the module comment).
 * Place it after every route and middleware.
 *
 * @example
 * import express from 'express';
 * import { jwtAuth } from 'keel/middleware/jwt-auth';
 * import { problemHandler } from 'keel/middleware/problem-handler';
 *
 * const app = express();
 * app.use(jwtAuth({ secret: process.env.JWT_SECRET!, onReject: 'next' }));
 * app.get('/me', (req, res) => res.json({ sub: req.auth?.sub }));
 * app.use(problemHandler({ logger: pino() }));
 */
export function problemHandler(options: ProblemHandlerOptions = {}): ProblemErrorHandler {
  if (typeof options !== 'object' || options === null) throw new TypeError('problemHandler(options): options must be an object');
  const { logger = defaultProblemLogger } = options;
  if (logger !== false && typeof logger?.error !== 'function') {
    throw new TypeError('problemHandler(options): logger must be a pino logger (or { error(obj, msg) }) or false');
  }

  return function problemHandler(err: unknown, req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    const { problem: p, headers } = err instanceof HttpError || err instanceof KeelError
      ? toProblem(err)
      : isHttpErrorShape(err) && err.status >= 400 && err.status <= 599
        ? { problem: problem(err.status, err.detail, { title: err.title, type: err.type, instance: err.instance, extensions: { ...err.extensions } }), headers: { ...err.headers } }
        : foreignProblem(err);
    if (p.status >= 500 && logger) {
      const r = req as KeelRequest & { id?: unknown; originalUrl?: string };
      // The request record's field names (keel's http-trace line): status, method, route, request_id, trace_id.
      const x = req as unknown as { routePattern?: string; route?: { path?: unknown }; baseUrl?: string };
      const route = x.routePattern ?? (typeof x.route?.path === 'string' ? `${x.baseUrl ?? ''}${x.route.path}` : null);
      const traceId = req.traceContext?.traceId ?? (req as { keelSpan?: { traceId: string } }).keelSpan?.traceId ?? null;
      logger.error({ err, status: p.status, method: req.method, route, url: r.originalUrl ?? req.url, request_id: r.requestId ?? r.id ?? null, trace_id: traceId }, 'request failed');
    }
    if (res.headersSent) return next(err);
    sendProblem(res, p, headers);
  };
}
