/**
 * WebSocket sessions (RFC 6455) on a JSON message route, and GraphQL subscriptions over WebSocket: what the framework answers whatever the
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

/**
 * GraphQL subscriptions over WebSocket (the specification's GraphQlSubscriptionSnapshot: acknowledged,
 * the `next` events, protocol errors, `complete`) with the `graphql-transport-ws` subprotocol, on the
 * specification's built-in `full` schema (`countdown(from)` yields from..0 then completes).
 */
const INIT = send({ type: 'connection_init' });
const ACK = receive({ type: 'connection_ack' });
const subscribe = (id: string, query: string) => send({ id, type: 'subscribe', payload: { query } });
const next = (id: string, data: unknown) => receive({ id, type: 'next', payload: { data } });

const GRAPHQL: Array<[string, string, Json[], Json?]> = [
  ['acknowledged', 'connection_init is acknowledged.', [INIT, ACK]],
  ['countdown_events_then_complete', 'A subscription delivers its events as `next` frames, then `complete`.', [INIT, ACK, subscribe('s1', 'subscription { countdown(from: 2) }'), next('s1', { countdown: 2 }), next('s1', { countdown: 1 }), next('s1', { countdown: 0 }), receive({ id: 's1', type: 'complete' })]],
  ['single_event', 'countdown(from: 0) delivers one event and completes.', [INIT, ACK, subscribe('only', 'subscription { countdown(from: 0) }'), next('only', { countdown: 0 }), receive({ id: 'only', type: 'complete' })]],
  ['two_operations', 'Two operations on one connection each get their events under their own id.', [INIT, ACK, subscribe('a', 'subscription { countdown(from: 0) }'), next('a', { countdown: 0 }), receive({ id: 'a', type: 'complete' }), subscribe('b', 'subscription { countdown(from: 1) }'), next('b', { countdown: 1 }), next('b', { countdown: 0 }), receive({ id: 'b', type: 'complete' })]],
  ['query_over_websocket', 'A query sent as an operation gets one `next` and `complete`.', [INIT, ACK, subscribe('q', '{ __typename }'), next('q', { __typename: 'Query' }), receive({ id: 'q', type: 'complete' })]],
  ['unknown_field_error', 'An operation that fails validation gets an `error` frame, no events.', [INIT, ACK, subscribe('bad', 'subscription { nope }'), receive({ id: 'bad', type: 'error', payload: [{ message: 'Cannot query field "nope" on type "Subscription".', locations: [{ line: 1, column: 16 }] }] })], { expected_receive_count: 2 }],
  ['resolver_refusal_result', 'A subscription its resolver refuses before streaming is a result with `errors` (a `next`), then `complete`: the operation was valid, so it is not a protocol `error`.', [INIT, ACK, subscribe('big', 'subscription { countdown(from: 101) }'), receive({ id: 'big', type: 'next', payload: { errors: [{ message: 'from must be at most 100', locations: [{ line: 1, column: 16 }], path: ['countdown'], extensions: { code: 'BAD_USER_INPUT' } }] } }), receive({ id: 'big', type: 'complete' })], { expected_receive_count: 3 }],
];

export function sessionDocuments(): SessionDocument[] {
  const json = ROWS.map(([slug, description, handler, messages, session], i): SessionDocument => ({
    category: 'websocket_session',
    name: `${String(i + 1).padStart(2, '0')}_${slug}`,
    description,
    websocket: { handler: { route: '/ws/messages', ...handler }, session: { messages, close_code: 1000, ...session } },
  }));
  const graphql = GRAPHQL.map(([slug, description, messages, session], i): SessionDocument => ({
    category: 'graphql_subscription',
    name: `${String(i + 1).padStart(2, '0')}_${slug}`,
    description,
    websocket: { handler: { route: '/graphql', graphql: { schema_type: 'full' } }, session: { subprotocol: 'graphql-transport-ws', messages, close_code: 1000, ...session } },
  }));
  return [...json, ...graphql];
}
