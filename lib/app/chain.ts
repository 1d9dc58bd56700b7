/**
 * Connect-style middleware chains: how server features and route records run before a route's core.
 */
import type { ServerResponse } from 'node:http';
import type { RouteHandler } from './pipeline.js';
import { sendProblem } from '../http/problem.js';
import type { KeelRequest, Middleware } from '../http/request.js';

/** Run Connect-style middleware in order, then `final`. A thrown or passed error becomes a problem. */
export function runChain(chain: readonly Middleware[], req: KeelRequest, res: ServerResponse, final: () => void): void {
  let i = 0;
  const next = (err?: unknown): void => {
    if (err !== undefined && err !== null && err !== 'route' && err !== 'router') {
      sendProblem(res, err);
      return;
    }
    if (res.writableEnded) return;
    const mw = chain[i++];
    if (!mw) {
      final();
      return;
    }
    try {
      mw(req, res, next);
    } catch (e) {
      sendProblem(res, e);
    }
  };
  next();
}

/** Chain `mws` into one middleware (empty → undefined, so callers can skip it entirely). */
export function compose(mws: readonly Middleware[]): Middleware | undefined {
  if (mws.length === 0) return undefined;
  if (mws.length === 1) return mws[0];
  return function composed(req, res, next) {
    runChain(mws, req, res, () => next());
  };
}

/** Prepend the route's middleware chain to its core. */
export function withMiddleware(chain: readonly Middleware[], core: RouteHandler): RouteHandler {
  if (chain.length === 0) return core;
  return function routePipeline(req, res, params, search) {
    const r = req as KeelRequest & { params?: unknown };
    if (!r.params) r.params = params;
    runChain(chain, req, res, () => core(req, res, params, search));
  };
}
