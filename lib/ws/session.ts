/**
 * One WebSocket connection as typed messages (spec, Events: WebSocketMessage).
 *
 * Incoming frames are queued and read with `for await (const message of session)`; the iteration
 * yields a final `close` message and ends. When the handler reads slower than the peer writes, the
 * socket is paused past HIGH_WATER_MARK queued messages (TCP backpressure instead of unbounded memory).
 */
import type { WebSocket } from 'ws';
import type { KeelRequest } from '../http/request.js';
import { MemoryPubSub, type PubSub } from '../pubsub/memory.js';
import { deliveries } from './fanout.js';

import type { WebSocketMessage } from '../app/protocol-api.js';

/** A WebSocket message (RFC 6455 §5.6 data frames, §5.5 control frames); declared with the App's types. */
export type { WebSocketMessage };

/** Queued incoming messages above which the socket stops reading until the handler catches up. */
export const HIGH_WATER_MARK = 64;

/** Close code when the pub/sub ended a subscription whose client fell behind (RFC 6455 §7.4.1: 1013 try again later). */
export const CLOSE_FELL_BEHIND = 1013;
/** RFC 6455 §7.4.1: 1005 "no status received" stands in when the peer's close frame had no code. */
const NO_STATUS = 1005;
/** RFC 6455 §7.4.1: 1006, the connection ended without a close frame. */
const ABNORMAL = 1006;

/** The close code ws sent for a protocol error (its `status-code` symbol: 1002, 1007, 1009 …), if any. */
function protocolErrorCode(err: Error): number | undefined {
  const key = Object.getOwnPropertySymbols(err).find((s) => s.description === 'status-code');
  const code = key ? (err as unknown as Record<symbol, unknown>)[key] : undefined;
  return typeof code === 'number' ? code : undefined;
}

export class WebSocketSession implements AsyncIterable<WebSocketMessage> {
  /** The upgrade request (after guards: `requestId`, `auth` … are set). */
  readonly request: KeelRequest;
  /** Route parameters of the matched path. */
  readonly params: Readonly<Record<string, string>>;
  /** Resolves with the close code and reason once the connection is closed. */
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly #ws: WebSocket;
  readonly #queue: WebSocketMessage[] = [];
  #wake: (() => void) | undefined;
  #ended = false;
  #paused = false;
  #pubsub: PubSub | undefined;

  constructor(ws: WebSocket, request: KeelRequest, params: Readonly<Record<string, string>> = {}, pubsub?: PubSub) {
    this.#ws = ws;
    this.#pubsub = pubsub;
    this.request = request;
    this.params = params;
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      // ws has already checked UTF-8 for text frames (invalid → close 1007, RFC 6455 §8.1).
      this.#push(isBinary ? { type: 'binary', data } : { type: 'text', data: data.toString('utf8') });
    });
    ws.on('ping', (data: Buffer) => this.#push({ type: 'ping', data }));
    ws.on('pong', (data: Buffer) => this.#push({ type: 'pong', data }));
    // 'error' (oversized frame → 1009, bad UTF-8 → 1007 …) is always followed by 'close'. ws then
    // stops reading, so 'close' says 1006 (no close frame received): the code ws closed with is kept
    // instead, so the handler learns why the connection ended.
    let refusal: { code: number; reason: string } | undefined;
    ws.on('error', (err: Error) => {
      const code = protocolErrorCode(err);
      if (code !== undefined) refusal = { code, reason: err.message };
    });
    this.closed = new Promise((resolve) => {
      ws.on('close', (code: number, reason: Buffer) => {
        const msg = code === ABNORMAL && refusal ? { type: 'close' as const, ...refusal }
          : { type: 'close' as const, code: code || NO_STATUS, reason: reason.toString('utf8') };
        this.#push(msg);
        this.#ended = true;
        this.#wake?.();
        resolve({ code: msg.code, reason: msg.reason });
      });
    });
  }

  /** The negotiated subprotocol ('' when none). */
  get protocol(): string {
    return this.#ws.protocol;
  }

  /** True while messages can be sent. */
  get isOpen(): boolean {
    return this.#ws.readyState === this.#ws.OPEN;
  }

  #push(msg: WebSocketMessage): void {
    if (this.#ended) return;
    this.#queue.push(msg);
    if (!this.#paused && this.#queue.length >= HIGH_WATER_MARK && msg.type !== 'close') {
      this.#paused = true;
      this.#ws.pause();
    }
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WebSocketMessage> {
    for (;;) {
      const msg = this.#queue.shift();
      if (msg) {
        if (this.#paused && this.#queue.length < HIGH_WATER_MARK / 2) {
          this.#paused = false;
          this.#ws.resume();
        }
        // While fan-out deliveries wait for a turn, the next message waits too (DeliverySlicer.drained):
        // what a handler does with it (`app.publish`) would only add to that backlog.
        if (msg.type !== 'close') await deliveries.drained();
        yield msg;
        if (msg.type === 'close') return;
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
    }
  }

  /**
   * Send a message: a string is text, a Buffer is binary; `close` closes the connection with its code.
   * Resolves once the frame is handed to the socket; rejects when the connection is not open.
   */
  send(message: WebSocketMessage | string | Buffer): Promise<void> {
    const msg: WebSocketMessage = typeof message === 'string' ? { type: 'text', data: message }
      : Buffer.isBuffer(message) ? { type: 'binary', data: message } : message;
    if (msg.type === 'close') {
      this.close(msg.code, msg.reason);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const done = (err?: Error | null) => (err ? reject(err) : resolve());
      if (this.#ws.readyState !== this.#ws.OPEN) return reject(new Error('WebSocket is not open'));
      switch (msg.type) {
        case 'text': return this.#ws.send(msg.data, { binary: false }, done);
        case 'binary': return this.#ws.send(msg.data, { binary: true }, done);
        case 'ping': return this.#ws.ping(msg.data, undefined, done);
        case 'pong': return this.#ws.pong(msg.data, undefined, done);
      }
    });
  }

  /**
   * Forward every event published on `topic` (`app.publish(topic, payload)`, on any instance when the
   * App's pub/sub is shared) to this client: a string as a text frame, any other JSON value as JSON
   * text. Stops when the connection closes or when the returned function is called. Events reach the
   * route's sessions a slice at a time per turn of the event loop (lib/ws/fanout.ts), and each is
   * queued on the socket without waiting for the previous one to be flushed: a client that does not
   * read meets the route's send-buffer bound (`maxBufferedBytes`: closed with 1013, or its events
   * dropped; lib/ws/fairness.ts) instead of holding events in the pub/sub's queue. When the pub/sub
   * ends the subscription itself (its subscriber fell `maxQueued` events behind), the connection is
   * closed with CLOSE_FELL_BEHIND (1013) rather than left open and silent.
   */
  subscribe(topic: string): () => void {
    const events = (this.#pubsub ??= new MemoryPubSub()).subscribe(topic);
    let stopped = false;
    const stop = () => {
      stopped = true;
      void events.return?.();
    };
    void (async () => {
      for await (const payload of events) {
        if (!this.isOpen) break;
        void this.send(typeof payload === 'string' ? payload : JSON.stringify(payload)).catch(() => undefined);
      }
      // The pub/sub ended the subscription itself: this client fell `maxQueued` events behind. Left
      // open, the socket would silently receive nothing more; 1013 (try again later, RFC 6455 §7.4.1)
      // tells the client to reconnect.
      if (!stopped && this.isOpen) this.close(CLOSE_FELL_BEHIND, 'Too far behind the events of this subscription');
    })().catch(() => undefined);
    void this.closed.then(stop);
    return stop;
  }

  /**
   * Start the closing handshake (RFC 6455 §7.1.2). `code` must be 1000 or 3000–4999 (application
   * codes) or one of the §7.4.1 codes an endpoint may send; ws throws a TypeError otherwise.
   */
  close(code = 1000, reason = ''): void {
    if (this.#ws.readyState === this.#ws.CLOSED || this.#ws.readyState === this.#ws.CLOSING) return;
    this.#ws.close(code, reason);
  }

  /** Drop the connection without a closing handshake. */
  terminate(): void {
    this.#ws.terminate();
  }
}
