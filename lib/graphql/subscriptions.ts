/**
 * GraphQL over WebSocket with the `graphql-transport-ws` subprotocol (graphql-ws's `useServer`):
 * `connection_init` → `connection_ack`, `subscribe` → `next`… → `complete`, protocol errors as `error`.
 * Every operation is parsed and validated here with the route's limit rules (introspection, depth,
 * complexity; through lib/graphql/documents.ts), so the WebSocket path enforces exactly what the HTTP path does.
 */
import { execute, GraphQLError, type DocumentNode, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import { handleProtocols } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from 'pino';
import { isExpectedNetworkError, networkErrorLog, type NetworkErrorLog } from '../ops/net-errors.js';
import type { KeelRequest } from '../http/request.js';
import type { ClientBudget } from '../server/client-budget.js';
import { guardedUpgrade, maxConnectionsOption, DEFAULT_MAX_PAYLOAD, type UpgradeHandler } from '../ws/upgrade.js';
import { UpgradeRejection, type UpgradeGuard } from '../ws/guard.js';
import { fairnessOptions, type RateErrorFrame, type WebSocketFairness, type WebSocketFairnessOptions } from '../ws/fairness.js';
import { HttpError } from '../http/errors.js';
import { MAX_JSON_DEPTH, valueDepthExceeds } from '../http/content.js';
import { formatGraphqlError } from './http.js';
import { DocumentCache, isRejected, type DocumentCacheOptions } from './documents.js';
import type { GraphqlLimits } from './limits.js';
import { withoutSuggestions } from './suggestions.js';
import { WorkRefusal, type AppWorkGate } from '../server/cost.js';
import { DEFAULT_GRAPHQL_MAX_RESPONSE_BYTES, responseTooLarge, resultExceeds } from './budget.js';

/** Time a client has to send `connection_init` before the server closes with 4408, ms. */
export const DEFAULT_CONNECTION_INIT_WAIT_TIMEOUT = 3_000;
/**
 * Operations one connection may have open at once (subscriptions, and queries / mutations until they
 * answer). Each holds an iterator, a listener and graphql-js state; without a cap a few sockets
 * subscribing in a loop exhausted the heap (issue 13: 5 × 30,000 subscriptions, 4.2 GB).
 */
export const DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION = 100;

export interface GraphqlWsOptions {
  limits?: Partial<GraphqlLimits>;
  /** The budget of each client across its sockets (lib/server/client-budget.ts); an App passes its own. Default none. */
  clientBudget?: ClientBudget;
  /** Bounds of the cache of parsed and validated queries, and `maxTokens`. Default: DocumentCache's defaults. */
  documentCache?: DocumentCacheOptions;
  /** Checks run before the handshake (server auth, origin, request id). Default none. */
  guards?: readonly UpgradeGuard[];
  /** Largest message, bytes (ws closes with 1009 above it). Default DEFAULT_MAX_PAYLOAD (1 MiB). */
  maxPayload?: number;
  /** connection_init deadline, ms. Default DEFAULT_CONNECTION_INIT_WAIT_TIMEOUT (3000). */
  connectionInitWaitTimeout?: number;
  /** Keep-alive ping interval, ms; 0 disables. Default 12000 (graphql-ws's default). */
  keepAlive?: number;
  /**
   * Operations open at once per connection; one more is refused with an `error` message
   * (SUBSCRIPTION_LIMIT_EXCEEDED) and the connection stays open. Default DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION (100).
   */
  maxSubscriptionsPerConnection?: number;
  /** Open connections at once; more are refused with 503 before the handshake. Default DEFAULT_MAX_CONNECTIONS (1000). */
  maxConnections?: number;
  /**
   * Checked with the upgrade request for every operation a client starts (`subscribe`): a refusal ends
   * that operation with an `error` message and the connection stays open. An App passes its server-level
   * rate limit, so operations over one socket draw from the client's HTTP bucket instead of bypassing it.
   * Default none.
   */
  operationGuard?: UpgradeGuard;
  /**
   * Where a lost client (EPIPE, ECONNRESET while `next` frames are queued) is noted: one debug line,
   * throttled with a count (lib/ops/net-errors.ts). Default none: such sends resolve silently.
   */
  logger?: Pick<Logger, 'debug'>;
  /**
   * Per-socket message rate and send-buffer bound (keel/ws fairness). Under `onRateExceeded: 'error'`,
   * a refused `subscribe` gets an `error` for its id (RATE_LIMIT_EXCEEDED); other refused messages are
   * dropped. Default: DEFAULT_WS_MESSAGES_PER_SECOND (100), burst 200, close 1008; 1 MiB, close 1013.
   */
  fairness?: WebSocketFairnessOptions;
  /**
   * The gate of expensive work (lib/server/cost.ts): each query / mutation is admitted (refused with an `error`
   * for its id: CPU_BUDGET_EXCEEDED or OVERLOADED, with `retryAfter` seconds), queued and charged to
   * the client of the upgrade request. Subscription events are bounded by the fairness options instead. Default none.
   */
  workGate?: AppWorkGate;
}

/** The GraphQL error of a refusal by the work gate: its reason as a code, Retry-After as `retryAfter`. */
function workRefusalError(err: WorkRefusal): GraphQLError {
  const code = err.status === 429 ? 'CPU_BUDGET_EXCEEDED' : 'OVERLOADED';
  return new GraphQLError(err.detail ?? err.message, { extensions: { code, retryAfter: err.retryAfterSeconds } });
}

/**
 * graphql-transport-ws has no frame for "your message was dropped" outside an operation: a refused
 * `subscribe` is answered with an `error` for its id, so the client is not left waiting for it.
 */
function rateErrorFrame(f: WebSocketFairness): RateErrorFrame {
  return function subscribeRefusal(data: Buffer, isBinary: boolean): string | undefined {
    if (isBinary) return undefined;
    let message: { type?: unknown; id?: unknown };
    try {
      message = JSON.parse(data.toString('utf8')) as typeof message;
    } catch {
      return undefined;
    }
    if (message?.type !== 'subscribe' || typeof message.id !== 'string') return undefined;
    return JSON.stringify({
      id: message.id, type: 'error',
      payload: [{ message: `Message rate limit exceeded: at most ${f.messagesPerSecond} messages per second (burst ${f.messageBurst})`, extensions: { code: 'RATE_LIMIT_EXCEEDED' } }],
    });
  };
}

/**
 * The `error` message of an operation `operationGuard` refused: a 429 is RATE_LIMIT_EXCEEDED with the
 * seconds to wait (the refusal's Retry-After), another refusal OPERATION_REFUSED with its status; an
 * unexpected failure says nothing of itself.
 */
function refusal(err: unknown): GraphQLError {
  const status = err instanceof UpgradeRejection || err instanceof HttpError ? err.status : 500;
  const headers = err instanceof UpgradeRejection ? err.headers : err instanceof HttpError ? err.headers : {};
  if (status === 429) {
    const retry = Number(headers['retry-after'] ?? headers['Retry-After']);
    return new GraphQLError('Rate limit exceeded: too many operations from this client', {
      extensions: { code: 'RATE_LIMIT_EXCEEDED', ...(Number.isFinite(retry) ? { retryAfter: retry } : {}) },
    });
  }
  if (status >= 500) return new GraphQLError('Internal server error', { extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  return new GraphQLError('Operation refused', { extensions: { code: 'OPERATION_REFUSED', status } });
}

/**
 * An upgrade handler speaking graphql-transport-ws for `schema`; mount it on the GraphQL route's path.
 *
 * @example
 * const upgrade = createGraphqlWsUpgradeHandler(builtinSchema('full'));
 * server.on('upgrade', (req, socket, head) => upgrade(req, socket, head));
 */
export function createGraphqlWsUpgradeHandler(schema: GraphQLSchema, options: GraphqlWsOptions = {}): UpgradeHandler {
  const limits: GraphqlLimits = {
    introspection_enabled: options.limits?.introspection_enabled ?? true,
    depth_limit: options.limits?.depth_limit ?? null,
    complexity_limit: options.limits?.complexity_limit ?? null,
    // The response-size estimate (lib/graphql/budget.ts) refuses the alias amplification here too (issue 26 item 2).
    max_response_bytes: options.limits?.max_response_bytes === undefined ? DEFAULT_GRAPHQL_MAX_RESPONSE_BYTES : options.limits.max_response_bytes,
  };
  const maxResponseBytes = limits.max_response_bytes ?? null;
  const maxSubscriptions = options.maxSubscriptionsPerConnection ?? DEFAULT_MAX_SUBSCRIPTIONS_PER_CONNECTION;
  if (!Number.isInteger(maxSubscriptions) || maxSubscriptions < 1) {
    throw new TypeError(`maxSubscriptionsPerConnection must be a positive integer, got ${String(options.maxSubscriptionsPerConnection)}`);
  }
  const maxConnections = maxConnectionsOption(options.maxConnections);
  const fairness = fairnessOptions(options.fairness);
  const operationGuard = options.operationGuard;
  const gate = options.workGate;
  // With introspection disabled, no message suggests names of the schema ("Did you mean …").
  const hide = (e: GraphQLError): GraphQLError => (limits.introspection_enabled ? e : withoutSuggestions(e));
  // The same cache as the HTTP path keeps: parse + validation (with the limits) once per query text.
  const documents = new DocumentCache(schema, limits, options.documentCache);
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxPayload ?? DEFAULT_MAX_PAYLOAD,
    // Only graphql-transport-ws; a client offering nothing we speak gets no subprotocol and
    // graphql-ws closes with 4406 (Subprotocol not acceptable).
    handleProtocols: (offered: Set<string>) => handleProtocols(offered),
  });
  useServer<Record<string, unknown> | undefined, { request: KeelRequest }>(
    {
      schema,
      connectionInitWaitTimeout: options.connectionInitWaitTimeout ?? DEFAULT_CONNECTION_INIT_WAIT_TIMEOUT,
      onSubscribe: async (ctx, _id, payload) => {
        // graphql-ws has entered this operation's id in ctx.subscriptions already; it leaves on
        // `complete`, `error`, or when the socket closes. Refused: an `error` for this id only
        // (PROTOCOL.md, Error: "the operation … terminates"), so the client can complete others.
        let open = 0;
        for (const _ in ctx.subscriptions) open++;
        if (open > maxSubscriptions) {
          return [new GraphQLError(`Too many operations on this connection: at most ${maxSubscriptions} may be open at once`, {
            extensions: { code: 'SUBSCRIPTION_LIMIT_EXCEEDED', limit: maxSubscriptions },
          })];
        }
        if (operationGuard) {
          try {
            await operationGuard(ctx.extra.request);
          } catch (err) {
            return [refusal(err)];
          }
        }
        if (gate) {
          try {
            gate.gate.admit(gate.keyOf(ctx.extra.request));
          } catch (err) {
            if (err instanceof WorkRefusal) return [workRefusalError(err)];
            throw err;
          }
        }
        // graphql-ws parsed the message (V8's JSON.parse does not recurse); graphql-js's variable
        // coercion does, so the HTTP path's nesting rule holds here too (the walk stops at the limit).
        if (valueDepthExceeds(payload.variables, MAX_JSON_DEPTH)) {
          return [new GraphQLError(`JSON nesting exceeds the limit of ${MAX_JSON_DEPTH} levels`, { extensions: { code: 'BAD_REQUEST', limit: MAX_JSON_DEPTH } })];
        }
        let document: DocumentNode | readonly GraphQLError[];
        try {
          document = documents.prepare(payload.query, payload.variables);
        } catch {
          return [new GraphQLError('Query cannot be parsed')];
        }
        if (isRejected(document)) return document;
        return {
          schema,
          document,
          operationName: payload.operationName,
          variableValues: payload.variables,
          contextValue: { req: ctx.extra.request },
        };
      },
      // Queries and mutations through the work gate: queued, measured, charged to the upgrade's client.
      execute: gate ? (args: ExecutionArgs) => gatedExecute(gate, args) : undefined,
      onNext: (_ctx, _id, _payload, _args, result) => {
        // The answer cap after execution, as over HTTP (issue 35 item 4): the estimate before execution
        // cannot see what resolvers return (30 stored 900 KB titles under 20 aliases), and graphql-ws
        // serialises the whole `next` message at once (a RangeError past V8's string limit, an 80 MB
        // frame below it). Counted up to the limit (lib/http/json-size.ts), never serialised to learn it.
        if (maxResponseBytes !== null && resultExceeds(result, maxResponseBytes)) {
          return { data: null, errors: [hide(responseTooLarge(maxResponseBytes)).toJSON()] };
        }
        if (!result.errors?.length) return undefined;
        return { ...result, errors: result.errors.map((e) => hide(formatGraphqlError(e) as GraphQLError).toJSON()) };
      },
      onError: (_ctx, _id, _payload, errors) => (limits.introspection_enabled ? undefined : errors.map((e) => withoutSuggestions(e).toJSON())),
    },
    wss,
    options.keepAlive,
  );
  const lost = options.logger ? networkErrorLog(options.logger) : undefined;
  return guardedUpgrade(wss, options.guards ?? [], (ws, req) => {
    quietSends(ws, lost);
    wss.emit('connection', ws, req);
  }, maxConnections, fairness, rateErrorFrame(fairness), options.clientBudget);
}

/** graphql-js `execute` run by the work gate; a full queue answers that operation with an OVERLOADED error. */
async function gatedExecute(g: AppWorkGate, args: ExecutionArgs): Promise<Awaited<ReturnType<typeof execute>>> {
  const req = (args.contextValue as { req?: KeelRequest } | undefined)?.req;
  const key = req ? g.keyOf(req) : 'unknown';
  try {
    return (await g.gate.run(key, () => execute(args)))!;
  } catch (err) {
    if (err instanceof WorkRefusal) return { errors: [workRefusalError(err)] };
    throw err;
  }
}

/**
 * graphql-ws rejects a `next` whose send failed, and its message loop then prints the error with its
 * stack through console.error, once per queued frame: a subscription storm whose client hung up wrote
 * 2,658 EPIPE traces (issue 26). A send that failed because the client left is noted (one throttled
 * debug line) and never reaches graphql-ws; the socket's 'close' ends the operations.
 *
 * graphql-ws also waits for each frame to be flushed before taking the next event, so a client that
 * stopped reading held its events in the pub/sub's queues (up to `maxQueued` per subscription, 100
 * subscriptions per socket) instead of in its socket. Its send is settled once the frame is handed to
 * the socket: what waits for a slow reader is then its send buffer, bounded by the route's fairness
 * (`maxBufferedBytes`, lib/ws/fairness.ts: close 1013 or drop).
 */
function quietSends(ws: WebSocket, lost: NetworkErrorLog | undefined): void {
  const send = ws.send as (this: WebSocket, data: unknown, ...rest: unknown[]) => void;
  ws.send = function sendIgnoringLostClient(this: WebSocket, data: unknown, ...rest: unknown[]): void {
    const last = rest.length - 1;
    const done = rest[last];
    if (typeof done === 'function') {
      rest[last] = (err?: Error) => {
        if (err && isExpectedNetworkError(err)) lost?.note('graphql-ws', err);
      };
      process.nextTick(done as () => void);
    }
    send.call(this, data, ...rest);
  } as WebSocket['send'];
}
