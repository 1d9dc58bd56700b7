/**
 * The per-route pipeline, compiled once at build time.
 *
 * Everything a route does not use is left out of its function: no hooks → no hook calls, no
 * schemas → no validator, no body-bearing request → no body read. Middleware (server-level
 * features, then per-route records) runs as a plain Connect chain before the core (lib/app/chain.ts).
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { hasRequestBody, readRawBody, readRawBodyThen } from '../http/body.js';
import { missingBoundary, parseBody, parseMediaType } from '../http/content.js';
import type { JsonPoisoning } from '../http/json-parse.js';
import { HttpError } from '../http/errors.js';
import { HandlerResult, KeelResponse, handlerFlags, isThenable, toResponse, type RequestData } from './handler.js';
import { runHooks, type PhaseHooks, type HookContext } from './hooks.js';
import { isExpectedNetworkError, networkErrorLog } from '../ops/net-errors.js';
import { isErrorStatus, sendProblem } from '../http/problem.js';
import type { KeelRequest } from '../http/request.js';
import { LazyRequestData } from './request-data.js';
import { writeResponse, writeValue } from './respond.js';
import type { RouteDefinition } from './route-definition.js';
import { compileRequestValidator, compileSchema } from '../http/validation.js';

/** A parsed body lands in the request data and, Express's way, on `req.body`. */
function useBody(req: KeelRequest, data: RequestData, parsed: Awaited<ReturnType<typeof parseBody>>): void {
  data.body = parsed.body;
  data.files = parsed.files;
  req.body = parsed.body;
}

/** Routes without cookie parameters never parse the Cookie header for validation. */
const NO_COOKIES: Record<string, string> = Object.freeze({}) as Record<string, string>;

export interface PipelineContext {
  hooks: PhaseHooks;
  /** Effective body cap for this route (bytes; null = unlimited). */
  maxBodySize: number | null;
  /** What `__proto__` / `constructor.prototype` keys in a JSON body get (secure-json-parse options). */
  jsonPoisoning?: JsonPoisoning;
  logger: Logger;
  /** Check handler output against the response schema (development aid). */
  checkResponses: boolean;
  background?: RequestData['background'];
}

/** What the router calls for a matched route. */
export type RouteHandler = (req: KeelRequest, res: ServerResponse, params: Record<string, string | undefined>, search: string) => void;

/** Compile a route's core: hooks, body, validation, handler, response. */
export function compileCore(route: RouteDefinition, ctx: PipelineContext): RouteHandler {
  const flags = handlerFlags(route.handler);
  const staticResponse = flags.staticResponse;
  const validator = flags.prefersParameterExtraction
    ? compileRequestValidator([], route.body, route.bodyRequired, route.files)
    : compileRequestValidator(route.params, route.body, route.bodyRequired, route.files);
  const responseCheck = ctx.checkResponses && route.response ? compileSchema(route.response) : null;
  // `responses`: one check per declared status (null: no content, nothing to check).
  const statusChecks = ctx.checkResponses && route.responses
    ? new Map(Object.entries(route.responses).map(([s, schema]) => [Number(s), schema ? compileSchema(schema) : null]))
    : null;
  const { hooks, maxBodySize, logger, jsonPoisoning } = ctx;
  const hasOnRequest = hooks.on_request.length > 0;
  const hasPreValidation = hooks.pre_validation.length > 0;
  const hasPreHandler = hooks.pre_handler.length > 0;
  const hasOnResponse = hooks.on_response.length > 0;
  const hasOnError = hooks.on_error.length > 0;
  const expectJson = route.body !== undefined;
  const skipJsonParse = flags.prefersRawJsonBody && !route.body;
  const wildcard = route.compiled.wildcard;
  const handler = route.handler;
  const bg = ctx.background;
  // find-my-way hands over a fresh params object per match: it is used as it is unless a wildcard
  // is renamed or an optional parameter may come back undefined.
  const renameParams = wildcard !== null || route.compiled.pattern.includes('?');
  const needsCookies = route.params.some((p) => p.source === 'cookie');
  // A route taking uploads reads the declared Content-Type even when no body came: a multipart type
  // without its boundary is malformed whatever follows (RFC 7578 §4.1), a 400 rather than "file missing".
  const takesUploads = route.files.length > 0;

  /** on_response hooks, then the (possibly replaced) response. Only for routes that have such hooks. */
  async function respond(req: KeelRequest, res: ServerResponse, data: RequestData, r: KeelResponse): Promise<void> {
    const c = { phase: 'on_response', req, res, data, route: route.path, response: r } as HookContext;
    await runHooks(hooks.on_response, c);
    if (res.writableEnded) return;
    await writeResponse(res, c.response ?? r);
  }

  async function fail(req: KeelRequest, res: ServerResponse, data: RequestData, err: unknown): Promise<void> {
    if (hasOnError) {
      try {
        const r = await runHooks(hooks.on_error, { phase: 'on_error', req, res, data, route: route.path, error: err });
        if (r) return void (await writeResponse(res, r));
        if (res.writableEnded) return;
      } catch (hookErr) {
        logger.error({ err: hookErr, route: route.path }, 'on_error hook failed');
      }
    }
    // The client left while its answer was written (EPIPE, ECONNRESET, premature close): nothing to
    // fix here, and no one to answer; one throttled debug line (lib/ops/net-errors.ts).
    if (isExpectedNetworkError(err) && (res.destroyed || req.socket.destroyed)) {
      networkErrorLog(logger).note('http', err);
      return;
    }
    // A 4xx is the client's; an expected 5xx refusal (full queue) is logged, aggregated, by whoever refused.
    if (!(err instanceof HttpError) || !isErrorStatus(err.status) || (err.status >= 500 && !err.expected)) {
      // The request record's field names (enable_http_trace), so one query finds both lines (issue 47).
      const traceId = req.traceContext?.traceId ?? (req as { keelSpan?: { traceId: string } }).keelSpan?.traceId ?? null;
      logger.error({ err, status: err instanceof HttpError && isErrorStatus(err.status) ? err.status : 500, method: req.method, route: route.path, request_id: req.requestId ?? null, trace_id: traceId }, 'request failed');
    }
    sendProblem(res, err);
  }

  /** Validate path/query/header/cookie values and the body; coerced values land in `data`. Throws a 422. */
  function validate(req: KeelRequest, data: RequestData): void {
    const v = validator!({
      pathParams: data.pathParams as Record<string, string>, query: data.query, headers: req.headers,
      cookies: needsCookies ? data.cookies : NO_COOKIES, body: data.body, hasBody: data.body !== undefined, files: data.files,
    });
    if (!flags.prefersParameterExtraction) {
      data.validatedParams = v.params;
      Object.assign(data.pathParams, v.params.path);
      Object.assign(data.query, v.params.query);
    }
  }

  /**
   * Development aid: log (never refuse) a body that does not match the schema of its status (the
   * `responses` entry, else `response` for a success), or a status `responses` does not list.
   */
  function checkShape(content: unknown, status = 200): void {
    let check = status < 300 ? responseCheck : null;
    if (statusChecks) {
      const declared = statusChecks.get(status);
      if (declared === undefined && !(status === 200 && responseCheck)) {
        logger.warn({ route: route.path, status }, 'handler answered a status its responses do not list');
        return;
      }
      if (declared !== undefined) check = declared;
    }
    if (check && content !== null && typeof content === 'object' && !Buffer.isBuffer(content) && !check(content)) {
      logger.warn({ route: route.path, status, errors: check.errors }, 'handler response does not match its response schema');
    }
  }

  /** Turn the handler's outcome into the response (the only step left once the handler returned). */
  function finish(req: KeelRequest, res: ServerResponse, data: RequestData, outcome: unknown): void | Promise<void> {
    if (res.writableEnded) return;
    if (!hasOnResponse && !(outcome instanceof KeelResponse) && !(outcome instanceof HandlerResult) && !(outcome instanceof Error)) {
      // A plain value: no Response object is needed between the handler and the socket.
      checkShape(outcome, outcome === undefined ? 204 : 200);
      return writeValue(res, outcome);
    }
    const out = toResponse(outcome);
    if (out instanceof Error) return fail(req, res, data, out);
    if (out.status_code < 300 || statusChecks) checkShape(out.content, out.status_code);
    return hasOnResponse ? respond(req, res, data, out) : writeResponse(res, out);
  }

  /** finish() for the synchronous path: whatever goes wrong while answering becomes the error response. */
  function complete(req: KeelRequest, res: ServerResponse, data: RequestData, outcome: unknown): void {
    try {
      const w = finish(req, res, data, outcome);
      if (w) w.catch((e: unknown) => failOpen(req, res, data, e));
    } catch (e) {
      failOpen(req, res, data, e);
    }
  }

  /** Errors after the handler was entered: a response already under way is left alone. */
  function failOpen(req: KeelRequest, res: ServerResponse, data: RequestData, err: unknown): void {
    if (!res.writableEnded) void fail(req, res, data, err).catch((e: unknown) => logger.error({ err: e, route: route.path }, 'error response failed'));
  }

  /**
   * The synchronous path: no hooks before the handler and no body to read. A handler that returns
   * a plain value is answered in the same tick, without a promise (most GET routes).
   */
  function direct(req: KeelRequest, res: ServerResponse, data: RequestData): void {
    let outcome: unknown;
    try {
      if (validator) validate(req, data);
      outcome = handler.call(req, data);
    } catch (err) {
      return failOpen(req, res, data, err);
    }
    if (isThenable(outcome)) {
      outcome.then(
        (o) => complete(req, res, data, o),
        (e: unknown) => failOpen(req, res, data, e),
      );
      return;
    }
    complete(req, res, data, outcome);
  }

  /**
   * A request with a body on a route without hooks before the handler: the body is read with a
   * callback and parsed synchronously (multipart aside), then the synchronous path takes over.
   */
  function directWithBody(req: KeelRequest, res: ServerResponse, data: RequestData): void {
    if (!req.rawBody && req.readableEnded && req.body !== undefined) {
      // Inside a legacy Express app an earlier parser already consumed the stream (see run()).
      data.body = req.body;
      return direct(req, res, data);
    }
    readRawBodyThen(req, maxBodySize, (err, raw) => {
      if (err) return failOpen(req, res, data, err);
      data.rawBody = raw!;
      if (skipJsonParse) return direct(req, res, data);
      let parsed: ReturnType<typeof parseBody>;
      try {
        parsed = parseBody(raw!, req.headers['content-type'], req.headers, expectJson, jsonPoisoning);
      } catch (e) {
        return failOpen(req, res, data, e);
      }
      if (isThenable(parsed)) {
        parsed.then(
          (p) => {
            useBody(req, data, p);
            direct(req, res, data);
          },
          (e: unknown) => failOpen(req, res, data, e),
        );
        return;
      }
      useBody(req, data, parsed);
      direct(req, res, data);
    });
  }

  /** The general path: hooks, body reading and parsing, each awaited only when present. */
  async function run(req: KeelRequest, res: ServerResponse, data: RequestData, withBody: boolean): Promise<void> {
    try {
      let r: KeelResponse | undefined;
      if (hasOnRequest) {
        r = await runHooks(hooks.on_request, { phase: 'on_request', req, res, data, route: route.path });
        if (res.writableEnded) return;
      }
      if (!r) {
        if (withBody && !req.rawBody && req.readableEnded && req.body !== undefined) {
          // Inside a legacy Express app an earlier parser (express.json(), urlencoded()) already
          // consumed the stream: its parsed body is all there is left to validate.
          data.body = req.body;
        } else if (withBody) {
          const raw = await readRawBody(req, maxBodySize);
          data.rawBody = raw;
          if (!skipJsonParse) {
            const p = parseBody(raw, req.headers['content-type'], req.headers, expectJson, jsonPoisoning);
            useBody(req, data, isThenable(p) ? await p : p);
          }
        }
        if (hasPreValidation) {
          r = await runHooks(hooks.pre_validation, { phase: 'pre_validation', req, res, data, route: route.path });
          if (res.writableEnded) return;
        }
      }
      if (!r) {
        if (validator) validate(req, data);
        if (hasPreHandler) {
          r = await runHooks(hooks.pre_handler, { phase: 'pre_handler', req, res, data, route: route.path });
          if (res.writableEnded) return;
        }
      }
      if (r) {
        if (res.writableEnded) return;
        await (hasOnResponse ? respond(req, res, data, r) : writeResponse(res, r));
        return;
      }
      // Most handlers return a plain value: awaiting only a thenable saves a microtask hop per request.
      const outcome = handler.call(req, data);
      await finish(req, res, data, isThenable(outcome) ? await outcome : outcome);
    } catch (err) {
      if (res.writableEnded) return;
      await fail(req, res, data, err);
    }
  }

  if (staticResponse) {
    // spec: a static response is served directly, bypassing the pipeline.
    return function staticRoute(_req, res) {
      void writeResponse(res, staticResponse);
    };
  }
  const alwaysGeneral = hasOnRequest || hasPreValidation || hasPreHandler;
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
      if (refused) return failOpen(req, res, data, refused);
    }
    if (alwaysGeneral) void run(req, res, data, withBody);
    else if (withBody) directWithBody(req, res, data);
    else direct(req, res, data);
  };
}
