/**
 * One GraphQL subscription exchange over the `graphql-transport-ws` protocol, recorded as a
 * GraphQlSubscriptionSnapshot. Whatever the server does (refuses the upgrade, never acknowledges,
 * closes early, sends garbage) ends up in `errors`; the function never hangs past `timeoutMs` and
 * never throws for a misbehaving server.
 *
 * Protocol: https://github.com/enisdenjo/graphql-ws/blob/master/PROTOCOL.md
 */
import { randomUUID } from 'node:crypto';
import type WsSocket from 'ws';
import { lazyRequire } from '../lib/http/lazy-require.js';
import { missingPackages, missingPackagesError } from '../lib/ops/packages.js';
import type { GraphQlSubscriptionSnapshot } from '../lib/records/graphql.js';

/** The WebSocket subprotocol of graphql-ws. */
export const GRAPHQL_TRANSPORT_WS = 'graphql-transport-ws';
/** Default time budget for the whole exchange, milliseconds. */
export const DEFAULT_SUBSCRIPTION_TIMEOUT_MS = 5000;

export interface GraphQlSubscriptionOptions {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  /** Operation id sent in `subscribe` (default: a random UUID). */
  operationId?: string;
  /** Budget for the whole exchange (default DEFAULT_SUBSCRIPTION_TIMEOUT_MS = 5000). */
  timeoutMs?: number;
  /** `connection_init` payload (e.g. an auth token). */
  connectionParams?: Record<string, unknown>;
  /** Extra upgrade request headers (e.g. Authorization). */
  headers?: Record<string, string>;
  /**
   * After the first `next`, wait for the server's `complete` (default true). With false the client
   * completes the operation itself right after the first event; use it for endless subscriptions.
   */
  waitForComplete?: boolean;
}

/** A protocol-level problem seen during the exchange (GraphQL errors from `error` frames are kept as sent). */
export interface SubscriptionProblem {
  message: string;
  [key: string]: unknown;
}

/**
 * Subscribe, record the first event, and report what happened.
 *
 * @example
 * const snap = await graphqlSubscriptionSnapshot('ws://127.0.0.1:3000/graphql', {
 *   query: 'subscription { ticks }',
 *   timeoutMs: 2000,
 * });
 * snap.acknowledged; // true
 */
/** The `ws` client (an optional peer dependency of keel), loaded by the first snapshot. */
const loadWs = lazyRequire<typeof WsSocket>('ws');

export function graphqlSubscriptionSnapshot(url: string | URL, options: GraphQlSubscriptionOptions): Promise<GraphQlSubscriptionSnapshot> {
  if (missingPackages(['ws@8']).length) return Promise.reject(missingPackagesError('graphqlSubscriptionSnapshot (keel/harness)', ['ws@8']));
  const WebSocket = loadWs();
  const operationId = options.operationId ?? randomUUID();
  const timeoutMs = options.timeoutMs ?? DEFAULT_SUBSCRIPTION_TIMEOUT_MS;
  const waitForComplete = options.waitForComplete ?? true;
  const snap: GraphQlSubscriptionSnapshot = { operation_id: operationId, acknowledged: false, event: null, errors: [], complete_received: false };
  let gotEvent = false;

  return new Promise((resolve) => {
    let settled = false;
    let ws: WsSocket;
    const finish = (problem?: SubscriptionProblem) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (problem) snap.errors.push(problem);
      try {
        if (ws.readyState === WebSocket.OPEN) ws.close(1000, 'done');
        else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      } catch {
        // Closing is best effort; the snapshot is already complete.
      }
      resolve(snap);
    };
    const timer = setTimeout(() => {
      // An event followed by silence is a normal endless subscription, not an error.
      if (gotEvent) finish();
      else finish({ message: `Timed out after ${timeoutMs} ms ${snap.acknowledged ? 'waiting for the first event' : 'waiting for connection_ack'}` });
    }, timeoutMs);

    try {
      ws = new WebSocket(url, GRAPHQL_TRANSPORT_WS, { headers: options.headers, handshakeTimeout: timeoutMs });
    } catch (err) {
      // An invalid URL: ws throws synchronously.
      ws = undefined as unknown as WsSocket;
      settled = true;
      clearTimeout(timer);
      snap.errors.push({ message: `Could not connect: ${(err as Error).message}` });
      resolve(snap);
      return;
    }
    const send = (msg: Record<string, unknown>) => ws.send(JSON.stringify(msg));

    ws.on('unexpected-response', (_req, res) => {
      finish({ message: `Upgrade refused with HTTP ${res.statusCode}`, status: res.statusCode });
      res.resume();
    });
    ws.on('error', (err) => finish({ message: `WebSocket error: ${err.message}` }));
    ws.on('open', () => {
      if (ws.protocol !== GRAPHQL_TRANSPORT_WS) {
        finish({ message: `Server did not select the ${GRAPHQL_TRANSPORT_WS} subprotocol (got "${ws.protocol}")` });
        return;
      }
      send({ type: 'connection_init', ...(options.connectionParams ? { payload: options.connectionParams } : {}) });
    });
    ws.on('close', (code, reason) => {
      if (settled) return;
      // A close after our operation completed is the server tidying up; anything earlier is a problem.
      if (snap.complete_received) finish();
      else finish({ message: `Connection closed early with ${code}${reason.length ? `: ${reason.toString()}` : ''}`, code });
    });
    ws.on('message', (data, isBinary) => {
      if (settled) return;
      let msg: { type?: unknown; id?: unknown; payload?: unknown };
      try {
        if (isBinary) throw new Error('binary frame');
        msg = JSON.parse(data.toString());
      } catch {
        finish({ message: 'Server sent a frame that is not a JSON message' });
        return;
      }
      switch (msg.type) {
        case 'connection_ack':
          snap.acknowledged = true;
          send({
            id: operationId,
            type: 'subscribe',
            payload: { query: options.query, ...(options.variables ? { variables: options.variables } : {}), ...(options.operationName ? { operationName: options.operationName } : {}) },
          });
          break;
        case 'ping':
          send({ type: 'pong' });
          break;
        case 'pong':
          break;
        case 'next':
          if (msg.id !== operationId) break;
          if (!gotEvent) {
            gotEvent = true;
            snap.event = msg.payload ?? null;
            if (!waitForComplete) {
              send({ id: operationId, type: 'complete' });
              finish();
            }
          }
          break;
        case 'error':
          if (msg.id !== operationId) break;
          // The `error` payload is a list of GraphQL errors; the operation is over (no complete follows).
          if (Array.isArray(msg.payload)) snap.errors.push(...msg.payload);
          else snap.errors.push({ message: 'Server sent an error frame', payload: msg.payload });
          finish();
          break;
        case 'complete':
          if (msg.id !== operationId) break;
          snap.complete_received = true;
          finish();
          break;
        default:
          finish({ message: `Unexpected message type ${JSON.stringify(msg.type)}` });
      }
    });
  });
}
