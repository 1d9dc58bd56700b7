/** The validate phase: path / query / header / cookie values and the body against the route's schemas. */
import type { KeelRequest } from '../../http/request.js';
import { ValidationFailure } from '../../http/validation.js';
import type { ValidationIssue } from '../../http/validation-errors.js';
import type { RequestData } from '../handler.js';
import type { CoreState } from './core.js';

/** Routes without cookie parameters never parse the Cookie header for validation. */
const NO_COOKIES: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** Validate the request's values and body; coerced values land in `data`. Returns the issues of a 422, if any. */
export function validateRequest(core: CoreState, req: KeelRequest, data: RequestData): ValidationIssue[] | undefined {
  const v = core.validator!({
    pathParams: data.pathParams as Record<string, string>, query: data.query, headers: req.headers,
    cookies: core.needsCookies ? data.cookies : NO_COOKIES, body: data.body, hasBody: data.body !== undefined, files: data.files,
  });
  if (v instanceof ValidationFailure) return v.issues;
  if (!core.flags.prefersParameterExtraction) {
    data.validatedParams = v.params;
    Object.assign(data.pathParams, v.params.path);
    Object.assign(data.query, v.params.query);
  }
  return undefined;
}
