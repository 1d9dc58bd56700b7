/**
 * The corpus's `websocket` record (`middleware.websocket`, or `websocket` on the handler): the route
 * is a WebSocket endpoint. keel has no such route record (a WebSocket route is `app.ws(path,
 * handler)`, docs/protocols.md), so the fixture app reads it and registers one. The handshake the
 * case checks (101, Sec-WebSocket-Accept) is keel/ws's, done by the `ws` package; the handler only
 * decides what happens after it.
 */
import type { App } from '../../lib/app.js';
import { defineRecord, t } from '../../lib/records/define.js';
import type { CaseHandler } from './types.js';

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
