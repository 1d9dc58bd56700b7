/**
 * TEMPORARY stand-in for express/request.ts and express/response.ts (written in parallel by the request/response
 * work): Express's own prototypes, behind the same function names, so the application and router are measurable now.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Express's `request` prototype for that major (chain includes http.IncomingMessage.prototype). */
export function createRequestPrototype(major: 4 | 5): object {
  return Object.create(require(major === 4 ? 'express4' : 'express').request);
}

/** Express's `response` prototype for that major (chain includes http.ServerResponse.prototype). */
export function createResponsePrototype(major: 4 | 5): object {
  return Object.create(require(major === 4 ? 'express4' : 'express').response);
}
