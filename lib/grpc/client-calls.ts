/**
 * `grpc.max_calls_per_client` across a client's HTTP/2 sessions (issue 35 item 5), and a refused burst that
 * costs little whatever the order of sessions and calls (issue 44 item 8).
 *
 * Each call is counted against its client (the peer address, IPv6 by /56) from its first HEADERS until its
 * stream closes; the call past the limit ends at once with one static Trailers-Only RESOURCE_EXHAUSTED.
 * That answer still costs what node's HTTP/2 layer spends on every stream (a stream object, its events and
 * teardown, ~60 µs): the profile of 100 sessions × 100 calls from one address put 48% of the server's
 * CPU in node's HTTP/2 internals and 18% in GC, most of it for the 9,700 refused streams.
 *
 * So once a client is refused a call, every session it holds is told SETTINGS_MAX_CONCURRENT_STREAMS 0, and so
 * is each session it opens while it is at the limit. nghttp2 applies a lowered limit to the streams it reads
 * from then on, before the peer acknowledges it, and refuses them itself (RST_STREAM REFUSED_STREAM, RFC 9113
 * §5.1.2 and §8.7: not processed, safe to retry; grpc-js retries such a call transparently) without node
 * making a stream object: the rest of a burst already on the wire costs nghttp2's HPACK decoding only. The
 * hold happens inside node's HEADERS callback, so a burst read in one chunk is cut at its first refusal.
 * Sessions opened idle first are held like the others (issue 44: 10,000 calls over 100 such sessions
 * stalled `/health` ~1 s, when only sessions opened at the limit were held).
 *
 * While held, each time one of the client's calls ends its sessions share what the client may still open:
 * each gets its own open calls plus an equal part of the headroom (`max_calls_per_client` minus the calls in
 * flight), so a conforming client (RFC 9113 §6.5.3: it honours the SETTINGS) is not refused again; all of
 * `max_concurrent_streams` comes back once it has no call left. Giving every session its full limit back at
 * the first call that ended made a client with two channels past its limit burst and be refused over and over,
 * and nghttp2 counts the streams it refuses against its own rapid-reset budget: past ~1000 it closed a session
 * with GOAWAY INTERNAL_ERROR, failing its admitted calls too. A client that only reaches its limit, never past
 * it (one channel at max_concurrent_streams), is never held: no SETTINGS churn for it. One SETTINGS per
 * session is in flight at a time (node refuses more than `maxOutstandingSettings` unacknowledged); a change
 * made meanwhile is sent when the peer acknowledges.
 */
import type { Http2Session, ServerHttp2Stream } from 'node:http2';
import { KeyedCounter } from '../server/client-budget.js';
import { clientKeys, DEFAULT_IPV6_SUBNET } from '../../middleware/rate-limit/client-key.js';

/** One session's SETTINGS_MAX_CONCURRENT_STREAMS as keel wants it, what the peer has yet to acknowledge, and its calls in flight. */
interface SessionLimit { want: number; sent: number; waiting: boolean; open: number }

export class ClientCalls {
  /** Calls refused by the limit (Trailers-Only) since the server started. */
  refused = 0;
  /** Times a session was held (SETTINGS_MAX_CONCURRENT_STREAMS 0) because its client was at the limit. */
  held = 0;
  readonly #counter: KeyedCounter;
  readonly #max: number;
  readonly #streamsPerSession: number;
  readonly #key = clientKeys(DEFAULT_IPV6_SUBNET);
  /** Every open session by client key. */
  readonly #sessions = new Map<string, Set<Http2Session>>();
  /** Clients whose sessions are held. */
  readonly #holding = new Set<string>();
  readonly #limits = new WeakMap<Http2Session, SessionLimit>();

  constructor(maxCallsPerClient: number, maxConcurrentStreams: number) {
    this.#max = maxCallsPerClient;
    this.#streamsPerSession = maxConcurrentStreams;
    this.#counter = new KeyedCounter(maxCallsPerClient);
  }

  /** The http2 server's 'session' event: known from now on; held at once when its client is at the limit. */
  onSession(session: Http2Session): void {
    if (session.destroyed || session.closed) return; // refused by the session caps: closing already
    const key = this.#key(session.socket?.remoteAddress ?? 'unknown');
    let sessions = this.#sessions.get(key);
    if (!sessions) this.#sessions.set(key, (sessions = new Set()));
    sessions.add(session);
    this.#limits.set(session, { want: this.#streamsPerSession, sent: this.#streamsPerSession, waiting: false, open: 0 });
    session.once('close', () => {
      const set = this.#sessions.get(key);
      set?.delete(session);
      if (set?.size === 0) {
        this.#sessions.delete(key);
        this.#holding.delete(key);
      }
    });
    // Held until the client's next call ends and the headroom is shared again (#release).
    if (this.#holding.has(key) || this.#counter.count(key) >= this.#max) {
      this.#holding.add(key);
      this.#apply(session, 0);
    }
  }

  /** Count the call on `stream`; false (nothing counted) when its client is at the limit, whose sessions are then held. */
  admit(stream: ServerHttp2Stream): boolean {
    const key = this.#key(stream.session?.socket?.remoteAddress ?? 'unknown');
    if (!this.#counter.acquire(key)) {
      this.refused++;
      if (!this.#holding.has(key)) {
        this.#holding.add(key);
        for (const session of this.#sessions.get(key) ?? []) this.#apply(session, 0);
      }
      return false;
    }
    const limit = stream.session ? this.#limits.get(stream.session) : undefined;
    if (limit) limit.open++;
    stream.once('close', () => {
      if (limit) limit.open--;
      this.#release(key);
    });
    return true;
  }

  #release(key: string): void {
    this.#counter.release(key);
    if (!this.#holding.has(key)) return;
    const sessions = this.#sessions.get(key) ?? new Set<Http2Session>();
    const count = this.#counter.count(key);
    if (count === 0) this.#holding.delete(key);
    const share = Math.floor((this.#max - count) / Math.max(1, sessions.size));
    for (const session of sessions) {
      const open = this.#limits.get(session)?.open ?? 0;
      this.#apply(session, count === 0 ? this.#streamsPerSession : Math.min(this.#streamsPerSession, open + share));
    }
  }

  /** Tell `session` its limit is `want` streams, now or once the peer has acknowledged the SETTINGS in flight. */
  #apply(session: Http2Session, want: number): void {
    const limit = this.#limits.get(session);
    if (!limit) return;
    if (want === 0 && limit.want !== 0) this.held++;
    limit.want = want;
    if (limit.waiting || limit.sent === want || session.destroyed || session.closed) return;
    limit.waiting = true;
    limit.sent = want;
    try {
      session.settings({ maxConcurrentStreams: want }, () => {
        limit.waiting = false;
        if (limit.want !== limit.sent) this.#apply(session, limit.want);
      });
    } catch {
      limit.waiting = false; // closing meanwhile: nothing to tell it
    }
  }
}
