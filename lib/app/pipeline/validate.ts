/** The validate phase: path / query / header / cookie values and the body against the route's schemas. */
import type { KeelRequest } from '../../http/request.js';
import type { RequestData } from '../handler.js';
import type { CoreState } from './core.js';

/** Routes without cookie parameters never parse the Cookie header for validation. */
const NO_COOKIES: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** Validate the request's values and body; coerced values land in `data`. Throws a 422. */
export function validateRequest(core: CoreState, req: KeelRequest, data: RequestData): void {
  const v = core.validator!({
    pathParams: data.pathParams as Record<string, string>, query: data.query, headers: req.headers,
    cookies: core.needsCookies ? data.cookies : NO_COOKIES, body: data.body, hasBody: data.body !== undefined, files: data.files,
  });
  if (!core.flags.prefersParameterExtraction) {
    data.validatedParams = v.params;
    Object.assign(data.pathParams, v.params.path);
    Object.assign(data.query, v.params.query);
  }
}
