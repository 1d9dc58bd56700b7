/**
 * The request side of one call: DATA frames → length-prefixed messages → (decompressed) → decoded
 * objects, exposed as an AsyncIterable with backpressure (the HTTP/2 stream is paused while the handler
 * lags, so HTTP/2 flow control slows the client down instead of keel buffering without bound).
 */
import type { ServerHttp2Stream } from 'node:http2';
import { MessageDecoder, MessageTooLargeError, decompressMessage, type GrpcEncoding, type RawMessage } from './framing.js';
import { GrpcError, GrpcStatus } from './status.js';

/** Decoded messages queued before the stream is paused. */
const HIGH_WATER_MESSAGES = 32;

/** Why reading stopped: a status for the whole call; `httpStatus` 413 when a message was over the cap. */
export interface ReadFailure {
  code: number;
  message: string;
  httpStatus?: number;
}

/** Caps on a whole client stream (GrpcConfig.max_stream_request_bytes / _messages); null = none. */
export interface StreamLimits {
  readonly bytes: number | null;
  readonly messages: number | null;
}

/** A client stream past one of its StreamLimits. */
class StreamLimitError extends Error {}

export class RequestReader implements AsyncIterable<unknown> {
  private readonly items: unknown[] = [];
  private ended = false;
  private failure: GrpcError | undefined;
  private wake: (() => void) | undefined;
  private chain: Promise<void> = Promise.resolve();
  private paused = false;
  private discarding = false;
  /** Messages and bytes (after decompression) read so far, counted against `limits`. */
  private messages = 0;
  private bytes = 0;

  constructor(
    private readonly stream: ServerHttp2Stream,
    private readonly decode: (b: Buffer) => unknown,
    private readonly encoding: GrpcEncoding | undefined,
    private readonly maxMessageSize: number,
    private readonly onFailure: (f: ReadFailure) => void,
    private readonly signal: AbortSignal,
    private readonly limits?: StreamLimits,
  ) {
    const decoder = new MessageDecoder(maxMessageSize);
    stream.on('data', (chunk: Buffer) => {
      if (this.failure || this.discarding) return;
      let raws: RawMessage[];
      try {
        raws = decoder.push(chunk);
      } catch (err) {
        this.fail(err);
        return;
      }
      for (const raw of raws) {
        // Counted as they arrive (before decompression and the handler), so a stream past its caps stops
        // here, whether or not the handler keeps up, and nothing more of it is queued.
        if (!this.count(1, raw.data.length)) return;
        this.chain = this.chain.then(() => this.accept(raw));
      }
    });
    const onEnd = () => {
      this.chain = this.chain.then(() => {
        if (decoder.partial) this.fail(new GrpcError(GrpcStatus.INTERNAL, 'Request ended inside a message'));
        this.ended = true;
        this.notify();
      });
    };
    // An empty request whose END_STREAM was read before the call reached this point (a stream dispatched a turn
    // later once its session reset one, ./h2-abuse.ts) has ended already: node ends a stream nobody reads by
    // itself (read(0) at END_STREAM), and 'end' does not repeat. Such a call used to hang until its deadline.
    if (stream.readableEnded) onEnd();
    else stream.on('end', onEnd);
    signal.addEventListener('abort', () => this.notify(), { once: true });
  }

  /** The call is over: drop whatever else arrives (keeps the stream flowing so it can end). */
  discard(): void {
    this.discarding = true;
    this.items.length = 0;
    this.stream.resume();
    this.notify();
  }

  private async accept(raw: RawMessage): Promise<void> {
    if (this.failure || this.discarding) return;
    let data = raw.data;
    try {
      if (raw.compressed) {
        // gRPC over HTTP/2: a compressed flag without a grpc-encoding is a protocol error (INTERNAL).
        if (!this.encoding) throw new GrpcError(GrpcStatus.INTERNAL, 'Compressed message without grpc-encoding');
        data = await decompressMessage(this.encoding, data, this.maxMessageSize);
        if (!this.count(0, data.length - raw.data.length)) return;
      }
    } catch (err) {
      this.fail(err instanceof GrpcError || err instanceof MessageTooLargeError ? err : new GrpcError(GrpcStatus.INTERNAL, 'Request message could not be decompressed'));
      return;
    }
    let message: unknown;
    try {
      message = this.decode(data);
    } catch {
      this.fail(new GrpcError(GrpcStatus.INTERNAL, 'Request message could not be decoded'));
      return;
    }
    this.items.push(message);
    if (this.items.length >= HIGH_WATER_MESSAGES && !this.paused) {
      this.paused = true;
      this.stream.pause();
    }
    this.notify();
  }

  /** Adds to the stream's counts; false (and the call ended with RESOURCE_EXHAUSTED) once a cap is passed. */
  private count(messages: number, bytes: number): boolean {
    this.messages += messages;
    this.bytes += bytes;
    const l = this.limits;
    if (!l) return true;
    if (l.messages !== null && this.messages > l.messages) {
      this.fail(new StreamLimitError(`Client stream exceeds max_stream_request_messages (${l.messages} messages per call)`));
      return false;
    }
    if (l.bytes !== null && this.bytes > l.bytes) {
      this.fail(new StreamLimitError(`Client stream exceeds max_stream_request_bytes (${l.bytes} bytes per call)`));
      return false;
    }
    return true;
  }

  private fail(err: unknown): void {
    if (this.failure) return;
    if (err instanceof StreamLimitError) {
      // Not 413: the earlier messages were accepted; the call ends with trailers (grpc-status 8 and the message).
      this.failure = new GrpcError(GrpcStatus.RESOURCE_EXHAUSTED, err.message);
      this.items.length = 0;
      this.onFailure({ code: GrpcStatus.RESOURCE_EXHAUSTED, message: err.message });
    } else if (err instanceof MessageTooLargeError) {
      // Spec (gRPC errors 1): a message over max_message_size is rejected with HTTP 413; the grpc-status
      // sent with it (RESOURCE_EXHAUSTED) is what gRPC clients report.
      const message = `Request message of ${err.size} bytes exceeds max_message_size (${err.limit})`;
      this.failure = new GrpcError(GrpcStatus.RESOURCE_EXHAUSTED, message);
      this.onFailure({ code: GrpcStatus.RESOURCE_EXHAUSTED, message, httpStatus: 413 });
    } else {
      const e = err as GrpcError;
      this.failure = e;
      this.onFailure({ code: e.code, message: e.message });
    }
    this.notify();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  private async next(): Promise<IteratorResult<unknown>> {
    for (;;) {
      if (this.failure) throw this.failure;
      if (this.signal.aborted) throw this.signal.reason;
      if (this.discarding) return { value: undefined, done: true };
      if (this.items.length) {
        const value = this.items.shift();
        if (this.paused && this.items.length < HIGH_WATER_MESSAGES / 2) {
          this.paused = false;
          this.stream.resume();
        }
        return { value, done: false };
      }
      if (this.ended) return { value: undefined, done: true };
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Exactly one message (unary and server-streaming requests), after the client half-closed. */
  async single(): Promise<unknown> {
    const first = await this.next();
    if (first.done) throw new GrpcError(GrpcStatus.INTERNAL, 'Request message missing');
    const second = await this.next();
    if (!second.done) throw new GrpcError(GrpcStatus.INTERNAL, 'More than one request message for a unary request');
    return first.value;
  }

  [Symbol.asyncIterator](): AsyncIterator<unknown> {
    return { next: () => this.next() };
  }
}
