/**
 * `response_validation` (ServerConfig, per route): how a route's response schema is enforced.
 * - `strict` (DEFAULT_RESPONSE_VALIDATION): the answer is checked (types, required members) and
 *   serialised from the schema; a violation is a 500 problem, one error log line and a count.
 * - `strip`: serialised from the schema only (Fastify's behaviour): undeclared members dropped, wrong
 *   types coerced as fast-json-stringify does, nothing refused.
 * - `off`: the schema types the handler and documents the route; the answer is JSON.stringify'd as is.
 */
export const RESPONSE_VALIDATION_MODES = ['strict', 'strip', 'off'] as const;
export type ResponseValidationMode = (typeof RESPONSE_VALIDATION_MODES)[number];
/** Default `response_validation`: `'strict'`. */
export const DEFAULT_RESPONSE_VALIDATION: ResponseValidationMode = 'strict';
