/**
 * Per-socket fairness on WebSocket routes and GraphQL over WebSocket (issue 26): a token bucket on the
 * messages one socket may send, and a bound on the bytes queued for one socket that does not read.
 *
 * - One socket sending 200k small valid messages held a CPU for 4–6 s and `/health` waited up to
 *   5.6 s: every message was handled as fast as it arrived. Over `messagesPerSecond` (after a burst of
 *   `messageBurst`) a message is refused: by default the socket is closed with 1008 (policy violation,
 *   RFC 6455 §7.4.1), so the flood costs its sender the connection, not the server its loop.
 * - A client that stops reading makes every frame sent to it wait in memory (ws `bufferedAmount`): one
 *   slow reader of a chat room held memory and, with it, the room's fan-out. Past `maxBufferedBytes` a
 *   message is not queued: by default the socket is closed with 1013 (try again later, RFC 6455 §7.4.1).
 *   "Drop oldest" is not offered: what is queued is already framed in the socket's buffer and cannot be
 *   recalled, so the choice is between the newest message and the connection.
 *
 * Both are applied to the `ws` socket itself (its 'message' / 'ping' events and its send()), so the
 * same rules hold for `app.ws()` sessions and for graphql-ws, which reads and writes that socket directly.
 */
import type { WebSocket } from 'ws';
import type { MessageMeter } from '../server/client-budget.js';
import { fail, unknownKey } from '../records/define.js';
import {
  DEFAULT_WS_IDLE_TIMEOUT, DEFAULT_WS_MAX_BUFFERED_BYTES, DEFAULT_WS_MESSAGE_BURST, DEFAULT_WS_MESSAGES_PER_SECOND, DEFAULT_WS_ON_RATE_EXCEEDED,
  DEFAULT_WS_ON_SEND_BUFFER_FULL, WS_RATE_ACTIONS, WS_SEND_BUFFER_ACTIONS, type ServerConfig, type WsRateAction, type WsSendBufferAction,
} from '../records/server.js';

export {
  DEFAULT_WS_IDLE_TIMEOUT, DEFAULT_WS_MAX_BUFFERED_BYTES, DEFAULT_WS_MESSAGE_BURST, DEFAULT_WS_MESSAGES_PER_SECOND, DEFAULT_WS_ON_RATE_EXCEEDED,
  DEFAULT_WS_ON_SEND_BUFFER_FULL, WS_RATE_ACTIONS, WS_SEND_BUFFER_ACTIONS, type WsRateAction, type WsSendBufferAction,
};

/** Close code for a socket over its message rate (RFC 6455 §7.4.1: 1008 policy violation). */
export const CLOSE_POLICY_VIOLATION = 1008;
/** Close code for a socket idle past its idle timeout (RFC 6455 §7.4.1: 1001 going away). */
export const CLOSE_IDLE = 1001;
/** Close code for a socket whose send buffer is full (RFC 6455 §7.4.1: 1013 try again later). */
export const CLOSE_TRY_AGAIN_LATER = 1013;
/**
 * After a fairness close, how long the client has to answer the close frame before its socket is
 * destroyed, ms: 1000. The flooder's remaining frames are not read meanwhile, and a client that does
 * not read would never see the close frame queued behind its full buffer (RFC 6455 §7.1.1 lets the
 * server close the TCP connection once it has sent its close frame).
 */
export const FAIRNESS_CLOSE_GRACE_MS = 1000;

/** Per-socket limits of a WebSocket route (camelCase of the ServerConfig `ws_*` keys, which are their defaults). */
export interface WebSocketFairnessOptions {
  /** Messages per second one socket may send (token refill); `null`: no limit. Default DEFAULT_WS_MESSAGES_PER_SECOND (100). */
  messagesPerSecond?: number | null;
  /** Messages one socket may send at once (bucket size). Default DEFAULT_WS_MESSAGE_BURST (200). */
  messageBurst?: number;
  /** A message over the rate: 'close' (1008), 'error' (dropped, an error frame sent), 'drop'. Default DEFAULT_WS_ON_RATE_EXCEEDED ('close'). */
  onRateExceeded?: WsRateAction;
  /** Bytes queued for one socket before `onSendBufferFull` applies; `null`: no bound. Default DEFAULT_WS_MAX_BUFFERED_BYTES (1 MiB). */
  maxBufferedBytes?: number | null;
  /** A message that would overflow the send buffer: 'close' (1013) or 'drop' (not sent). Default DEFAULT_WS_ON_SEND_BUFFER_FULL ('close'). */
  onSendBufferFull?: WsSendBufferAction;
  /** Seconds without a frame from the client (message, ping, pong) before close 1001; `null`: none. Default DEFAULT_WS_IDLE_TIMEOUT (120). */
  idleTimeout?: number | null;
}

/** WebSocketFairnessOptions with every default filled in. */
export type WebSocketFairness = Required<WebSocketFairnessOptions>;

const RECORD = 'WebSocketFairnessOptions';
const KEYS = ['messagesPerSecond', 'messageBurst', 'onRateExceeded', 'maxBufferedBytes', 'onSendBufferFull', 'idleTimeout'] as const;

/** The ServerConfig `ws_*` keys as route options (the server's defaults for every WebSocket route). */
export function fairnessOfConfig(config: Partial<Pick<ServerConfig, 'ws_messages_per_second' | 'ws_message_burst' | 'ws_on_rate_exceeded' | 'ws_max_buffered_bytes' | 'ws_on_send_buffer_full' | 'ws_idle_timeout'>> | undefined): WebSocketFairnessOptions {
  if (!config) return {};
  const out: WebSocketFairnessOptions = {};
  if (config.ws_messages_per_second !== undefined) out.messagesPerSecond = config.ws_messages_per_second;
  if (config.ws_message_burst !== undefined) out.messageBurst = config.ws_message_burst;
  if (config.ws_on_rate_exceeded !== undefined) out.onRateExceeded = config.ws_on_rate_exceeded;
  if (config.ws_max_buffered_bytes !== undefined) out.maxBufferedBytes = config.ws_max_buffered_bytes;
  if (config.ws_on_send_buffer_full !== undefined) out.onSendBufferFull = config.ws_on_send_buffer_full;
  if (config.ws_idle_timeout !== undefined) out.idleTimeout = config.ws_idle_timeout;
  return out;
}

/** Check `input` when the route is created (ConfigError naming the option) and fill in the defaults. */
export function fairnessOptions(input: WebSocketFairnessOptions = {}): WebSocketFairness {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) fail(RECORD, RECORD, '', input, `an object with keys ${KEYS.join(', ')}`);
  for (const key of Object.keys(input)) {
    if (!(KEYS as readonly string[]).includes(key)) unknownKey(RECORD, RECORD, key, KEYS, (input as Record<string, unknown>)[key]);
  }
  const rate = input.messagesPerSecond === undefined ? DEFAULT_WS_MESSAGES_PER_SECOND : input.messagesPerSecond;
  if (rate !== null && !(typeof rate === 'number' && rate > 0 && Number.isFinite(rate))) {
    fail(RECORD, RECORD, 'messagesPerSecond', rate, 'a number > 0, or null for no limit');
  }
  const burst = input.messageBurst ?? DEFAULT_WS_MESSAGE_BURST;
  if (!Number.isInteger(burst) || burst < 1) fail(RECORD, RECORD, 'messageBurst', burst, 'an integer >= 1');
  const onRate = input.onRateExceeded ?? DEFAULT_WS_ON_RATE_EXCEEDED;
  if (!WS_RATE_ACTIONS.includes(onRate)) fail(RECORD, RECORD, 'onRateExceeded', onRate, `one of ${WS_RATE_ACTIONS.join(', ')}`);
  const max = input.maxBufferedBytes === undefined ? DEFAULT_WS_MAX_BUFFERED_BYTES : input.maxBufferedBytes;
  if (max !== null && (!Number.isInteger(max) || max < 1)) fail(RECORD, RECORD, 'maxBufferedBytes', max, 'an integer >= 1 (bytes), or null for no bound');
  const onFull = input.onSendBufferFull ?? DEFAULT_WS_ON_SEND_BUFFER_FULL;
  if (!WS_SEND_BUFFER_ACTIONS.includes(onFull)) fail(RECORD, RECORD, 'onSendBufferFull', onFull, `one of ${WS_SEND_BUFFER_ACTIONS.join(', ')}`);
  const idle = input.idleTimeout === undefined ? DEFAULT_WS_IDLE_TIMEOUT : input.idleTimeout;
  // Node's longest timer is 2^31 - 1 ms; a longer one fires at once.
  if (idle !== null && !(typeof idle === 'number' && idle > 0 && idle * 1000 <= 2 ** 31 - 1)) fail(RECORD, RECORD, 'idleTimeout', idle, 'a number of seconds > 0 and <= 2147483, or null for none');
  return Object.freeze({ messagesPerSecond: rate, messageBurst: burst, onRateExceeded: onRate, maxBufferedBytes: max, onSendBufferFull: onFull, idleTimeout: idle });
}

/** The error frame a plain WebSocket route sends for a message over the rate (action 'error'), worded as INVALID_JSON_REPLY. */
export function rateLimitReply(f: WebSocketFairness): string {
  return JSON.stringify({ type: 'error', message: `Message rate limit exceeded: at most ${f.messagesPerSecond} messages per second (burst ${f.messageBurst}); this message was dropped` });
}

/** The error frame for one refused message (`undefined`: none), given the message. */
export type RateErrorFrame = (data: Buffer, isBinary: boolean) => string | undefined;

function byteSize(data: unknown): number {
  if (typeof data === 'string') return Buffer.byteLength(data);
  if (ArrayBuffer.isView(data) || data instanceof ArrayBuffer) return data.byteLength;
  return 0;
}

/** How long a socket counts as behind after the client's budget let it be read again, ms: 1000. */
export const BEHIND_GRACE_MS = 1_000;

/**
 * How late the event loop is: a 20 ms interval runs while rate-limited sockets are open (and only then), and
 * the lateness is that of its last run or of the one now overdue, whichever is larger. A server that was
 * late by L ms may read L ms of a compliant client's messages at once.
 */
const LOOP_TICK_MS = 20;
let loopTimer: NodeJS.Timeout | undefined;
let loopUsers = 0;
let tickAt = 0;
let tickLate = 0;

function watchLoop(): void {
  if (loopUsers++ > 0) return;
  tickAt = performance.now();
  tickLate = 0;
  loopTimer = setInterval(() => {
    const now = performance.now();
    tickLate = Math.max(0, now - tickAt - LOOP_TICK_MS);
    tickAt = now;
  }, LOOP_TICK_MS);
  loopTimer.unref();
}

function unwatchLoop(): void {
  if (--loopUsers === 0) clearInterval(loopTimer);
}

function loopLateMs(now: number): number {
  return Math.max(tickLate, now - tickAt - LOOP_TICK_MS, 0);
}

/** Ticks of the idle check per idle timeout: a socket is closed between 1 and 1 + 1/IDLE_TICKS timeouts after its last frame. */
const IDLE_TICKS = 4;

/**
 * Call `onIdle` once `ws` has received no frame (message, ping, pong) for `ms`. Frames are counted through `emit`
 * (one increment each, no clock read); a timer of ms / IDLE_TICKS sees whether the count moved.
 */
function watchIdle(ws: WebSocket, ms: number, onIdle: () => void): void {
  let frames = 0;
  let seen = 0;
  let quiet = 0;
  const emit = ws.emit;
  ws.emit = function emitCounted(this: WebSocket, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'message' || event === 'ping' || event === 'pong') frames++;
    return emit.call(this, event, ...args);
  } as WebSocket['emit'];
  const timer = setInterval(() => {
    if (frames !== seen) {
      seen = frames;
      quiet = 0;
    } else if (++quiet >= IDLE_TICKS) {
      clearInterval(timer);
      onIdle();
    }
  }, ms / IDLE_TICKS);
  timer.unref();
  ws.once('close', () => clearInterval(timer));
}

/**
 * Put `f` on a freshly accepted socket, before anything listens to it. `errorFrame` answers a refused
 * message under action 'error' (default: rateLimitReply for every message). `meter` is the budget of the
 * socket's client across its sockets (lib/server/client-budget.ts): over it the socket is not read for a while.
 */
export function applyFairness(ws: WebSocket, f: WebSocketFairness, errorFrame?: RateErrorFrame, meter?: MessageMeter): void {
  let cut = false;
  const cutOff = (code: number, reason: string): void => {
    if (cut) return;
    cut = true;
    ws.close(code, reason);
    const timer = setTimeout(() => ws.terminate(), FAIRNESS_CLOSE_GRACE_MS);
    timer.unref();
    ws.once('close', () => clearTimeout(timer));
  };

  if (f.idleTimeout !== null) watchIdle(ws, f.idleTimeout * 1000, () => cutOff(CLOSE_IDLE, 'Idle timeout'));

  const limited = f.messagesPerSecond !== null;
  if (limited || meter) {
    const perMs = (f.messagesPerSecond ?? 0) / 1000;
    const burst = f.messageBurst;
    const reply = errorFrame ?? (() => rateLimitReply(f));
    let tokens = burst;
    let last = performance.now();
    const emit = ws.emit;
    // While a socket waits for its client's budget it is paused (TCP backpressure), and the messages ws had
    // already parsed from the last chunk read (at most one chunk's worth) wait here, in order.
    const queue: [string | symbol, unknown[]][] = [];
    let holdTimer: NodeJS.Timeout | undefined;
    // For BEHIND_GRACE_MS after a wait, what the client sent meanwhile is read as one backlog: not a flood.
    let behindUntil = -Infinity;
    /** Emit one message if both budgets allow it; else the ms to wait (nothing charged). */
    const admit = (event: string | symbol, args: unknown[]): number | 'refused' => {
      // Control frames (ping, pong) are never a backlog to wait for: a heartbeat comes seconds apart, so one over
      // either budget is refused (by default: close 1008) rather than held. Held, a flood of them from many sockets
      // of one client would only slow down, never end (issue 44: 50 sockets × 200,000 PONGs, none closed).
      const control = event !== 'message';
      if (limited) {
        const now = performance.now();
        // A loop that was late reads what this socket sent meanwhile all at once: the bucket may hold what
        // the client was allowed to send while the server was not reading (a backlog, not a burst; issue 35).
        tokens = Math.min(burst + loopLateMs(now) * perMs, tokens + (now - last) * perMs);
        last = now;
        if (tokens < 1) {
          // Behind because of the client's budget: this socket's backlog waits too, never a close.
          if (!control && (holdTimer || queue.length || now < behindUntil)) return Math.max(1, Math.ceil((1 - tokens) / perMs));
          return 'refused';
        }
      }
      const wait = meter ? meter.charge() : 0;
      if (wait > 0) return control ? 'refused' : wait;
      if (limited) tokens -= 1;
      emit.call(ws, event, ...args);
      return 0;
    };
    const hold = (ms: number): void => {
      ws.pause();
      holdTimer = setTimeout(drain, ms);
    };
    const drain = (): void => {
      holdTimer = undefined;
      if (cut) return;
      while (queue.length) {
        const [event, args] = queue[0]!;
        const wait = admit(event, args);
        if (typeof wait === 'number' && wait > 0) return hold(wait);
        queue.shift();
      }
      behindUntil = performance.now() + BEHIND_GRACE_MS;
      ws.resume();
    };
    if (limited) watchLoop();
    ws.once('close', () => {
      clearTimeout(holdTimer);
      queue.length = 0;
      meter?.release();
      if (limited) unwatchLoop();
    });
    // Every listener (a WebSocketSession, graphql-ws) sees only the messages within the rate. Control frames
    // count too: ws answers each ping with a pong, and an unsolicited pong (RFC 6455 §5.5.3 allows them) is parsed
    // and handed on like a message: 50 sockets × 200,000 pongs took 12 s of CPU with none closed (issue 44).
    ws.emit = function emitWithinRate(this: WebSocket, event: string | symbol, ...args: unknown[]): boolean {
      if (event !== 'message' && event !== 'ping' && event !== 'pong') return emit.call(this, event, ...args);
      if (cut) return false;
      if (holdTimer || queue.length) {
        queue.push([event, args]);
        return true;
      }
      const outcome = admit(event, args);
      if (outcome === 0) return true;
      if (outcome !== 'refused') {
        queue.push([event, args]);
        hold(outcome);
        return true;
      }
      if (f.onRateExceeded === 'close') {
        cutOff(CLOSE_POLICY_VIOLATION, 'Message rate limit exceeded');
        // The rest of the flood is not read: the socket is destroyed after the grace.
        ws.pause();
      } else if (f.onRateExceeded === 'error' && event === 'message') {
        const frame = reply(args[0] as Buffer, args[1] as boolean);
        if (frame !== undefined) ws.send(frame);
      }
      return false;
    } as WebSocket['emit'];
  }

  if (f.maxBufferedBytes !== null) {
    const max = f.maxBufferedBytes;
    const send = ws.send as (this: WebSocket, data: unknown, ...rest: unknown[]) => void;
    ws.send = function sendWithinBuffer(this: WebSocket, data: unknown, ...rest: unknown[]): void {
      if (this.readyState === this.OPEN) {
        const queued = this.bufferedAmount;
        // An idle socket takes any one message (up to maxPayload); a queue over the bound takes no more.
        if (queued > 0 && queued + byteSize(data) > max) {
          if (f.onSendBufferFull === 'close') cutOff(CLOSE_TRY_AGAIN_LATER, 'Send buffer full: the client is not reading');
          // The sender is told it was handed over (graphql-ws would print a stack per refused frame).
          const done = rest.findLast((r) => typeof r === 'function') as (() => void) | undefined;
          if (done) process.nextTick(done);
          return;
        }
      }
      send.call(this, data, ...rest);
    } as WebSocket['send'];
  }
}
