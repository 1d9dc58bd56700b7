/**
 * The reply phase: the handler's outcome becomes the response — checked against the route's
 * response schema, passed through on_response hooks when the route has any, written
 * (lib/app/respond.ts).
 */
import type { ServerResponse } from 'node:http';
import type { KeelRequest } from '../../http/request.js';
import { HandlerResult, KeelResponse, toResponse, type RequestData } from '../handler.js';
import { runHooks, type HookContext } from '../hooks.js';
import { writeResponse, writeValue } from '../respond.js';
import type { CoreState } from './core.js';
import { fail, failOpen } from './fail.js';

/** on_response hooks, then the (possibly replaced) response. Only for routes that have such hooks. */
export async function respondThroughHooks(core: CoreState, req: KeelRequest, res: ServerResponse, data: RequestData, r: KeelResponse): Promise<void> {
  const c = { phase: 'on_response', req, res, data, route: core.path, response: r } as HookContext;
  await runHooks(core.hooks.on_response, c);
  if (res.writableEnded) return;
  await writeResponse(res, c.response ?? r);
}

/** A hook's short-circuit response: on_response hooks still see it. */
export function respondEarly(core: CoreState, req: KeelRequest, res: ServerResponse, data: RequestData, r: KeelResponse): void | Promise<void> {
  if (res.writableEnded) return;
  return core.hasOnResponse ? respondThroughHooks(core, req, res, data, r) : writeResponse(res, r);
}

/**
 * Development aid: log (never refuse) a body that does not match the schema of its status (the
 * `responses` entry, else `response` for a success), or a status `responses` does not list.
 */
function checkShape(core: CoreState, content: unknown, status = 200): void {
  const { statusChecks, responseCheck } = core;
  let check = status < 300 ? responseCheck : null;
  if (statusChecks) {
    const declared = statusChecks.get(status);
    if (declared === undefined && !(status === 200 && responseCheck)) {
      core.logger.warn({ route: core.path, status }, 'handler answered a status its responses do not list');
      return;
    }
    if (declared !== undefined) check = declared;
  }
  if (check && content !== null && typeof content === 'object' && !Buffer.isBuffer(content) && !check(content)) {
    core.logger.warn({ route: core.path, status, errors: check.errors }, 'handler response does not match its response schema');
  }
}

/** Turn the handler's outcome into the response (the only step left once the handler returned). */
export function finish(core: CoreState, req: KeelRequest, res: ServerResponse, data: RequestData, outcome: unknown): void | Promise<void> {
  if (res.writableEnded) return;
  if (!core.hasOnResponse && !(outcome instanceof KeelResponse) && !(outcome instanceof HandlerResult) && !(outcome instanceof Error)) {
    // A plain value: no Response object is needed between the handler and the socket.
    checkShape(core, outcome, outcome === undefined ? 204 : 200);
    return writeValue(res, outcome);
  }
  const out = toResponse(outcome);
  if (out instanceof Error) return fail(core, req, res, data, out);
  if (out.status_code < 300 || core.statusChecks) checkShape(core, out.content, out.status_code);
  return core.hasOnResponse ? respondThroughHooks(core, req, res, data, out) : writeResponse(res, out);
}

/** finish() for the synchronous path: whatever goes wrong while answering becomes the error response. */
export function complete(core: CoreState, req: KeelRequest, res: ServerResponse, data: RequestData, outcome: unknown): void {
  try {
    const w = finish(core, req, res, data, outcome);
    if (w) w.catch((e: unknown) => failOpen(core, req, res, data, e));
  } catch (e) {
    failOpen(core, req, res, data, e);
  }
}
