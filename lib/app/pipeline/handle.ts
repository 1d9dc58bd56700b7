/**
 * The handle phase and the two paths to it. A route with no hooks before the handler runs the
 * synchronous path (direct / directWithBody: validate → handler → reply, no promise unless the
 * handler returns one); everything else runs the general path (run), awaiting only what is present.
 */
import type { ServerResponse } from 'node:http';
import type { KeelRequest } from '../../http/request.js';
import { isThenable, type KeelResponse, type RequestData } from '../handler.js';
import { runHooks } from '../hooks.js';
import type { CoreState } from './core.js';
import { fail, failOpen, refuse, refuseInvalid } from './fail.js';
import { validationError } from '../../http/validation.js';
import { readBody, readBodyThen } from './read.js';
import { complete, finish, respondEarly } from './reply.js';
import { validateRequest } from './validate.js';

/**
 * The synchronous path: no hooks before the handler and no body to read. A handler that returns
 * a plain value is answered in the same tick, without a promise (most GET routes).
 */
export function direct(core: CoreState, req: KeelRequest, res: ServerResponse, data: RequestData): void {
  let outcome: unknown;
  try {
    if (core.validator) {
      const issues = validateRequest(core, req, data);
      if (issues !== undefined) return refuseInvalid(core, req, res, data, issues);
    }
    outcome = core.handler.call(req, data);
  } catch (err) {
    return failOpen(core, req, res, data, err);
  }
  if (isThenable(outcome)) {
    outcome.then(
      (o) => complete(core, req, res, data, o),
      (e: unknown) => failOpen(core, req, res, data, e),
    );
    return;
  }
  complete(core, req, res, data, outcome);
}

/**
 * A request with a body on a route without hooks before the handler: the body is read with a
 * callback and parsed synchronously (multipart aside), then the synchronous path takes over.
 */
export function directWithBody(core: CoreState, req: KeelRequest, res: ServerResponse, data: RequestData): void {
  readBodyThen(core, req, data, () => direct(core, req, res, data), (e) => failOpen(core, req, res, data, e), (p) => refuse(core, res, p));
}

/** The general path: hooks, body reading and parsing, each awaited only when present. */
export async function run(core: CoreState, req: KeelRequest, res: ServerResponse, data: RequestData, withBody: boolean): Promise<void> {
  const { hooks, path } = core;
  try {
    let r: KeelResponse | undefined;
    if (core.hasOnRequest) {
      r = await runHooks(hooks.on_request, { phase: 'on_request', req, res, data, route: path });
      if (res.writableEnded) return;
    }
    if (!r) {
      if (withBody) await readBody(core, req, data);
      if (core.hasPreValidation) {
        r = await runHooks(hooks.pre_validation, { phase: 'pre_validation', req, res, data, route: path });
        if (res.writableEnded) return;
      }
    }
    if (!r) {
      if (core.validator) {
        const issues = validateRequest(core, req, data);
        if (issues !== undefined) throw validationError(issues);
      }
      if (core.hasPreHandler) {
        r = await runHooks(hooks.pre_handler, { phase: 'pre_handler', req, res, data, route: path });
        if (res.writableEnded) return;
      }
    }
    if (r) return void (await respondEarly(core, req, res, data, r));
    // Most handlers return a plain value: awaiting only a thenable saves a microtask hop per request.
    const outcome = core.handler.call(req, data);
    await finish(core, req, res, data, isThenable(outcome) ? await outcome : outcome);
  } catch (err) {
    if (res.writableEnded) return;
    await fail(core, req, res, data, err);
  }
}
