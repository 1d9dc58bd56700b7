/**
 * A route's compiled core: everything the phases of a request need, decided once when the route is
 * built (lib/app/pipeline.ts). Each phase (read.ts, validate.ts, handle.ts, respond.ts, fail.ts) is a
 * plain function of this state and the request, so a request's life reads phase by phase, the way
 * fastify splits handleRequest / reply / validation.
 */
import type { Logger } from 'pino';
import type { JsonPoisoning } from '../../http/json-parse.js';
import type { MultipartLimits } from '../../http/multipart.js';
import type { ChargedParse } from '../body-cost.js';
import { handlerFlags, type RequestData } from '../handler.js';
import type { PhaseHooks } from '../hooks.js';
import type { RouteDefinition } from '../route-definition.js';
import { compileRequestValidator } from '../../http/validation.js';
import type { ResponseValidationMode } from '../../http/response-validation.js';
import { compileRouteContract, type RouteContract } from './contract.js';

export interface PipelineContext {
  hooks: PhaseHooks;
  /** Effective body cap for this route (bytes; null = unlimited). */
  maxBodySize: number | null;
  /** What `__proto__` / `constructor.prototype` keys in a JSON body get (secure-json-parse options). */
  jsonPoisoning?: JsonPoisoning;
  /** ServerConfig.multipart_max_*. */
  multipartLimits?: MultipartLimits;
  /** Body parsing charged to the client's CPU budget (work_limits on: lib/app/body-cost.ts). */
  chargedParse?: ChargedParse;
  logger: Logger;
  /** How the route's response schemas are enforced: the route's own `response_validation`, else the App's. */
  responseValidation: ResponseValidationMode;
  /** Warn about a status `responses` does not list (outside production). */
  warnUndeclaredStatus: boolean;
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
  readonly multipartLimits: MultipartLimits | undefined;
  readonly chargedParse: ChargedParse | undefined;
  readonly validator: ReturnType<typeof compileRequestValidator>;
  /** `METHOD /pattern`, as logs name the route. */
  readonly label: string;
  /** The response schemas, compiled (null: none, or `response_validation: 'off'`). */
  readonly contract: RouteContract | null;
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
    multipartLimits: ctx.multipartLimits,
    chargedParse: ctx.chargedParse,
    validator: flags.prefersParameterExtraction
      ? compileRequestValidator([], route.body, route.bodyRequired, route.files)
      : compileRequestValidator(route.params, route.body, route.bodyRequired, route.files),
    label: `${route.methods.join('|')} ${route.path}`,
    contract: compileRouteContract(route, route.responseValidation ?? ctx.responseValidation, ctx.warnUndeclaredStatus),
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
