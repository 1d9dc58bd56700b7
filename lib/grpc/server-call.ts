/**
 * The state machine of one gRPC call (lib/grpc/call.ts): headers and trailers, the deadline, the guard,
 * dispatch by method kind, response framing under the size caps, and the final status. What the request's
 * headers decide (method, codec, encodings, deadline, request id) is read by ./call-head.ts; a response message is
 * encoded and framed by ./response-frame.ts.
 */
import { performance } from 'node:perf_hooks';
import { constants as h2, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import { GrpcError, GrpcStatus, encodeGrpcMessage, statusFromError, type GrpcMetadataInit, type GrpcStatusObject } from './status.js';
import { GRPC_ENCODINGS, type GrpcEncoding } from './framing.js';
import { RequestReader, type ReadFailure } from './reader.js';
import { incomingMetadata, outgoingHeaders } from './metadata.js';
import type { GrpcCallContext, GrpcIncomingMetadata, GrpcMethod, GrpcRouter } from './router.js';
import type { GrpcCallSpan } from '../observability/grpc-spans.js';
import type { GrpcCharge } from './work.js';
import type { GrpcCallSettings } from './call-settings.js';
import { responseFrame } from './response-frame.js';
import { readCallHead } from './call-head.js';

/** How long a client may keep sending after the call ended before its stream is reset. */
const REQUEST_DRAIN_GRACE_MS = 1000;
const MAX_TIMER_MS = 2 ** 31 - 1;

export class ServerCall {
  private headersSent = false;
  private finished = false;
  private readonly initial: OutgoingHttpHeaders = {};
  private readonly trailers: OutgoingHttpHeaders = {};
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private responseEncoding: GrpcEncoding | undefined;
  private sentBytes = 0;
  private reader: RequestReader | undefined;

  constructor(
    private readonly stream: ServerHttp2Stream,
    private readonly headers: IncomingHttpHeaders,
    private readonly s: GrpcCallSettings,
    private readonly span?: GrpcCallSpan,
    /** The work limits' charge (lib/grpc/work.ts): each slice of work below is timed and charged to the client. */
    private readonly charge?: GrpcCharge,
  ) {
    stream.on('error', () => {
      // Stream errors (RST from the client, session teardown) end in 'close', handled below.
    });
    stream.on('close', () => {
      clearTimeout(this.timer);
      if (!this.finished) {
        this.finished = true;
        this.abort.abort(new GrpcError(GrpcStatus.CANCELLED, 'Call cancelled'));
        this.span?.end(GrpcStatus.CANCELLED, 'Call cancelled');
      }
    });
  }

  /**
   * Shutdown, past grpc.shutdown_stream_grace: a call whose client has not ended its side (an open client or
   * bidi stream, RFC 9113 §5.1 "open" rather than "half-closed (remote)") ends UNAVAILABLE, so the client
   * retries elsewhere; a call whose client has sent everything (unary, server streaming) keeps running.
   */
  endIfClientSending(): void {
    if (this.finished || this.stream.destroyed || this.stream.closed) return;
    if (this.stream.state?.remoteClose) return;
    this.finish({ code: GrpcStatus.UNAVAILABLE, message: 'Server is shutting down' });
  }

  private get acceptEncodingHeader(): string {
    return this.s.compression ? `identity,${GRPC_ENCODINGS.join(',')}` : 'identity';
  }

  /** Response headers (initial metadata), sent once before the first message. */
  private sendHeaders(): void {
    if (this.headersSent || this.finished) return;
    this.headersSent = true;
    this.stream.respond(
      {
        [h2.HTTP2_HEADER_STATUS]: 200,
        'content-type': 'application/grpc',
        'grpc-accept-encoding': this.acceptEncodingHeader,
        ...(this.responseEncoding ? { 'grpc-encoding': this.responseEncoding } : {}),
        ...this.initial,
      },
      { waitForTrailers: true },
    );
  }

  /** End the call with `status` (once); `httpStatus` only matters for a Trailers-Only response. */
  finish(status: GrpcStatusObject, httpStatus = 200): void {
    if (this.finished) return;
    this.finished = true;
    clearTimeout(this.timer);
    this.span?.end(status.code, status.message);
    if (status.code !== GrpcStatus.OK) this.abort.abort(new GrpcError(status.code, status.message));
    const stream = this.stream;
    if (stream.destroyed || stream.closed) return;
    let extra: OutgoingHttpHeaders = {};
    try {
      extra = outgoingHeaders(status.metadata, {});
    } catch {
      // Bad trailing metadata from a thrown GrpcError: the status still goes out.
    }
    const trailers: OutgoingHttpHeaders = {
      ...this.trailers,
      ...extra,
      'grpc-status': String(status.code),
      ...(status.message ? { 'grpc-message': encodeGrpcMessage(status.message) } : {}),
      ...(status.retryPushbackMs !== undefined && status.retryPushbackMs >= 0 ? { 'grpc-retry-pushback-ms': String(Math.round(status.retryPushbackMs)) } : {}),
    };
    // The client may still be sending (an oversize message, a handler that returned early): its data is
    // dropped; grpc-js cancels its side when the status arrives. A client that keeps sending is reset with
    // NO_ERROR (HTTP/2 §8.1) after a grace period: an immediate RST_STREAM could overtake the trailers.
    this.reader?.discard();
    const closeRequestSide = () => {
      if (stream.readableEnded || stream.destroyed) return;
      const grace = setTimeout(() => {
        if (!stream.destroyed) stream.close(h2.NGHTTP2_NO_ERROR);
      }, REQUEST_DRAIN_GRACE_MS);
      grace.unref();
      stream.once('close', () => clearTimeout(grace));
    };
    if (!this.headersSent) {
      this.headersSent = true;
      stream.respond(
        {
          [h2.HTTP2_HEADER_STATUS]: httpStatus,
          'content-type': 'application/grpc',
          'grpc-accept-encoding': this.acceptEncodingHeader,
          ...this.initial,
          ...trailers,
        },
        { endStream: true },
      );
      closeRequestSide();
      return;
    }
    stream.once('wantTrailers', () => {
      stream.sendTrailers(trailers);
      closeRequestSide();
    });
    stream.end();
  }

  private context(method: GrpcMethod, metadata: GrpcIncomingMetadata, deadline: number | undefined, requestId: string | undefined, auth: Readonly<Record<string, unknown>> | undefined): GrpcCallContext {
    const call = this;
    return {
      path: method.path,
      service: method.service,
      method: method.name,
      metadata,
      signal: this.abort.signal,
      deadline,
      requestId,
      auth,
      peer: this.stream.session?.socket?.remoteAddress,
      sendMetadata(md: GrpcMetadataInit) {
        if (call.headersSent) throw new Error('gRPC response metadata was already sent');
        outgoingHeaders(md, call.initial);
        call.sendHeaders();
      },
      setTrailer(key: string, value: string | Buffer) {
        outgoingHeaders({ [key]: value }, call.trailers);
      },
    };
  }

  /** Write one response message (./response-frame.ts) under max_stream_response_bytes, waiting for HTTP/2 flow control. */
  private async send(method: GrpcMethod, message: unknown, streaming: boolean): Promise<void> {
    if (this.finished) throw this.abort.signal.reason ?? new GrpcError(GrpcStatus.CANCELLED, 'Call ended');
    const frame = await responseFrame(method, message, this.s.maxMessageSize, this.responseEncoding, this.charge);
    const cap = this.s.maxStreamResponseBytes;
    if (streaming && cap !== null && this.sentBytes + frame.length > cap) {
      throw new GrpcError(GrpcStatus.RESOURCE_EXHAUSTED, `Streaming response exceeds max_stream_response_bytes (${cap})`);
    }
    this.sentBytes += frame.length;
    this.sendHeaders();
    if (this.finished) throw this.abort.signal.reason;
    if (!this.stream.write(frame)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.stream.off('drain', done);
          this.stream.off('close', done);
          resolve();
        };
        this.stream.on('drain', done);
        this.stream.on('close', done);
      });
    }
  }

  private async pipe(method: GrpcMethod, out: unknown): Promise<void> {
    if (!out || (typeof (out as AsyncIterable<unknown>)[Symbol.asyncIterator] !== 'function' && typeof (out as Iterable<unknown>)[Symbol.iterator] !== 'function')) {
      throw new TypeError(`Streaming handler of ${method.path} must return an (async) iterable`);
    }
    if (!this.charge) {
      for await (const message of out as AsyncIterable<unknown>) await this.send(method, message, true);
      return;
    }
    // Charged: each next() is timed, the synchronous part of producing a message (a generator's body up
    // to its next await or yield). Otherwise what for await does: values awaited, return() on early exit.
    const iterable = out as AsyncIterable<unknown> & Iterable<unknown>;
    const it: Iterator<unknown> | AsyncIterator<unknown> = typeof iterable[Symbol.asyncIterator] === 'function' ? iterable[Symbol.asyncIterator]() : iterable[Symbol.iterator]();
    let done = false;
    try {
      for (;;) {
        const step = this.timed(() => it.next());
        const r = await step;
        if (r.done) {
          done = true;
          return;
        }
        await this.send(method, await r.value, true);
      }
    } finally {
      if (!done) await it.return?.();
    }
  }

  /** `fn()`, its time charged to the client. */
  private timed<T>(fn: () => T): T {
    const t0 = performance.now();
    try {
      return fn();
    } finally {
      this.charge?.(performance.now() - t0);
    }
  }

  async run(router: GrpcRouter): Promise<void> {
    const headers = this.headers;
    const head = readCallHead(headers, router, this.s);
    if ('refusal' in head) return this.finish(head.refusal, head.httpStatus);
    const { path, method, requestEncoding, deadline, timeoutMs, requestId } = head;
    this.responseEncoding = head.responseEncoding;
    // setTimeout fires at once for delays over 2^31-1 ms (~24.8 days; grpc-timeout allows 99999999H): such a
    // deadline is as good as none.
    if (timeoutMs !== undefined && timeoutMs <= MAX_TIMER_MS) {
      this.timer = setTimeout(() => this.finish({ code: GrpcStatus.DEADLINE_EXCEEDED, message: 'Deadline exceeded' }), timeoutMs);
    }
    if (requestId !== undefined) this.initial['x-request-id'] = requestId;

    const metadata = incomingMetadata(headers);
    let auth: Readonly<Record<string, unknown>> | undefined;
    if (this.s.guard && !this.s.publicServices.has(method.service)) {
      const peer = this.stream.session?.socket?.remoteAddress;
      auth = (await this.s.guard({ path, service: method.service, method: method.name, metadata, headers, peer })) ?? undefined;
      if (this.finished) return;
    }

    const decode = this.charge ? (b: Buffer) => this.timed(() => method.decode(b)) : method.decode;
    const reader = (this.reader = new RequestReader(
      this.stream,
      decode,
      requestEncoding,
      this.s.maxMessageSize,
      (f: ReadFailure) => this.finish({ code: f.code, message: f.message }, f.httpStatus),
      this.abort.signal,
      method.kind === 'client_streaming' || method.kind === 'bidi_streaming' ? this.s.streamRequestLimits : undefined,
    ));
    if (this.finished) reader.discard();
    const ctx = this.context(method, metadata, deadline, requestId, auth);
    const own = method.handler as (input: unknown, call: GrpcCallContext) => unknown;
    // Charged: the handler's synchronous part (all of a sync one; an async one up to its first await).
    const handler = this.charge ? (input: unknown, call: GrpcCallContext) => this.timed(() => own(input, call)) : own;
    switch (method.kind) {
      case 'unary':
        await this.send(method, await handler(await reader.single(), ctx), false);
        break;
      case 'client_streaming':
        await this.send(method, await handler(reader, ctx), false);
        break;
      case 'server_streaming':
        await this.pipe(method, handler(await reader.single(), ctx));
        break;
      case 'bidi_streaming':
        await this.pipe(method, handler(reader, ctx));
        break;
    }
    this.finish({ code: GrpcStatus.OK, message: '' });
  }

  fail(err: unknown, path: string): void {
    if (this.finished) return;
    const status = statusFromError(err);
    if (!(err instanceof GrpcError) && status.code === GrpcStatus.UNKNOWN) {
      this.s.onError?.(err, path);
      this.span?.error(err);
    }
    this.finish(status);
  }
}
