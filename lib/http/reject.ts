/**
 * How a rejecting middleware delivers its rejection: the `onReject` option (`on_reject` in
 * snake_case) that every factory that can refuse a request takes (bodyLimit, timeout, rateLimit,
 * jwtAuth, apiKeyAuth, authorization, cors, staticFiles).
 *
 * - `'respond'` ({@link DEFAULT_ON_REJECT}): the middleware writes the problem+json answer itself, so
 *   Express's HTML error page never reaches an API client. This is what keel's own pipeline uses.
 * - `'next'`: the middleware calls `next(err)` with an HttpError carrying everything the answer
 *   needs (status, type, title, detail, extensions, headers), the Express convention for error
 *   handlers placed after it (`app.use((err, req, res, next) => …)`, or keel's `problemHandler()`).
 * - a function `(err, req, res, next) => void`: called with that HttpError instead; it answers, or
 *   calls `next()` / `next(err)` itself.
 *
 * The problem (and the HttpError) is only built when a request is refused; the answer under
 * `'respond'` is the same bytes as before this option existed.
 */
import type { ServerResponse } from 'node:http';
import { HttpError } from './errors.js';
import { fail } from '../records/define.js';
import { sendProblem, type ProblemDetails } from './problem.js';
import type { KeelRequest, NextFunction } from './request.js';

/** An Express-style error handler that receives a factory's rejection. */
export type RejectHandler = (err: HttpError, req: KeelRequest, res: ServerResponse, next: NextFunction) => void;

/** The `onReject` option: `'respond'` (default), `'next'`, or a handler. */
export type OnReject = 'respond' | 'next' | RejectHandler;

/** The default `onReject`: the middleware answers the problem itself. */
export const DEFAULT_ON_REJECT: OnReject = 'respond';

/** The option as a factory's options object may carry it, in either spelling. */
export interface OnRejectOption {
  /** How a refusal is delivered: `'respond'` (default {@link DEFAULT_ON_REJECT}), `'next'` or `(err, req, res, next) => void`. */
  onReject?: OnReject;
  on_reject?: OnReject;
}

/**
 * Take `onReject` / `on_reject` out of a factory's options, so the rest can be parsed by the record
 * (which rejects unknown keys). Bad values are a ConfigError naming `record` and the key.
 */
export function takeOnReject<T extends object>(options: T, record: string): { onReject: OnReject; rest: T } {
  if (typeof options !== 'object' || options === null || (!('onReject' in options) && !('on_reject' in options))) {
    return { onReject: DEFAULT_ON_REJECT, rest: options };
  }
  const o = options as Record<string, unknown>;
  if ('onReject' in o && 'on_reject' in o) fail(record, record, 'on_reject', o.onReject, 'only one of "on_reject" and "onReject"');
  const key = 'onReject' in o ? 'onReject' : 'on_reject';
  const value = o[key];
  const rest = { ...o };
  delete rest.onReject;
  delete rest.on_reject;
  if (value === undefined) return { onReject: DEFAULT_ON_REJECT, rest: rest as T };
  if (value !== 'respond' && value !== 'next' && typeof value !== 'function') {
    fail(record, record, key, value, "'respond', 'next' or a function (err, req, res, next) => void", "Use 'next' to hand the rejection to your Express error handler.");
  }
  return { onReject: value as OnReject, rest: rest as T };
}

/** What is refused: a problem (plus headers), or an HttpError that already carries its headers. */
export type Refusal = ProblemDetails | HttpError;

/** Builds the error handed to `next` / the handler; jwtAuth passes one that makes an UnauthorizedError. */
export type ErrorMaker = (problem: ProblemDetails, headers: Readonly<Record<string, string>> | undefined) => HttpError;

/**
 * Delivers refusals the way `onReject` says. `refuse` is called with what the middleware would
 * have answered; `fail` with an unexpected error (a throwing key function, a failed store), which
 * under `'next'` goes to `next(err)` as Express expects and otherwise becomes a 500 problem.
 */
export interface Rejecter {
  readonly mode: 'respond' | 'next' | 'handler';
  refuse(req: KeelRequest, res: ServerResponse, next: NextFunction, refusal: Refusal, headers?: Readonly<Record<string, string>>, make?: ErrorMaker): void;
  fail(req: KeelRequest, res: ServerResponse, next: NextFunction, err: unknown): void;
}

/** The HttpError for a problem: every standard member, the extensions, and the headers. */
export function httpErrorFrom(problem: ProblemDetails, headers?: Readonly<Record<string, string>>): HttpError {
  const { type, title, status, detail, instance, ...extensions } = problem;
  return new HttpError(status, detail, { type, title, instance, extensions, headers: headers ? { ...headers } : {} });
}

function toError(refusal: Refusal, headers: Readonly<Record<string, string>> | undefined, make: ErrorMaker): HttpError {
  if (!(refusal instanceof HttpError)) return make(refusal, headers);
  if (!headers) return refusal;
  return new HttpError(refusal.status, refusal.detail, {
    code: refusal.code as never,
    title: refusal.title,
    type: refusal.type,
    instance: refusal.instance,
    extensions: { ...refusal.extensions },
    headers: { ...refusal.headers, ...headers },
    cause: refusal.cause,
  });
}

/** The rejecter for one factory instance, chosen once at factory time. */
export function rejecter(onReject: OnReject): Rejecter {
  if (onReject === 'respond') {
    return {
      mode: 'respond',
      refuse(_req, res, _next, refusal, headers) {
        sendProblem(res, refusal, headers as Record<string, string> | undefined);
      },
      fail(_req, res, _next, err) {
        sendProblem(res, err);
      },
    };
  }
  const handler = onReject === 'next' ? undefined : onReject;
  const deliver = (req: KeelRequest, res: ServerResponse, next: NextFunction, err: HttpError): void => {
    if (!handler) return next(err);
    try {
      handler(err, req, res, next);
    } catch (thrown) {
      // A throwing handler is the application's error: Express's next(err) is where it belongs.
      next(thrown);
    }
  };
  return {
    mode: handler ? 'handler' : 'next',
    refuse(req, res, next, refusal, headers, make = httpErrorFrom) {
      deliver(req, res, next, toError(refusal, headers, make));
    },
    fail(_req, _res, next, err) {
      next(err);
    },
  };
}
