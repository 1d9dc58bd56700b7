/**
 * WebSocket cases of the corpus: session cases (`websocket: {handler, session}`) and WebSocket channel
 * documents (`{channel, protocol, schema, examples}`), and the corpus's per-language `skip` (loader.ts).
 */
import type { LoadedCase, WebSocketCase } from './types.js';

/** The client language this runner counts as for a case's `skip.languages` list. */
export const RUNNER_LANGUAGE = 'node';

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The corpus's `skip` for this runner's language, as a skip reason. */
export function corpusSkip(doc: Json): string | undefined {
  const skip = doc.skip;
  return isObject(skip) && Array.isArray(skip.languages) && skip.languages.includes(RUNNER_LANGUAGE)
    ? `skipped by the corpus for ${RUNNER_LANGUAGE}: ${String(skip.reason ?? 'no reason given')}`
    : undefined;
}

const FRAME_TYPES: readonly string[] = ['text', 'binary', 'ping', 'pong'];

/** Why a WebSocket session block cannot be played, if it cannot. */
function malformedSession(handler: unknown, session: unknown): string | undefined {
  if (!isObject(handler) || typeof handler.route !== 'string' || !handler.route.startsWith('/')) return 'websocket.handler.route must be a path starting with /';
  if (!isObject(session) || !Array.isArray(session.messages)) return 'websocket.session.messages must be a list';
  for (const [i, m] of session.messages.entries()) {
    const where = `websocket.session.messages[${i}]`;
    if (!isObject(m) || (m.direction !== 'send' && m.direction !== 'receive')) return `${where}.direction must be "send" or "receive"`;
    if (m.frame_type !== undefined && !FRAME_TYPES.includes(m.frame_type as string)) return `${where}.frame_type must be one of ${FRAME_TYPES.join(', ')}`;
    if (m.raw_text !== undefined && typeof m.raw_text !== 'string') return `${where}.raw_text must be a string`;
    if (m.payload_base64 !== undefined && typeof m.payload_base64 !== 'string') return `${where}.payload_base64 must be a string`;
    if (m.direction === 'send' && !('payload' in m) && m.raw_text === undefined && m.payload_base64 === undefined && (m.frame_type ?? 'text') === 'text') return `${where} sends a text frame without payload or raw_text`;
  }
  for (const key of ['close_code', 'expected_receive_count']) {
    if (session[key] !== undefined && !Number.isInteger(session[key])) return `websocket.session.${key} must be an integer`;
  }
  if (session.subprotocol !== undefined && (typeof session.subprotocol !== 'string' || !session.subprotocol)) return 'websocket.session.subprotocol must be a non-empty string';
  return undefined;
}

/** A WebSocket session case (`websocket: {handler, session}`); malformed ones are skipped with the reason. */
export function toWebSocketCase(doc: Json, base: { id: string; category: string; source: string }): LoadedCase {
  const ws = doc.websocket as Json;
  const why = malformedSession(ws.handler, ws.session);
  if (why) return { ...base, skip: `malformed WebSocket session case: ${why}` };
  const c: WebSocketCase = {
    kind: 'websocket',
    ...base,
    name: typeof doc.name === 'string' ? doc.name : base.id,
    ...(typeof doc.description === 'string' ? { description: doc.description } : {}),
    websocket: { handler: ws.handler as WebSocketCase['websocket']['handler'], session: ws.session as WebSocketCase['websocket']['session'] },
    expected: isObject(doc.expected) ? doc.expected : {},
  };
  const skip = corpusSkip(doc);
  if (skip) Object.assign(c, { skip, implementationSkip: true });
  return c;
}

/**
 * A channel document (`{channel, protocol, schema, examples}`, testing_data/websockets and sse): for
 * WebSocket, a session on the channel that sends each example and expects it back from an echoing
 * handler that validates messages against the schema (a valid example must get through); SSE
 * documents list events a server emits on its own, which no request makes it send: skipped, saying so.
 */
export function channelDocument(doc: Json, base: { id: string; category: string; source: string }): LoadedCase | undefined {
  if (!('channel' in doc) || (doc.protocol !== 'websocket' && doc.protocol !== 'sse') || doc.request !== undefined) return undefined;
  if (typeof doc.channel !== 'string' || !doc.channel || !Array.isArray(doc.examples)) return { ...base, skip: `${String(doc.protocol)} message document without a channel: there is no address a client could send it to` };
  if (doc.protocol === 'sse') return { ...base, skip: 'SSE channel document: it lists events a server emits of its own accord (no request makes a server send them), not a request and its answer' };
  const route = doc.channel.startsWith('/') ? doc.channel : `/${doc.channel}`;
  const messages = doc.examples.flatMap((payload) => [{ direction: 'send', payload }, { direction: 'receive', payload }]);
  const wsDoc = { name: doc.name, description: doc.description, websocket: { handler: { route, behavior: 'echo', message_schema: isObject(doc.schema) ? doc.schema : null }, session: { messages } } };
  return toWebSocketCase(wsDoc, base);
}

