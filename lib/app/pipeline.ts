/**
 * The per-route pipeline, compiled once at build time.
 *
 * Everything a route does not use is left out of its function: no hooks → no hook calls, no
 * schemas → no validator, no body-bearing request → no body read. Middleware (server-level
 * features, then per-route records) runs as a plain Connect chain before the core (lib/app/chain.ts).
 *
 * A request's life, one file per phase (lib/app/pipeline/): core.ts (what the route decided at build
 * time), read.ts (body), validate.ts (parameters and body against their schemas), handle.ts (the two
 * paths to the handler, with the hooks between phases), reply.ts (outcome → response, on_response
 * hooks), fail.ts (on_error hooks, problem answers).
 */
import type { ServerResponse } from 'node:http';
import { hasRequestBody } from '../http/body.js';
import { missingBoundary, parseMediaType } from '../http/content.js';
import type { KeelRequest } from '../http/request.js';
import type { RequestData } from './handler.js';
import { LazyRequestData } from './request-data.js';
import { writeResponse } from './respond.js';
import type { RouteDefinition } from './route-definition.js';
import { compileCoreState, type PipelineContext } from './pipeline/core.js';
import { failOpen } from './pipeline/fail.js';
import { direct, directWithBody, run } from './pipeline/handle.js';

export type { PipelineContext };

/** What the router calls for a matched route. */
export type RouteHandler = (req: KeelRequest, res: ServerResponse, params: Record<string, string | undefined>, search: string) => void;

/** Compile a route's core: hooks, body, validation, handler, response. */
export function compileCore(route: RouteDefinition, ctx: PipelineContext): RouteHandler {
  const core = compileCoreState(route, ctx);
  const { flags } = core;
  const staticResponse = flags.staticResponse;
  if (staticResponse) {
    // spec: a static response is served directly, bypassing the pipeline.
    return function staticRoute(_req, res) {
      void writeResponse(res, staticResponse);
    };
  }
  const wildcard = route.compiled.wildcard;
  const bg = ctx.background;
  // find-my-way hands over a fresh params object per match: it is used as it is unless a wildcard
  // is renamed or an optional parameter may come back undefined.
  const renameParams = wildcard !== null || route.compiled.pattern.includes('?');
  // A route taking uploads reads the declared Content-Type even when no body came: a multipart type
  // without its boundary is malformed whatever follows (RFC 7578 §4.1), a 400 rather than "file missing".
  const takesUploads = route.files.length > 0;
  const alwaysGeneral = core.hasOnRequest || core.hasPreValidation || core.hasPreHandler;
  return function routeCore(req, res, params, search) {
    const withBody = hasRequestBody(req);
    let pathParams: Record<string, string> = params as Record<string, string>;
    if (renameParams) {
      pathParams = {};
      for (const k in params) {
        const v = params[k];
        if (v !== undefined) pathParams[k === '*' && wildcard ? wildcard : k] = v;
      }
    }
    const data = new LazyRequestData(req, pathParams, search, flags.wantsHeaders || withBody, flags.wantsCookies || withBody);
    if (bg) {
      // Jobs carry the request id of the request that enqueued them (BackgroundJobMetadata.request_id).
      const requestId = req.requestId ?? null;
      data.background = {
        enqueue: (task: unknown, a?: unknown, b?: object) => typeof task === 'string'
          ? bg.enqueue(task, a, { request_id: requestId, ...b })
          : bg.enqueue(task as never, { request_id: requestId, ...(a as object | undefined) }),
      } as RequestData['background'];
    }
    if (flags.wantsRequestExtensions) (req as KeelRequest & { keel?: RequestData }).keel = data;
    if (takesUploads && !withBody) {
      const refused = missingBoundary(parseMediaType(req.headers['content-type']));
      if (refused) return failOpen(core, req, res, data, refused);
    }
    if (alwaysGeneral) void run(core, req, res, data, withBody);
    else if (withBody) directWithBody(core, req, res, data);
    else direct(core, req, res, data);
  };
}
