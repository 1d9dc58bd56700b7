/**
 * JSON-RPC under the App's work limits (lib/server/cost.ts, issue 35 item 2): a client past its CPU budget or a
 * server shedding expensive work is refused before the body is read, and what a batch costs (parsing, params
 * validation, the methods' synchronous parts, serialising the answer) is charged to its client. A single call
 * is charged nothing, as a route's handler is not: one request of bounded size under the request rate. A
 * batch is up to max_batch_size calls in one request, which the request rate cannot see.
 * Not queued: a method may wait on a database, and must not hold one of the gate's few slots meanwhile.
 */
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { WorkRefusal, type AppWorkGate } from '../server/cost.js';
import type { KeelRequest, Middleware, NextFunction } from '../http/request.js';
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

/** JSON's insignificant whitespace (RFC 8259 §2) and a UTF-8 byte order mark, skipped to find the first token. */
const SKIPPED = new Set([0x20, 0x09, 0x0a, 0x0d, 0xef, 0xbb, 0xbf]);

/** True when the body's first token is `[`: a batch (JSON-RPC §6). */
export function isBatchBody(raw: Buffer): boolean {
  for (let i = 0; i < raw.length; i++) if (!SKIPPED.has(raw[i]!)) return raw[i] === 0x5b;
  return false;
}

/** The meter of one request: undefined without a gate, or for a single call (see above). */
export function meterOf(work: AppWorkGate | undefined, req: KeelRequest, raw: Buffer): JsonRpcMeter | undefined {
  if (!work || !isBatchBody(raw)) return undefined;
  const key = work.keyOf(req);
  return (since) => work.gate.charge(key, performance.now() - since);
}
