/**
 * Batched operations (the array body of Apollo's batch HTTP link and graphql-http-ws clients): a POST
 * whose JSON body is an array of GraphQL requests, answered with an array of their responses in the
 * same order. GraphQL over HTTP defines one operation per request, so a route takes batches only when
 * it says so (`batching`), and a batch is bounded: at most `max_operations` operations, each parsed,
 * validated, limited and executed as if sent alone (persisted queries included), and the whole batch
 * admitted, queued and charged to the client as one piece of work.
 */
import { HttpError } from '../http/errors.js';
import type { JsonPoisoning } from '../http/json-parse.js';
import { parsedJsonBody } from './request-body.js';

/** Most operations in one batch when a route takes batches without saying how many: 10. */
export const DEFAULT_GRAPHQL_MAX_BATCH = 10;

export interface GraphqlBatching {
  /** Most operations in one batch; more is a 400 problem. Default DEFAULT_GRAPHQL_MAX_BATCH (10). */
  max_operations?: number;
}

/**
 * The operations of a batch body, or undefined when the body is not a JSON array (served as one
 * request). An empty batch, one over the bound, or an item that is not an object is a 400 problem.
 */
export function batchOf(text: string, contentType: string | undefined, maxOperations: number, poisoning: JsonPoisoning): Array<Record<string, unknown>> | undefined {
  if (!text.trimStart().startsWith('[')) return undefined;
  // Not JSON, or malformed: answered as a single request would be.
  const value = parsedJsonBody(text, contentType, poisoning)?.value;
  if (!Array.isArray(value)) return undefined;
  if (value.length === 0) throw new HttpError(400, 'A GraphQL batch must hold at least one operation');
  if (value.length > maxOperations) throw new HttpError(400, `A GraphQL batch may hold at most ${maxOperations} operations (it holds ${value.length})`, { extensions: { limit: maxOperations } });
  if (!value.every((v) => v !== null && typeof v === 'object' && !Array.isArray(v))) throw new HttpError(400, 'Each operation of a GraphQL batch must be a JSON object');
  return value as Array<Record<string, unknown>>;
}

/** One operation's answer inside a batch: its GraphQL response text, or a transport error's detail. */
export type BatchPart = { answer: string | null } | { detail: string };

/** The body of a batch's answer: each operation's response in order (a transport error as `errors`). */
export function batchBody(parts: readonly BatchPart[]): string {
  return `[${parts.map((p) => ('detail' in p ? JSON.stringify({ errors: [{ message: p.detail }] }) : p.answer ?? 'null')).join(',')}]`;
}
