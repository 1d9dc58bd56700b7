/**
 * `grpc.max_calls_per_client` across a client's HTTP/2 sessions (issue 35 item 5), and a refused burst that
 * costs little.
 *
 * Each call is counted against its client (the peer address, IPv6 by /56) from its first HEADERS until its
 * stream closes; the call past the limit ends at once with one static Trailers-Only RESOURCE_EXHAUSTED.
 * That answer still costs what node's HTTP/2 layer spends on every stream (a stream object, its events and
 * teardown, ~60 µs): the profile of 100 sessions × 100 calls from one address put 48% of the server's
 * CPU in node's HTTP/2 internals and 18% in GC, most of it for the 9,700 refused streams.
 *
 * So a session that opens while its client already has `max_calls_per_client` calls in flight is told
 * SETTINGS_MAX_CONCURRENT_STREAMS 0 as soon as it exists, before node reads what the client sent with its
 * preface: nghttp2 then refuses those streams itself (RST_STREAM REFUSED_STREAM, RFC 9113 §5.1.2 and §8.7:
 * not processed, safe to retry) without node making a stream object of any. When one of the client's calls
 * ends, its held sessions are given `max_concurrent_streams` again (a conforming client acknowledges the
 * SETTINGS before it opens more streams).
 */
import type { Http2Session, ServerHttp2Stream } from 'node:http2';
import { KeyedCounter } from '../server/client-budget.js';
import { clientKeys, DEFAULT_IPV6_SUBNET } from '../../middleware/rate-limit/client-key.js';

export class ClientCalls {
  /** Calls refused by the limit (Trailers-Only) since the server started. */
  refused = 0;
  /** Sessions opened while their client was at the limit (its streams refused by nghttp2 until a call ended). */
  held = 0;
  readonly #counter: KeyedCounter;
  readonly #max: number;
  readonly #streamsPerSession: number;
  readonly #key = clientKeys(DEFAULT_IPV6_SUBNET);
  /** Held sessions by client key. */
  readonly #holding = new Map<string, Set<Http2Session>>();

  constructor(maxCallsPerClient: number, maxConcurrentStreams: number) {
    this.#max = maxCallsPerClient;
    this.#streamsPerSession = maxConcurrentStreams;
    this.#counter = new KeyedCounter(maxCallsPerClient);
  }

  /** The http2 server's 'session' event: hold the session when its client is at the limit. */
  onSession(session: Http2Session): void {
    const key = this.#key(session.socket?.remoteAddress ?? 'unknown');
    if (this.#counter.count(key) < this.#max || session.destroyed || session.closed) return;
    try {
      session.settings({ maxConcurrentStreams: 0 });
    } catch {
      return; // a session refused by the session caps is closing already
    }
    this.held++;
    let held = this.#holding.get(key);
    if (!held) this.#holding.set(key, (held = new Set()));
    held.add(session);
    session.once('close', () => {
      const set = this.#holding.get(key);
      set?.delete(session);
      if (set?.size === 0) this.#holding.delete(key);
    });
  }

  /** Count the call on `stream`; false (nothing counted) when its client is at the limit. */
  admit(stream: ServerHttp2Stream): boolean {
    const key = this.#key(stream.session?.socket?.remoteAddress ?? 'unknown');
    if (!this.#counter.acquire(key)) {
      this.refused++;
      return false;
    }
    stream.once('close', () => this.#release(key));
    return true;
  }

  #release(key: string): void {
    this.#counter.release(key);
    const held = this.#holding.get(key);
    if (!held) return;
    this.#holding.delete(key);
    for (const session of held) {
      if (session.destroyed || session.closed) continue;
      try {
        session.settings({ maxConcurrentStreams: this.#streamsPerSession });
      } catch {
        // Closing meanwhile: nothing to give back.
      }
    }
  }
}
