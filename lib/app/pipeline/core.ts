/**
 * A route's compiled core: everything the phases of a request need, decided once when the route is
 * built (lib/app/pipeline.ts). Each phase (read.ts, validate.ts, handle.ts, respond.ts, fail.ts) is a
 * plain function of this state and the request, so a request's life reads phase by phase, the way
 * fastify splits handleRequest / reply / validation.
 */
import type { Logger } from 'pino';
import type { JsonPoisoning } from '../../http/json-parse.js';
import { handlerFlags, type RequestData } from '../handler.js';
import type { PhaseHooks } from '../hooks.js';
import type { RouteDefinition } from '../route-definition.js';
import { compileRequestValidator, compileSchema } from '../../http/validation.js';

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

/** The per-route state the phases share; built once by compileCoreState(). */
export interface CoreState {
  readonly route: RouteDefinition;
  readonly path: string;
  readonly handler: RouteDefinition['handler'];
  readonly flags: ReturnType<typeof handlerFlags>;
  readonly hooks: PhaseHooks;
  readonly logger: Logger;
  readonly maxBodySize: number | null;
  readonly jsonPoisoning: JsonPoisoning | undefined;
  readonly validator: ReturnType<typeof compileRequestValidator>;
  readonly responseCheck: ReturnType<typeof compileSchema> | null;
  /** `responses`: one check per declared status (null: no content, nothing to check). */
  readonly statusChecks: Map<number, ReturnType<typeof compileSchema> | null> | null;
  readonly hasOnRequest: boolean;
  readonly hasPreValidation: boolean;
  readonly hasPreHandler: boolean;
  readonly hasOnResponse: boolean;
  readonly hasOnError: boolean;
  /** A JSON body is declared: parse it as JSON whatever the Content-Type says. */
  readonly expectJson: boolean;
  /** The handler reads the raw JSON text itself and no body schema needs the parsed value. */
  readonly skipJsonParse: boolean;
  /** Routes without cookie parameters never parse the Cookie header for validation. */
  readonly needsCookies: boolean;
}

export function compileCoreState(route: RouteDefinition, ctx: PipelineContext): CoreState {
  const flags = handlerFlags(route.handler);
  const { hooks } = ctx;
  return {
    route,
    path: route.path,
    handler: route.handler,
    flags,
    hooks,
    logger: ctx.logger,
    maxBodySize: ctx.maxBodySize,
    jsonPoisoning: ctx.jsonPoisoning,
    validator: flags.prefersParameterExtraction
      ? compileRequestValidator([], route.body, route.bodyRequired, route.files)
      : compileRequestValidator(route.params, route.body, route.bodyRequired, route.files),
    responseCheck: ctx.checkResponses && route.response ? compileSchema(route.response) : null,
    statusChecks: ctx.checkResponses && route.responses
      ? new Map(Object.entries(route.responses).map(([s, schema]) => [Number(s), schema ? compileSchema(schema) : null]))
      : null,
    hasOnRequest: hooks.on_request.length > 0,
    hasPreValidation: hooks.pre_validation.length > 0,
    hasPreHandler: hooks.pre_handler.length > 0,
    hasOnResponse: hooks.on_response.length > 0,
    hasOnError: hooks.on_error.length > 0,
    expectJson: route.body !== undefined,
    skipJsonParse: flags.prefersRawJsonBody && !route.body,
    needsCookies: route.params.some((p) => p.source === 'cookie'),
  };
}
