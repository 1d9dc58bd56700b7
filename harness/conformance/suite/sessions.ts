/**
 * WebSocket sessions (RFC 6455) on a JSON message route: what the framework answers whatever the
 * handler's behaviour (invalid JSON, a message failing its schema, a ping's pong) and the handler's
 * own echo. Played against `--base-url` servers and keel's fixture app; the manifest (and so
 * `--exec`) describes HTTP cases only.
 */
import type { Json } from './build.js';

/** A session case document: `{category, name, description, websocket: {handler, session}}`. */
export interface SessionDocument {
  category: string;
  name: string;
  description: string;
  websocket: { handler: Json; session: Json };
}

const send = (payload: unknown) => ({ direction: 'send', payload });
const receive = (payload: unknown) => ({ direction: 'receive', payload });
const INVALID_JSON = { type: 'error', message: 'Invalid JSON' };

const ROWS: Array<[string, string, Json, Json[], Json?]> = [
  ['echo', 'The handler echoes a JSON message.', { behavior: 'echo' }, [send({ hello: 'world' }), receive({ hello: 'world' })]],
  ['echo_many', 'Messages are answered in order.', { behavior: 'echo' }, [send({ n: 1 }), receive({ n: 1 }), send({ n: 2 }), receive({ n: 2 }), send([1, 2, 3]), receive([1, 2, 3])]],
  ['invalid_json', 'Text that is not JSON gets the framework\'s error frame; the connection goes on.', { behavior: 'echo' }, [{ direction: 'send', raw_text: 'not json {' }, receive(INVALID_JSON), send({ after: true }), receive({ after: true })]],
  ['invalid_json_silent_handler', 'A handler that never answers still gets the framework\'s error for invalid JSON.', { behavior: 'no_response' }, [{ direction: 'send', raw_text: '{"unterminated": ' }, receive(INVALID_JSON)], { expected_receive_count: 1 }],
  ['schema_refused', 'A message failing message_schema is refused before the handler.', { behavior: 'echo', message_schema: { type: 'object', required: ['channel'], properties: { channel: { type: 'string' } } } }, [send({ type: 'subscribe' }), receive({ error: 'Message validation failed' }), send({ channel: 'news' }), receive({ channel: 'news' })]],
  ['subscribe_ack', 'The handler acknowledges a subscription.', { behavior: 'subscribe_ack' }, [send({ type: 'subscribe', channel: 'prices' }), receive({ type: 'subscribed', channel: 'prices', status: 'ok' })]],
  ['ping_pong', 'A ping gets a pong with the same bytes.', { behavior: 'no_response' }, [{ direction: 'send', frame_type: 'ping', payload_base64: 'a2VlbA==' }, { direction: 'receive', frame_type: 'pong', payload_base64: 'a2VlbA==' }], { expected_receive_count: 0 }],
  ['reply_failing_response_schema_dropped', 'A reply failing response_schema is not sent.', { behavior: 'echo', response_schema: { type: 'object', required: ['ok'] } }, [send({ a: 1 })], { expected_receive_count: 0 }],
];

export function sessionDocuments(): SessionDocument[] {
  return ROWS.map(([slug, description, handler, messages, session], i) => ({
    category: 'websocket_session',
    name: `${String(i + 1).padStart(2, '0')}_${slug}`,
    description,
    websocket: { handler: { route: '/ws/messages', ...handler }, session: { messages, close_code: 1000, ...session } },
  }));
}
