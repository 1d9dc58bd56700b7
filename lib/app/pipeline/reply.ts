/**
 * The reply phase: the handler's outcome becomes the response — passed through on_response hooks
 * when the route has any, then serialised under the route's response contract (contract.ts) and
 * written (lib/app/respond.ts).
 */
import type { ServerResponse } from 'node:http';
import type { KeelRequest } from '../../http/request.js';
import { HandlerResult, KeelResponse, toResponse, type RequestData } from '../handler.js';
import { runHooks, type HookContext } from '../hooks.js';
import { writeResponse, writeValue } from '../respond.js';
import { REFUSED, serializeWithContract } from './contract.js';
import type { CoreState } from './core.js';
import { fail, failOpen } from './fail.js';

/** on_response hooks, then the (possibly replaced) response. Only for routes that have such hooks. */
export async function respondThroughHooks(core: CoreState, req: KeelRequest, res: ServerResponse, data: RequestData, r: KeelResponse): Promise<void> {
  const c = { phase: 'on_response', req, res, data, route: core.path, response: r } as HookContext;
  await runHooks(core.hooks.on_response, c);
  if (res.writableEnded) return;
  await send(core, res, c.response ?? r);
}

/** A hook's short-circuit response: on_response hooks still see it. */
export function respondEarly(core: CoreState, req: KeelRequest, res: ServerResponse, data: RequestData, r: KeelResponse): void | Promise<void> {
  if (res.writableEnded) return;
  return core.hasOnResponse ? respondThroughHooks(core, req, res, data, r) : send(core, res, r);
}

/**
 * Write `r`, its JSON content through the route's response contract (contract.ts) when it has one:
 * serialised from the schema, or refused with a 500 problem.
 */
export function send(core: CoreState, res: ServerResponse, r: KeelResponse): void | Promise<void> {
  const c = core.contract;
  if (!c) return writeResponse(res, r);
  const json = serializeWithContract(c, res, core.label, core.path, core.logger, r.status_code, r.content);
  if (json === REFUSED) return;
  return writeResponse(res, r, json);
}

/** Turn the handler's outcome into the response (the only step left once the handler returned). */
export function finish(core: CoreState, req: KeelRequest, res: ServerResponse, data: RequestData, outcome: unknown): void | Promise<void> {
  if (res.writableEnded) return;
  if (!core.hasOnResponse && !(outcome instanceof KeelResponse) && !(outcome instanceof HandlerResult) && !(outcome instanceof Error)) {
    // A plain value: no Response object is needed between the handler and the socket.
    const c = core.contract;
    if (!c || outcome === undefined) return writeValue(res, outcome);
    const json = serializeWithContract(c, res, core.label, core.path, core.logger, 200, outcome);
    if (json === REFUSED) return;
    return writeValue(res, outcome, json);
  }
  const out = toResponse(outcome);
  if (out instanceof Error) return fail(core, req, res, data, out);
  return core.hasOnResponse ? respondThroughHooks(core, req, res, data, out) : send(core, res, out);
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
