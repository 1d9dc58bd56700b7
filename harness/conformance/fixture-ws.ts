/**
 * WebSocket endpoints of the fixture app.
 *
 * - The corpus's `websocket` record on an HTTP case (`middleware.websocket`, or `websocket` on the
 *   handler): the route is a WebSocket endpoint. keel has no such route record (a WebSocket route is
 *   `app.ws(path, handler)`, docs/protocols.md), so the fixture app reads it and registers one. The
 *   handshake the case checks (101, Sec-WebSocket-Accept) is keel/ws's, done by the `ws` package; the
 *   handler only decides what happens after it.
 * - A WebSocket session case's `websocket.handler`: an `app.ws(route, jsonWebSocket(...))` endpoint.
 *   `behavior` is the handler's own logic (its `onMessage` / `onBinary`), `message_schema` and
 *   `response_schema` go to keel's options; every framework-owned answer (invalid JSON, schema failure,
 *   pong, handshake, close) is keel/ws's own code. The handler counts keel's lifecycle calls for the
 *   runner to observe (`connect_count`, `message_count`, `disconnect_count`).
 */
import type { App } from '../../lib/app/app.js';
import { defineRecord, t } from '../../lib/records/define.js';
import type { JsonWebSocketLogger, JsonWebSocketOptions, jsonWebSocket as JsonWebSocketFactory } from '../../lib/ws/json.js';
import { missingPackages, missingPackagesError } from '../../lib/ops/packages.js';
import type { CaseHandler, WebSocketCase } from './types.js';

/**
 * Parsed as keel parses its own records, so a misspelt or unknown key is refused the same way
 * (a ConfigError naming the record and the key) instead of being ignored: an ignored key would make a
 * case test less than its author meant. A record without `enabled` is on: being present says so.
 */
const WebSocketRecord = defineRecord<{ enabled: boolean }>('websocket', { enabled: { type: t.boolean(), default: true } });

/** True when the case's handler turns on a WebSocket endpoint at its route; a malformed record throws ConfigError. */
export function websocketEnabled(handler: CaseHandler): boolean {
  const fromMiddleware = handler.middleware?.websocket;
  const record = fromMiddleware !== undefined ? fromMiddleware : handler.websocket;
  if (record === undefined) return false;
  return WebSocketRecord.parse(record, fromMiddleware !== undefined ? 'middleware.websocket' : 'websocket').enabled;
}

/**
 * Serve the case's route as a WebSocket endpoint that echoes text and binary messages (the corpus's default
 * behaviour; it gives a client that goes past the handshake something to talk to). Plain HTTP
 * requests to the path are not this endpoint's: keel answers them as for any path without a route.
 */
export function registerWebSocket(app: App, handler: CaseHandler): void {
  // The route records (auth, CORS, limits, hooks) belong to the HTTP route this replaces; dropping
  // them silently could let a case pass without the check it names, so such a case fails instead.
  const others = [...Object.keys(handler.middleware ?? {}).filter((k) => k !== 'websocket'), ...(handler.cors ? ['cors'] : [])];
  if (others.length) {
    throw new Error(`The fixture app serves a websocket record with app.ws(), which takes none of the route's other records (${others.join(', ')}) on ${handler.method} ${handler.route}`);
  }
  app.ws(handler.route, async (ws) => {
    for await (const m of ws) if (m.type === 'text' || m.type === 'binary') await ws.send(m);
  });
}

/** Behaviours a session case's handler may have: what the application's own handler does. */
export const SESSION_BEHAVIORS = ['echo', 'binary_echo', 'subscribe_ack', 'no_response', 'track_lifecycle'] as const;
type Behavior = (typeof SESSION_BEHAVIORS)[number];
/** `on_disconnect_action` values the fixture knows (the counter is kept for every handler). */
export const DISCONNECT_ACTIONS = ['increment_disconnect_counter'] as const;

/**
 * A session case's `websocket.handler`, parsed as keel's records are: an unknown key or behaviour is a
 * ConfigError naming it, so a case never tests less than its author meant. Without `behavior` the
 * handler echoes, as the HTTP `websocket` record's endpoint does.
 */
const SessionHandlerRecord = defineRecord<{ route: string; behavior: Behavior; message_schema: Record<string, unknown> | null; response_schema: Record<string, unknown> | null; on_disconnect_action: string | null }>('websocket.handler', {
  route: { type: t.string({ pattern: /^\//, hint: 'a path starting with /' }), required: true },
  behavior: { type: t.string({ enum: SESSION_BEHAVIORS }), default: 'echo' },
  message_schema: { type: t.json(), nullable: true, default: null },
  response_schema: { type: t.json(), nullable: true, default: null },
  on_disconnect_action: { type: t.string({ enum: DISCONNECT_ACTIONS }), nullable: true, default: null },
});

/** What the fixture saw keel call on one endpoint: the runner's view of server-side state. */
export interface SessionCounters {
  connect_count: number;
  message_count: number;
  disconnect_count: number;
}

/** The application logic of a behaviour: only `onMessage` / `onBinary`, never a framework answer. */
function behaviour(name: Behavior): Pick<JsonWebSocketOptions, 'onMessage' | 'onBinary'> {
  const echoBytes = (data: Buffer) => data;
  switch (name) {
    case 'echo':
    case 'binary_echo':
    case 'track_lifecycle':
      return { onMessage: (m) => m, onBinary: echoBytes };
    case 'subscribe_ack':
      return { onMessage: (m) => ({ type: 'subscribed', channel: (m as { channel?: unknown } | null)?.channel, status: 'ok' }) };
    case 'no_response':
      return { onMessage: () => undefined };
  }
}

/**
 * A session case's GraphQL handler (`websocket.handler.graphql`): `{route, graphql: {schema_type}}`,
 * parsed like keel's records (an unknown key, or a schema type other than the specification's
 * built-in ones, is a ConfigError naming it).
 */
const GraphqlSessionRecord = defineRecord<{ route: string; graphql: { schema_type: string } }>('websocket.handler', {
  route: { type: t.string({ pattern: /^\//, hint: 'a path starting with /' }), required: true },
  graphql: { type: t.json(), required: true },
});
const GraphqlBlock = defineRecord<{ schema_type: 'query_only' | 'query_mutation' | 'full' }>('websocket.handler.graphql', {
  schema_type: { type: t.string({ enum: ['query_only', 'query_mutation', 'full'] as const }), required: true },
});

/** True when a session case talks to a GraphQL route (graphql-transport-ws) rather than a JSON message handler. */
export function isGraphqlSession(c: WebSocketCase): boolean {
  return c.websocket.handler.graphql !== undefined;
}

/**
 * Serve a GraphQL session case with `app.registerGraphqlRoute(route, 'POST', schema_type)`: the
 * subscription protocol (ack, `next`, `complete`, `error`, closes) is keel's; the schema's resolvers
 * are the specification's built-in ones.
 */
export function registerGraphqlSession(app: App, c: WebSocketCase): void {
  const h = GraphqlSessionRecord.parse(c.websocket.handler, 'websocket.handler');
  const g = GraphqlBlock.parse(h.graphql, 'websocket.handler.graphql');
  app.registerGraphqlRoute(h.route, 'POST', g.schema_type);
}

/**
 * keel/ws's jsonWebSocket, loaded by loadWebSocketFixtures(). Not imported with this module: keel/ws
 * needs the `ws` package, an optional peer dependency, and the fixture app serves every other case
 * without it (keel-conformance would otherwise fail to start in a project without `ws`).
 */
let jsonWebSocket: typeof JsonWebSocketFactory | undefined;

/** Load what the WebSocket endpoints need; an AppError with the install command when `ws` is missing. */
export async function loadWebSocketFixtures(): Promise<void> {
  if (jsonWebSocket) return;
  const missing = missingPackages(['ws@8']);
  if (missing.length) throw missingPackagesError("WebSocket cases in keel's fixture app (keel-conformance)", missing);
  ({ jsonWebSocket } = await import('../../lib/ws/json.js'));
}

/** Serve a session case's handler with `app.ws(route, jsonWebSocket(...))`; returns the endpoint's counters. */
export function registerJsonWebSocket(app: App, c: WebSocketCase, logger: JsonWebSocketLogger): SessionCounters {
  if (!jsonWebSocket) throw new Error('registerJsonWebSocket: await loadWebSocketFixtures() first');
  const h = SessionHandlerRecord.parse(c.websocket.handler, 'websocket.handler');
  const counters: SessionCounters = { connect_count: 0, message_count: 0, disconnect_count: 0 };
  const { onMessage, onBinary } = behaviour(h.behavior);
  app.ws(h.route, jsonWebSocket({
    ...(h.message_schema ? { messageSchema: h.message_schema } : {}),
    ...(h.response_schema ? { responseSchema: h.response_schema } : {}),
    onMessage: (m, session) => {
      counters.message_count++;
      return onMessage(m, session);
    },
    ...(onBinary ? { onBinary } : {}),
    onConnect: () => void counters.connect_count++,
    onDisconnect: () => void counters.disconnect_count++,
    logger,
  }));
  return counters;
}
