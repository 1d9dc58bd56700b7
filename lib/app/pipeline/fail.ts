/**
 * The error phase: on_error hooks, then one problem+json answer (lib/http/problem.ts). A client that
 * left mid-answer gets nothing and costs one throttled debug line.
 */
import type { ServerResponse } from 'node:http';
import { HttpError } from '../../http/errors.js';
import { isErrorStatus, sendProblem } from '../../http/problem.js';
import type { KeelRequest } from '../../http/request.js';
import { isExpectedNetworkError, networkErrorLog } from '../../ops/net-errors.js';
import type { RequestData } from '../handler.js';
import { runHooks } from '../hooks.js';
import { writeResponse } from '../respond.js';
import type { CoreState } from './core.js';

/** Answer `err`: on_error hooks first (they may answer), else the problem for it. */
export async function fail(core: CoreState, req: KeelRequest, res: ServerResponse, data: RequestData, err: unknown): Promise<void> {
  if (core.hasOnError) {
    try {
      const r = await runHooks(core.hooks.on_error, { phase: 'on_error', req, res, data, route: core.path, error: err });
      if (r) return void (await writeResponse(res, r));
      if (res.writableEnded) return;
    } catch (hookErr) {
      core.logger.error({ err: hookErr, route: core.path }, 'on_error hook failed');
    }
  }
  // The client left while its answer was written (EPIPE, ECONNRESET, premature close): nothing to
  // fix here, and no one to answer; one throttled debug line (lib/ops/net-errors.ts).
  if (isExpectedNetworkError(err) && (res.destroyed || req.socket.destroyed)) {
    networkErrorLog(core.logger).note('http', err);
    return;
  }
  // A 4xx is the client's; an expected 5xx refusal (full queue) is logged, aggregated, by whoever refused.
  if (!(err instanceof HttpError) || !isErrorStatus(err.status) || (err.status >= 500 && !err.expected)) {
    core.logger.error({ err, route: core.path, requestId: req.requestId }, 'request failed');
  }
  sendProblem(res, err);
}

/** Errors after the handler was entered: a response already under way is left alone. */
export function failOpen(core: CoreState, req: KeelRequest, res: ServerResponse, data: RequestData, err: unknown): void {
  if (!res.writableEnded) {
    void fail(core, req, res, data, err).catch((e: unknown) => core.logger.error({ err: e, route: core.path }, 'error response failed'));
  }
}
