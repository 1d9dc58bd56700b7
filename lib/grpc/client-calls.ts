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
 * While held, when one of the client's calls ends, the headroom (`max_calls_per_client` minus the calls in
 * flight) that no session was granted yet is shared among its sessions (each: its open calls plus its part), and
 * a grant is never lowered, so a conforming client (RFC 9113 §6.5.3: it honours the SETTINGS) is not refused
 * again whatever SETTINGS it is still acting on; all of `max_concurrent_streams` comes back once it has no call
 * left. Each hold still refuses what the client sent before the SETTINGS reached it, and nghttp2 counts those
 * against its own rapid-reset budget (past ~1000: GOAWAY INTERNAL_ERROR, failing the session's admitted calls):
 * so a session is held at most SESSION_HOLD_BURST times at once (two grpc-js channels past their client's limit
 * lost 100 admitted calls that way before this bound). A client that only reaches its limit, never past
 * it (one channel at max_concurrent_streams), is never held: no SETTINGS churn for it. The SETTINGS themselves
 * are sent by ./stream-limit.ts, which also knows a new session's limit before it answered the server's PING.
 */
import type { Http2Session, ServerHttp2Stream } from 'node:http2';
import { KeyedCounter } from '../server/client-budget.js';
import { clientKeys, DEFAULT_IPV6_SUBNET } from '../../middleware/rate-limit/client-key.js';
import { streamLimitOf } from './stream-limit.js';

/** One session's SETTINGS_MAX_CONCURRENT_STREAMS as max_calls_per_client wants it, and its calls in flight. */
interface SessionLimit { want: number; open: number; holds: number; holdsAt: number }

/**
 * Holds one session may take, as a token bucket: 4 at once, one more every 4 s. Each hold makes nghttp2 refuse
 * what the client already sent, and nghttp2 counts the streams it refuses against its own rapid-reset budget
 * (~1000, then GOAWAY INTERNAL_ERROR, failing the session's admitted calls too). Past this, the session is left
 * as it is and keel refuses its excess calls itself (RESOURCE_EXHAUSTED), as before holds existed.
 */
const SESSION_HOLD_BURST = 4;
const SESSION_HOLD_EVERY_MS = 4_000;

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
    this.#limits.set(session, { want: this.#streamsPerSession, open: 0, holds: SESSION_HOLD_BURST, holdsAt: performance.now() });
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
    const sessions = [...(this.#sessions.get(key) ?? [])];
    const count = this.#counter.count(key);
    if (count === 0) {
      this.#holding.delete(key);
      for (const session of sessions) this.#apply(session, this.#streamsPerSession);
      return;
    }
    // Only what no session was granted yet is handed out: a granted limit is never lowered, so whatever SETTINGS
    // the client is still acting on, its sessions together open at most the headroom. A call that ends frees a
    // slot in its own session's grant; the client's headroom grows by the same one.
    let granted = 0;
    for (const session of sessions) {
      const l = this.#limits.get(session);
      if (l) granted += Math.max(0, l.want - l.open);
    }
    let extra = this.#max - count - granted;
    for (let i = 0; extra > 0 && i < sessions.length; i++) {
      const each = Math.ceil(extra / (sessions.length - i));
      const l = this.#limits.get(sessions[i]!);
      if (!l) continue;
      const want = Math.min(this.#streamsPerSession, Math.max(l.want, l.open) + each);
      extra -= want - Math.max(l.want, l.open);
      this.#apply(sessions[i]!, want);
    }
  }

  /** Tell `session` its limit is `want` streams (./stream-limit.ts: a hold at once, a raise once the SETTINGS in flight are acknowledged). */
  #apply(session: Http2Session, want: number): void {
    const limit = this.#limits.get(session);
    if (!limit) return;
    if (want === 0 && limit.want !== 0) {
      const now = performance.now();
      limit.holds = Math.min(SESSION_HOLD_BURST, limit.holds + (now - limit.holdsAt) / SESSION_HOLD_EVERY_MS);
      limit.holdsAt = now;
      if (limit.holds < 1) return;
      limit.holds--;
      this.held++;
    }
    limit.want = want;
    streamLimitOf(session)?.set('calls', want);
  }
}
