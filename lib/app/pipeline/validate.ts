/** The validate phase: path / query / header / cookie values and the body against the route's schemas. */
import type { KeelRequest } from '../../http/request.js';
import { ValidationFailure } from '../../http/validation.js';
import type { ValidationIssue } from '../../http/validation-errors.js';
import type { RequestData } from '../handler.js';
import type { CoreState } from './core.js';

/** Routes without cookie parameters never parse the Cookie header for validation. */
const NO_COOKIES: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * Object.assign(target, source) for a source the validator made (a plain object of its own members):
 * a loop, where the builtin call cost ~180 instructions even for an empty source (issue 48).
 */
function assignOwn(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const k in source) target[k] = source[k];
}

/** Validate the request's values and body; coerced values land in `data`. Returns the issues of a 422, if any. */
export function validateRequest(core: CoreState, req: KeelRequest, data: RequestData): ValidationIssue[] | undefined {
  const v = core.validator!({
    pathParams: data.pathParams as Record<string, string>, query: data.query, headers: req.headers,
    cookies: core.needsCookies ? data.cookies : NO_COOKIES, body: data.body, hasBody: data.body !== undefined, files: data.files,
  });
  if (v instanceof ValidationFailure) return v.issues;
  if (!core.flags.prefersParameterExtraction) {
    data.validatedParams = v.params;
    assignOwn(data.pathParams, v.params.path);
    assignOwn(data.query, v.params.query);
  }
  return undefined;
}
