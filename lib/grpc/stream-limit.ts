/**
 * One HTTP/2 session's SETTINGS_MAX_CONCURRENT_STREAMS, which two parts of keel lower for their own reasons:
 * max_calls_per_client holds a client's sessions while it is at its limit (./client-calls.ts), and a suspect
 * client's new session is told only `h2_unproven_streams` until it has answered the server's first PING (./h2-abuse.ts). Each says
 * what it wants; the session is told the least of them, `grpc.max_concurrent_streams` when neither lowers it.
 * nghttp2 applies a lowered limit to what it reads next, before the peer acknowledges it, so a lowering is sent at
 * once; a raise waits until the SETTINGS in flight are acknowledged (node refuses more than
 * `maxOutstandingSettings` unacknowledged). A calmed session is told 0 at once, and nothing raises it again.
 */
import type { Http2Session } from 'node:http2';

/** Who lowers a session's limit: max_calls_per_client's hold, or the wait for a new session's PING answer. */
export type StreamLimitSource = 'calls' | 'proof';

/** SETTINGS frames one session may have unacknowledged at once here (node's own default cap is 10). */
const MAX_IN_FLIGHT = 3;

export class StreamLimit {
  readonly #wants: Record<StreamLimitSource, number>;
  readonly #full: number;
  #sent: number;
  #inFlight = 0;
  #calm = false;

  /** `full`: `grpc.max_concurrent_streams`, what the server's own SETTINGS said, the limit when nothing lowers it. */
  constructor(readonly session: Http2Session, full: number) {
    this.#full = full;
    this.#wants = { calls: full, proof: full };
    this.#sent = full;
  }

  /** What `source` wants the session's limit to be (`null`: no say, the full limit). */
  set(source: StreamLimitSource, want: number | null): void {
    this.#wants[source] = want ?? this.#full;
    this.#flush();
  }

  /** SETTINGS_MAX_CONCURRENT_STREAMS 0 at once, for good (GOAWAY ENHANCE_YOUR_CALM, ./h2-abuse.ts). */
  calm(): void {
    this.#calm = true;
    this.#sent = 0;
    try {
      this.session.settings({ maxConcurrentStreams: 0 });
    } catch {
      // Closing or destroyed meanwhile.
    }
  }

  #flush(): void {
    const want = Math.min(this.#wants.calls, this.#wants.proof, this.#full);
    if (this.#calm || want === this.#sent || this.session.destroyed || this.session.closed) return;
    // A lowering goes at once (what the client already sent is refused by nghttp2 from the next read); a raise
    // once every SETTINGS in flight is acknowledged, so the peer never acts on a higher limit than keel's latest.
    if (want > this.#sent ? this.#inFlight > 0 : this.#inFlight >= MAX_IN_FLIGHT) return;
    this.#inFlight++;
    this.#sent = want;
    try {
      this.session.settings({ maxConcurrentStreams: want }, () => {
        this.#inFlight--;
        this.#flush();
      });
    } catch {
      this.#inFlight--; // closing meanwhile: nothing to tell it
    }
  }
}

const limits = new WeakMap<Http2Session, StreamLimit>();

/** Make `session`'s StreamLimit (lib/grpc/server.ts, on the http2 server's 'session' event, before anything asks for it). */
export function trackStreamLimit(session: Http2Session, full: number): StreamLimit {
  const limit = new StreamLimit(session, full);
  limits.set(session, limit);
  return limit;
}

/** `session`'s StreamLimit, if the server tracks it. */
export function streamLimitOf(session: Http2Session): StreamLimit | undefined {
  return limits.get(session);
}
