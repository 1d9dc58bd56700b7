/**
 * JSON-RPC requests under the App's work limits (lib/cost.ts, issue 35 item 2): a client past its CPU budget
 * or a server shedding expensive work is refused before the body is read, and what a request costs (parsing,
 * params validation, the methods' synchronous parts, serialising the answer) is charged to its client.
 * Not queued: a method may wait on a database, and must not hold one of the gate's few slots meanwhile.
 */
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { WorkRefusal, type AppWorkGate } from '../cost.js';
import type { KeelRequest, Middleware, NextFunction } from '../request.js';
import { JSON_RPC_SERVER_ERRORS } from './errors.js';

/**
 * A refusal as JSON-RPC says it (an error object, id null: the request was not read) with HTTP's status
 * and `Retry-After`: 429 and -32005 for the client's budget, 503 and -32002 for an overloaded server.
 */
export function sendJsonRpcRefusal(res: ServerResponse, err: WorkRefusal): void {
  const reserved = err.status === 429 ? JSON_RPC_SERVER_ERRORS.LIMIT_EXCEEDED : JSON_RPC_SERVER_ERRORS.RESOURCE_UNAVAILABLE;
  const body = JSON.stringify({
    jsonrpc: '2.0',
    error: { ...reserved, data: { ...err.extensions, detail: err.detail, retry_after: err.retryAfterSeconds } },
    id: null,
  });
  res.statusCode = err.status;
  res.setHeader('Retry-After', String(err.retryAfterSeconds));
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** Connect-style admission of the JSON-RPC endpoint: refuses (see sendJsonRpcRefusal) before the body is read. */
export function jsonRpcAdmission(work: AppWorkGate): Middleware {
  return function keelJsonRpcAdmission(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    try {
      work.gate.admit(work.keyOf(req));
    } catch (err) {
      if (err instanceof WorkRefusal) return sendJsonRpcRefusal(res, err);
      return next(err);
    }
    next();
  };
}

/** Charges the time since `since` (performance.now()) to the request's client; undefined without a gate. */
export type JsonRpcMeter = (since: number) => void;

/** The meter of one request. */
export function meterOf(work: AppWorkGate | undefined, req: KeelRequest): JsonRpcMeter | undefined {
  if (!work) return undefined;
  const key = work.keyOf(req);
  return (since) => work.gate.charge(key, performance.now() - since);
}
