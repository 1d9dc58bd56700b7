/**
 * The error phase: on_error hooks, then one problem+json answer (lib/http/problem.ts). A client that
 * left mid-answer gets nothing and costs one throttled debug line.
 */
import type { ServerResponse } from 'node:http';
import { HttpError } from '../../http/errors.js';
import { isErrorStatus, sendProblem, type ProblemDetails } from '../../http/problem.js';
import { validationError, validationProblem } from '../../http/validation.js';
import type { ValidationIssue } from '../../http/validation-errors.js';
import type { KeelRequest } from '../../http/request.js';
import { isExpectedNetworkError, networkErrorLog } from '../../ops/net-errors.js';
import type { RequestData } from '../handler.js';
import { runHooks } from '../hooks.js';
import { writeResponse } from '../respond.js';
import type { CoreState } from './core.js';

/**
 * Answer `err`: on_error hooks first when the route has any (they may answer), else the problem
 * for it, synchronously (no promise on a route without on_error hooks).
 */
export function fail(core: CoreState, req: KeelRequest, res: ServerResponse, data: RequestData, err: unknown): void | Promise<void> {
  if (core.hasOnError) return failThroughHooks(core, req, res, data, err);
  answerError(core, req, res, err);
}

async function failThroughHooks(core: CoreState, req: KeelRequest, res: ServerResponse, data: RequestData, err: unknown): Promise<void> {
  try {
    const r = await runHooks(core.hooks.on_error, { phase: 'on_error', req, res, data, route: core.path, error: err });
    if (r) return void (await writeResponse(res, r));
    if (res.writableEnded) return;
  } catch (hookErr) {
    core.logger.error({ err: hookErr, route: core.path }, 'on_error hook failed');
  }
  answerError(core, req, res, err);
}

/** The problem for `err`, logged when it is the server's. */
function answerError(core: CoreState, req: KeelRequest, res: ServerResponse, err: unknown): void {
  // The client left while its answer was written (EPIPE, ECONNRESET, premature close): nothing to
  // fix here, and no one to answer; one throttled debug line (lib/ops/net-errors.ts).
  if ((res.destroyed || req.socket.destroyed) && isExpectedNetworkError(err)) {
    networkErrorLog(core.logger).note('http', err);
    return;
  }
  // A 4xx is the client's; an expected 5xx refusal (full queue) is logged, aggregated, by whoever refused.
  if (!(err instanceof HttpError) || !isErrorStatus(err.status) || (err.status >= 500 && !err.expected)) {
    // The request record's field names (enable_http_trace), so one query finds both lines (issue 47).
    const traceId = req.traceContext?.traceId ?? (req as { keelSpan?: { traceId: string } }).keelSpan?.traceId ?? null;
    core.logger.error({ err, status: err instanceof HttpError && isErrorStatus(err.status) ? err.status : 500, method: req.method, route: core.path, request_id: req.requestId ?? null, trace_id: traceId }, 'request failed');
  }
  sendProblem(res, err);
}

/**
 * A request its route's schemas refuse (422). Without on_error hooks nobody would see an HttpError (a 4xx
 * is not logged): the problem is written from the issues, the bytes sendProblem(validationError(issues))
 * writes, without constructing an Error. With hooks they get the HttpError as before.
 */
export function refuseInvalid(core: CoreState, req: KeelRequest, res: ServerResponse, data: RequestData, issues: ValidationIssue[]): void {
  if (core.hasOnError) return failOpen(core, req, res, data, validationError(issues));
  if (!res.writableEnded) refuse(core, res, validationProblem(issues));
}

/** A client error's problem, answered where no on_error hook would see an error (none is built). */
export function refuse(core: CoreState, res: ServerResponse, problem: ProblemDetails): void {
  if (res.writableEnded) return;
  try {
    sendProblem(res, problem);
  } catch (e) {
    core.logger.error({ err: e, route: core.path }, 'error response failed');
  }
}

/** Errors after the handler was entered: a response already under way is left alone. */
export function failOpen(core: CoreState, req: KeelRequest, res: ServerResponse, data: RequestData, err: unknown): void {
  if (res.writableEnded) return;
  const failed = (e: unknown) => core.logger.error({ err: e, route: core.path }, 'error response failed');
  try {
    const p = fail(core, req, res, data, err);
    if (p) p.catch(failed);
  } catch (e) {
    failed(e);
  }
}
