/**
 * JSON-message WebSocket handlers: `jsonWebSocket({ onMessage, messageSchema, … })` is a handler for
 * `app.ws(path, handler)` whose messages are JSON text frames, one reply (or none) per message.
 *
 * Framework-owned answers, worded as the reference implementation words them
 * (Spikard, crates/spikard-http/src/websocket.rs), each a JSON text frame after which the connection
 * goes on:
 * - a text frame that is not JSON (or is nested deeper than MAX_JSON_DEPTH): INVALID_JSON_REPLY;
 * - JSON failing `messageSchema`: MESSAGE_VALIDATION_FAILED_REPLY (the handler is not called);
 * - JSON with a `__proto__` or `constructor.prototype` key (keel's rule for JSON bodies):
 *   FORBIDDEN_KEY_REPLY;
 * - a binary frame without `onBinary`: BINARY_NOT_SUPPORTED_REPLY.
 * A reply failing `responseSchema` is dropped and logged; `undefined` sends nothing. Pings are answered
 * with pongs by keel/ws itself. `onDisconnect` runs once however the connection ends.
 */
import { pino } from 'pino';
import { ConfigError, HttpError } from '../http/errors.js';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../http/content.js';
import { parseJsonText } from '../http/json-parse.js';
import { fail, unknownKey } from '../records/define.js';
import { compileSchema } from '../http/validation.js';
import type { ValidateFunction } from 'ajv';
import type { WebSocketSession } from './session.js';
import { CLOSE_INTERNAL_ERROR, type WebSocketHandler } from './upgrade.js';

/** Sent for a text frame that is not JSON: the reference's `{"type":"error","message":"Invalid JSON"}`. */
export const INVALID_JSON_REPLY = Object.freeze({ type: 'error', message: 'Invalid JSON' });
/** Sent for JSON that fails `messageSchema`: the reference's `{"error":"Message validation failed"}`. */
export const MESSAGE_VALIDATION_FAILED_REPLY = Object.freeze({ error: 'Message validation failed' });
/** Sent for JSON with a `__proto__` or `constructor.prototype` key (keel refuses them, lib/http/json-parse.ts). */
export const FORBIDDEN_KEY_REPLY = Object.freeze({ type: 'error', message: 'JSON contains a forbidden "__proto__" or "constructor.prototype" key' });
/** Sent for a binary frame when no `onBinary` is given: a JSON protocol has no binary messages. */
export const BINARY_NOT_SUPPORTED_REPLY = Object.freeze({ type: 'error', message: 'Binary messages are not supported' });
/** Level of the default logger (dropped replies, handler failures): warn. */
export const DEFAULT_JSON_WEBSOCKET_LOG_LEVEL = 'warn';

/** How the connection ended: the close code (1006 when it dropped without a close frame) and reason. */
export interface JsonWebSocketClose {
  code: number;
  reason: string;
}

/** A message handler: the reply to send as JSON text, or `undefined` for none. */
export type JsonMessageHandler<Message, Reply> = (message: Message, session: WebSocketSession) => Reply | undefined | Promise<Reply | undefined>;
/** A binary frame handler: bytes to send back as a binary frame, or `undefined` for none. */
export type JsonBinaryHandler = (data: Buffer, session: WebSocketSession) => Buffer | Uint8Array | undefined | Promise<Buffer | Uint8Array | undefined>;
/** Runs once the handshake is done, before the first message is read. */
export type JsonConnectHandler = (session: WebSocketSession) => void | Promise<void>;
/** Runs once when the connection has ended, however it ended. */
export type JsonDisconnectHandler = (session: WebSocketSession, close: JsonWebSocketClose) => void | Promise<void>;
/** Where dropped replies and handler failures are logged (a pino logger fits). */
export interface JsonWebSocketLogger {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface JsonWebSocketOptions<Message = unknown, Reply = unknown> {
  /** Called for each JSON message (after `messageSchema`); a throw logs and closes with 1011. Required. */
  onMessage: JsonMessageHandler<Message, Reply>;
  /** JSON Schema each message must satisfy (keel's Ajv, as for bodies). Default: none. */
  messageSchema?: Record<string, unknown> | null;
  /** JSON Schema each reply must satisfy; a reply that does not is dropped and logged. Default: none. */
  responseSchema?: Record<string, unknown> | null;
  /** Called once before the first message; a throw logs and closes with 1011. Default: none. */
  onConnect?: JsonConnectHandler;
  /** Called once when the connection has ended (normal close, drop, shutdown, error). Default: none. */
  onDisconnect?: JsonDisconnectHandler;
  /** Called for binary frames. Default: none, and a binary frame gets BINARY_NOT_SUPPORTED_REPLY. */
  onBinary?: JsonBinaryHandler;
  /** Default: pino at DEFAULT_JSON_WEBSOCKET_LOG_LEVEL, named `keel.ws`. */
  logger?: JsonWebSocketLogger;
}

const RECORD = 'JsonWebSocketOptions';
const KEYS = ['onMessage', 'messageSchema', 'responseSchema', 'onConnect', 'onDisconnect', 'onBinary', 'logger'] as const;

interface Normalised {
  onMessage: JsonMessageHandler<unknown, unknown>;
  validateMessage: ValidateFunction | undefined;
  validateReply: ValidateFunction | undefined;
  onConnect: JsonConnectHandler | undefined;
  onDisconnect: JsonDisconnectHandler | undefined;
  onBinary: JsonBinaryHandler | undefined;
  logger: JsonWebSocketLogger;
}

function bad(key: string, value: unknown, expected: string): never {
  return fail(RECORD, RECORD, key, value, expected);
}

function optionalFunction<T>(options: Record<string, unknown>, key: string): T | undefined {
  const v = options[key];
  if (v !== undefined && typeof v !== 'function') bad(key, v, 'a function');
  return v as T | undefined;
}

function schemaOption(options: Record<string, unknown>, key: string): ValidateFunction | undefined {
  const schema = options[key];
  if (schema === undefined || schema === null) return undefined;
  if (typeof schema !== 'object' || Array.isArray(schema)) bad(key, schema, 'a JSON Schema object');
  try {
    return compileSchema(schema as Record<string, unknown>);
  } catch (err) {
    throw new ConfigError(`Invalid ${RECORD} at ${RECORD}.${key}: the schema does not compile: ${(err as Error).message}`, { record: RECORD, path: `${RECORD}.${key}`, key, value: schema });
  }
}

/** Check and compile the options once, when the factory runs. */
function normalise(input: unknown): Normalised {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) bad('', input, `an object with keys ${KEYS.join(', ')}`);
  const options = input as Record<string, unknown>;
  for (const key of Object.keys(options)) {
    if (!(KEYS as readonly string[]).includes(key)) unknownKey(RECORD, RECORD, key, KEYS, options[key]);
  }
  if (typeof options.onMessage !== 'function') bad('onMessage', options.onMessage, 'a function (message, session) => reply | undefined');
  const logger = options.logger as JsonWebSocketLogger | undefined;
  if (logger !== undefined && (typeof logger !== 'object' || typeof logger?.warn !== 'function' || typeof logger?.error !== 'function')) bad('logger', logger, 'a logger with warn() and error() (pino)');
  return {
    onMessage: options.onMessage as JsonMessageHandler<unknown, unknown>,
    validateMessage: schemaOption(options, 'messageSchema'),
    validateReply: schemaOption(options, 'responseSchema'),
    onConnect: optionalFunction(options, 'onConnect'),
    onDisconnect: optionalFunction(options, 'onDisconnect'),
    onBinary: optionalFunction(options, 'onBinary'),
    logger: logger ?? pino({ level: DEFAULT_JSON_WEBSOCKET_LOG_LEVEL, base: { name: 'keel.ws' } }),
  };
}

/**
 * A message's JSON value, or the framework answer when it has none. Text nested deeper than
 * MAX_JSON_DEPTH is never parsed (the scan runs on its bytes first): it is not JSON keel reads, so it
 * gets INVALID_JSON_REPLY, as text the reference's parser gives up on.
 */
export function parseJsonMessage(text: string): { ok: true; value: unknown } | { ok: false; reply: Readonly<Record<string, string>> } {
  if (text.length > MAX_JSON_DEPTH && jsonDepthExceeds(Buffer.from(text, 'utf8'), MAX_JSON_DEPTH)) return { ok: false, reply: INVALID_JSON_REPLY };
  try {
    return { ok: true, value: parseJsonText(text) };
  } catch (err) {
    return { ok: false, reply: err instanceof HttpError ? FORBIDDEN_KEY_REPLY : INVALID_JSON_REPLY };
  }
}

/**
 * A WebSocket handler for JSON messages: each text frame is parsed and checked against `messageSchema`,
 * then given to `onMessage`, whose return value is sent back as JSON text (`undefined`: nothing).
 * Messages are handled one at a time, in order; a slow handler pauses reading (keel/ws HIGH_WATER_MARK)
 * and messages over the route's `maxPayload` close the connection with 1009. Options are checked and
 * the schemas compiled when the factory runs: a bad option is a ConfigError naming it.
 *
 * @example
 * import { jsonWebSocket } from 'keel/ws';
 *
 * app.ws('/ws/rooms', jsonWebSocket({
 *   messageSchema: { type: 'object', required: ['type', 'channel'], properties: { type: { enum: ['subscribe'] }, channel: { type: 'string', minLength: 1 } } },
 *   onMessage: (m: { type: 'subscribe'; channel: string }) => ({ type: 'subscribed', channel: m.channel, status: 'ok' }),
 *   onDisconnect: (_session, { code }) => console.log(`client left with ${code}`),
 * }));
 */
export function jsonWebSocket<Message = unknown, Reply = unknown>(options: JsonWebSocketOptions<Message, Reply>): WebSocketHandler {
  const o = normalise(options);
  const sendJson = (session: WebSocketSession, value: unknown): Promise<void> => session.send(JSON.stringify(value)).catch(() => undefined);

  async function answerText(session: WebSocketSession, text: string): Promise<void> {
    const parsed = parseJsonMessage(text);
    if (!parsed.ok) return sendJson(session, parsed.reply);
    if (o.validateMessage && !o.validateMessage(parsed.value)) return sendJson(session, MESSAGE_VALIDATION_FAILED_REPLY);
    const reply = await o.onMessage(parsed.value, session);
    if (reply === undefined) return;
    if (o.validateReply && !o.validateReply(reply)) {
      o.logger.warn({ errors: o.validateReply.errors, path: session.request.url }, 'WebSocket reply dropped: it does not match responseSchema');
      return;
    }
    let encoded: string | undefined;
    try {
      // undefined for a function or symbol: not JSON either.
      encoded = JSON.stringify(reply) as string | undefined;
    } catch (err) {
      o.logger.warn({ err, path: session.request.url }, 'WebSocket reply dropped: it cannot be encoded as JSON');
      return;
    }
    if (encoded === undefined) {
      o.logger.warn({ path: session.request.url, replyType: typeof reply }, 'WebSocket reply dropped: it cannot be encoded as JSON');
      return;
    }
    return session.send(encoded).catch(() => undefined);
  }

  async function answerBinary(session: WebSocketSession, data: Buffer): Promise<void> {
    if (!o.onBinary) return sendJson(session, BINARY_NOT_SUPPORTED_REPLY);
    const reply = await o.onBinary(data, session);
    if (reply !== undefined) await session.send(Buffer.isBuffer(reply) ? reply : Buffer.from(reply.buffer, reply.byteOffset, reply.byteLength)).catch(() => undefined);
  }

  return async function jsonWebSocketHandler(session: WebSocketSession): Promise<void> {
    try {
      await o.onConnect?.(session);
      for await (const m of session) {
        if (m.type === 'text') await answerText(session, m.data);
        else if (m.type === 'binary') await answerBinary(session, m.data);
        // ping: answered with a pong by ws itself (RFC 6455 §5.5.2); pong and close need nothing here.
      }
    } catch (err) {
      o.logger.error({ err, path: session.request.url }, 'WebSocket handler failed; closing the connection with 1011');
      session.close(CLOSE_INTERNAL_ERROR, 'Internal error');
    }
    const close = await session.closed;
    try {
      await o.onDisconnect?.(session, close);
    } catch (err) {
      o.logger.error({ err, path: session.request.url }, 'WebSocket onDisconnect failed');
    }
  };
}
