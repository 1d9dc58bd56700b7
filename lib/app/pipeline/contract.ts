/**
 * The serialize phase: a JSON answer with a response schema is written from its compiled contract
 * (lib/http/serializer.ts), under the route's `response_validation`:
 * - strict: checked first; a wrong type or a missing required member is refused (refuse()). A plainly
 *   valid answer to a common schema is checked and written in one pass (lib/http/checked-serializer.ts).
 * - strip: serialised from the schema only (fast-json-stringify's coercion, as Fastify does).
 * - off: no contract (JSON.stringify, as before).
 * Text, bytes, streams and empty bodies are the handler's own choice of representation: not JSON, not checked.
 */
import type { ServerResponse } from 'node:http';
import type { ErrorObject } from 'ajv';
import type { Logger } from 'pino';
import { problemFor, sendProblem } from '../../http/problem.js';
import type { ResponseValidationMode } from '../../http/response-validation.js';
import { compileResponseContract, type ResponseContract } from '../../http/serializer.js';
import { observe } from '../../observability/observe.js';
import type { RouteDefinition } from '../route-definition.js';

/** A route's compiled contracts. */
export interface RouteContract {
  readonly mode: 'strict' | 'strip';
  /** `response`: every success status without its own `responses` entry. */
  readonly success: ResponseContract | null;
  /** `responses` by status (null: answered without content); null when the route gives none. */
  readonly byStatus: Map<number, ResponseContract | null> | null;
  /** Log (warn) a status `responses` does not list: outside production, as before. */
  readonly warnUndeclared: boolean;
}

/** What a refused answer leaves on its response, for `app.inject()` (lib/app/inject.ts) to surface. */
export const CONTRACT_VIOLATION: unique symbol = Symbol.for('keel.responseContractViolation');

export interface ContractViolation {
  /** `METHOD /pattern` of the route. */
  route: string;
  status: number;
  /** `response` or `responses.<status>`: which schema the answer broke. */
  schema: string;
  errors: { path: string; message: string }[];
}

/** Build the route's contracts once (null: no schema, or `response_validation: 'off'`). */
export function compileRouteContract(route: RouteDefinition, mode: ResponseValidationMode, warnUndeclared: boolean): RouteContract | null {
  if (mode === 'off' || (!route.response && !route.responses)) return null;
  // The one pass checks as it writes: only a route that checks (strict) uses it.
  const options = { onePass: mode === 'strict' };
  return {
    mode,
    success: route.response ? compileResponseContract(route.response, options) : null,
    byStatus: route.responses
      ? new Map(Object.entries(route.responses).map(([s, schema]) => [Number(s), schema ? compileResponseContract(schema, options) : null]))
      : null,
    warnUndeclared,
  };
}

/** The value is written as JSON (not text, bytes, a stream or nothing). */
export function isJsonContent(content: unknown): boolean {
  if (content === undefined || content === null || typeof content === 'string' || typeof content === 'function') return false;
  if (typeof content !== 'object') return true;
  return !(content instanceof Uint8Array) && !(Symbol.asyncIterator in content) && typeof (content as { pipe?: unknown }).pipe !== 'function';
}

/** The contract for `status` (null: none; the status `responses` does not list is logged outside production). */
function contractFor(c: RouteContract, status: number, logger: Logger, path: string): ResponseContract | null {
  if (c.byStatus) {
    const declared = c.byStatus.get(status);
    if (declared !== undefined) return declared;
    if (!(status < 300 && c.success) && c.warnUndeclared) {
      logger.warn({ route: path, status }, 'handler answered a status its responses do not list');
    }
  }
  return status < 300 ? c.success : null;
}

/** Which schema contractFor() chose, as the log names it (only for a refused answer: no tuple per request). */
function schemaName(c: RouteContract, status: number): string {
  return c.byStatus?.get(status) ? `responses.${status}` : 'response';
}

/** Returned by serializeWithContract() when the answer was refused (and the 500 already sent). */
export const REFUSED: unique symbol = Symbol('refused');

/**
 * The JSON text of `content` for `status` under the route's contract; undefined when no contract
 * applies (the writer uses JSON.stringify); REFUSED when the answer broke its schema and a 500
 * problem went out instead.
 */
export function serializeWithContract(
  c: RouteContract, res: ServerResponse, label: string, path: string, logger: Logger, status: number, content: unknown,
): string | undefined | typeof REFUSED {
  if (!isJsonContent(content)) return undefined;
  const contract = contractFor(c, status, logger, path);
  if (!contract) return undefined;
  if (c.mode === 'strict') {
    // One pass for a plainly valid answer; anything else is checked and written as below.
    if (contract.checked !== undefined) {
      const json = contract.checked(content);
      if (json !== undefined) return json;
    }
    const errors = contract.check(content);
    if (errors) return refuse(res, label, path, logger, status, schemaName(c, status), errors);
  }
  try {
    return contract.serialize(content);
  } catch (err) {
    // fast-json-stringify found no branch of an anyOf / oneOf that fits, or a value it cannot write.
    return refuse(res, label, path, logger, status, schemaName(c, status), [{ instancePath: '', message: (err as Error).message } as ErrorObject]);
  }
}

/**
 * The answer broke its schema: one error line naming route, status, schema and errors; the count;
 * a bare 500 problem to the client (nothing of the answer or the schema leaks).
 */
function refuse(res: ServerResponse, label: string, path: string, logger: Logger, status: number, schema: string, errors: ErrorObject[]): typeof REFUSED {
  const violation: ContractViolation = {
    route: label, status, schema,
    errors: errors.slice(0, 20).map((e) => ({ path: e.instancePath || '/', message: e.message ?? e.keyword })),
  };
  logger.error({ route: label, status, schema, errors: violation.errors }, `response does not match its response schema (${schema}); answered 500 instead`);
  observe.responseContract(path);
  (res as ServerResponse & { [CONTRACT_VIOLATION]?: ContractViolation })[CONTRACT_VIOLATION] = violation;
  sendProblem(res, problemFor('KEEL_INTERNAL'));
  return REFUSED;
}
