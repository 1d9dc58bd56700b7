/**
 * HTTP/2 abuse limits of the shared port, keel's own (issue 44 #3): HTTP/2 "rapid reset" (CVE-2023-44487) opens a
 * stream and resets it at once, over and over. Every stream still costs node a stream object, its events and the
 * App's handler, while SETTINGS_MAX_CONCURRENT_STREAMS never bounds anything (a reset stream is no longer open):
 * 100 connections from one address stalled `/health` 11.7 s and left 1 GB of RSS. nghttp2's own mitigation
 * (1.57+: GOAWAY INTERNAL_ERROR after a burst of 1000 resets, then 33/s) stops reading the connection but node
 * never closes it.
 *
 * So, as nginx, Envoy, Go and h2o did, keel keeps two token buckets per connection and two per client (the
 * remote address, IPv6 by /56): streams that end in RST_STREAM (`h2_resets_per_second` / `h2_reset_burst`; a
 * stream the server reset counts too, since a client can provoke those, CVE-2025-8671 "MadeYouReset") and
 * streams opened (`h2_streams_per_second` / `h2_stream_burst`). The stricter of nghttp2's figures and
 * Netty's (200 resets per 30 s) set the per-connection reset defaults, so keel always acts before nghttp2.
 *
 * On a breach the session gets GOAWAY ENHANCE_YOUR_CALM (RFC 9113 §5.4.1, §7: "excessive load") naming the last
 * stream handed to the App, streams it opens afterwards are refused before any handler runs, and it is
 * destroyed after H2_CALM_GRACE_MS (time for the GOAWAY to leave), never left open. While a client's bucket
 * is empty its new sessions are refused the same way at once, so reconnecting does not buy a new budget.
 *
 * What a reset stream costs before it is counted: every stream reaches the App at the end of the turn it arrived
 * in (a reset by then costs no handler), a new session at most `h2_unproven_streams` until it answered the PING
 * sent with its first stream (its RST_STREAMs may come a write after its HEADERS), and a client with unrefilled
 * resets has its new sessions told SETTINGS_MAX_CONCURRENT_STREAMS `h2_unproven_streams` until then (./stream-limit.ts).
 */
import { constants as h2, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import { clientKeys, DEFAULT_IPV6_SUBNET } from '../../middleware/rate-limit/client-key.js';
import type { ServerConfig } from '../records/server.js';
import { streamLimitOf } from './stream-limit.js';
import { Bucket } from './h2-bucket.js';

/** After GOAWAY ENHANCE_YOUR_CALM, how long the session has to send it before it is destroyed, ms: 250. */
export const H2_CALM_GRACE_MS = 250;

/** The settings (ServerConfig `h2_*`, lib/records/server.ts); a null rate turns that bucket off. */
export interface H2AbuseLimits {
  resetsPerSecond: number | null;
  resetBurst: number;
  clientResetsPerSecond: number | null;
  clientResetBurst: number;
  streamsPerSecond: number | null;
  streamBurst: number;
  clientStreamsPerSecond: number | null;
  clientStreamBurst: number;
  /** Streams a new session may hand to the App before it answered the server's first PING; null: no wait. */
  unprovenStreams: number | null;
}

type H2Keys = 'h2_resets_per_second' | 'h2_reset_burst' | 'h2_client_resets_per_second' | 'h2_client_reset_burst'
  | 'h2_streams_per_second' | 'h2_stream_burst' | 'h2_client_streams_per_second' | 'h2_client_stream_burst' | 'h2_unproven_streams';
/** The limits of ServerConfig's `h2_*` keys. */
export function h2AbuseLimitsOf(c: Pick<ServerConfig, H2Keys>): H2AbuseLimits {
  return {
    resetsPerSecond: c.h2_resets_per_second, resetBurst: c.h2_reset_burst,
    clientResetsPerSecond: c.h2_client_resets_per_second, clientResetBurst: c.h2_client_reset_burst,
    streamsPerSecond: c.h2_streams_per_second, streamBurst: c.h2_stream_burst,
    clientStreamsPerSecond: c.h2_client_streams_per_second, clientStreamBurst: c.h2_client_stream_burst,
    unprovenStreams: c.h2_unproven_streams,
  };
}

/** Which limit a calmed session broke (the ServerConfig key). */
export type H2Breach = 'h2_resets_per_second' | 'h2_client_resets_per_second' | 'h2_streams_per_second' | 'h2_client_streams_per_second';

const bucket = (rate: number | null, burst: number) => (rate === null ? undefined : new Bucket(rate, burst));

interface ClientState { resets?: Bucket; streams?: Bucket; sessions: number; forget?: NodeJS.Timeout }
interface SessionState {
  client: ClientState; key: string; resets?: Bucket; streams?: Bucket; calm: boolean;
  /** The last stream admitted (within the stream budgets) and the last handed to the App. */
  lastAdmitted: number; lastDispatched: number;
  /** Once calmed: the last stream id its GOAWAY named; admitted streams above it are refused, not dispatched. */
  goawayId: number;
  /**
   * Streams it may still hand to the App before it answered the server's first PING (Infinity once it has);
   * past them, streams wait in `held` (at most max_concurrent_streams: nghttp2 refuses more) for the answer.
   */
  unproven: number;
  pinged: boolean;
  held: [ServerHttp2Stream, () => void][];
}

export class H2Abuse {
  /** Sessions calmed (GOAWAY ENHANCE_YOUR_CALM) since the server started, by the limit they broke. */
  readonly calmed: Record<H2Breach, number> = { h2_resets_per_second: 0, h2_client_resets_per_second: 0, h2_streams_per_second: 0, h2_client_streams_per_second: 0 };
  readonly #limits: H2AbuseLimits;
  readonly #onBreach: (breach: H2Breach, client: string) => void;
  readonly #key = clientKeys(DEFAULT_IPV6_SUBNET);
  readonly #clients = new Map<string, ClientState>();
  readonly #sessions = new WeakMap<Http2Session, SessionState>();

  /**
   * Reset tokens a client's bucket must hold for a new session of its: one connection's reset burst, capped by
   * the client's own. A session's streams cost node a stream object each before any of their resets is counted,
   * so a client that reconnected the moment it had one token left bought a read's worth of streams per
   * connection (before streams were dispatched at the end of their turn, they even reached the App: 47,500 of
   * 140,000 reset streams in a replay).
   */
  readonly #sessionResets: number;

  constructor(limits: H2AbuseLimits, onBreach: (breach: H2Breach, client: string) => void = () => {}) {
    this.#limits = limits;
    this.#sessionResets = Math.max(1, Math.min(limits.resetsPerSecond === null ? 1 : limits.resetBurst, limits.clientResetBurst));
    this.#onBreach = onBreach;
  }

  /**
   * A new session: false when its client's reset or stream budget is spent (the caller refuses it with GOAWAY
   * ENHANCE_YOUR_CALM); otherwise it is watched from now on.
   */
  admitSession(session: Http2Session): boolean {
    const l = this.#limits;
    const key = this.#key(session.socket?.remoteAddress ?? 'unknown');
    let client = this.#clients.get(key);
    if (client && (client.resets?.below(this.#sessionResets) || client.streams?.empty())) return false;
    if (!client) this.#clients.set(key, (client = { resets: bucket(l.clientResetsPerSecond, l.clientResetBurst), streams: bucket(l.clientStreamsPerSecond, l.clientStreamBurst), sessions: 0 }));
    clearTimeout(client.forget);
    client.sessions++;
    const state: SessionState = { client, key, resets: bucket(l.resetsPerSecond, l.resetBurst), streams: bucket(l.streamsPerSecond, l.streamBurst), calm: false, lastAdmitted: 0, lastDispatched: 0, goawayId: 0,
      unproven: l.unprovenStreams ?? Infinity, pinged: false, held: [] };
    this.#sessions.set(session, state);
    // A client that has reset streams its bucket has not refilled yet has this one told SETTINGS_MAX_CONCURRENT_STREAMS
    // h2_unproven_streams (right after the server's own SETTINGS) until it answered the PING sent with its first
    // stream: nghttp2 refuses what it opens beyond that with no node stream, and a node:http2 rapid-reset client
    // sends 10 streams per write instead of 100. Not every new connection (nor a client's many: 100 idle gRPC
    // sessions then bursting had their calls queued and sent after their holds, 5,284 refused by keel instead of
    // 1): one that opens streams before it has read the server's SETTINGS has those past the limit refused.
    if (l.unprovenStreams !== null && client.resets?.below(client.resets.burst)) {
      streamLimitOf(session)?.set('proof', l.unprovenStreams);
    }
    // A stream reset in the read that brought its HEADERS may reach 'stream' destroyed, detached from its session
    // (node emits 'stream' on a later tick, after the RST_STREAM: the first bytes of a sniffed connection are read
    // in one go): no handler runs for it (lib/grpc/server.ts), and only here is its session known, to charge its reset.
    session.prependListener('stream', (stream: ServerHttp2Stream) => {
      if (stream.destroyed) this.#onReset(session, state, stream.rstCode);
    });
    session.once('close', () => {
      if (--client.sessions > 0) return;
      // Kept until its buckets are full again: closing every connection does not reset a client's budget.
      const ms = Math.max(client.resets?.refillMs() ?? 0, client.streams?.refillMs() ?? 0);
      if (ms <= 0) return void this.#clients.delete(key);
      client.forget = setTimeout(() => this.#clients.delete(key), ms);
      client.forget.unref();
    });
    return true;
  }

  /**
   * Every stream of a watched session, before anything else sees it: `dispatch` hands it to the App, or it is
   * refused (RST_STREAM REFUSED_STREAM, RFC 9113 §8.7: not processed) because its session is calmed or has just
   * broken a limit. node emits 'stream' while it reads the HEADERS, before the RST_STREAM that follows them in the
   * same read, so every admitted stream is dispatched at the end of the turn (#drain): one reset by then reaches
   * no handler. (Dispatching a session's first streams at once, as keel did, let a rapid-reset client's first ~100
   * streams per connection reach the App before a reset counted: 100 new connections, a 2-4 s stall.)
   */
  admitStream(stream: ServerHttp2Stream, dispatch: () => void): void {
    const session = stream.session;
    const state = session ? this.#sessions.get(session) : undefined;
    if (!state) return dispatch();
    if (!state.calm) {
      if (state.streams && !state.streams.take()) this.#calm(session!, state, 'h2_streams_per_second');
      else if (state.client.streams && !state.client.streams.take()) this.#calm(session!, state, 'h2_client_streams_per_second');
    }
    if (state.calm) {
      stream.on('error', () => {});
      // Not inside node's HEADERS callback: resetting there, with the session going away, corrupted node's heap
      // under a flood ("malloc(): mismatching next->prev_size").
      setImmediate(() => {
        if (!stream.destroyed && !session!.destroyed) stream.close(h2.NGHTTP2_REFUSED_STREAM);
      });
      return;
    }
    state.lastAdmitted = Math.max(state.lastAdmitted, stream.id ?? 0);
    stream.once('close', () => this.#onReset(session!, state, stream.rstCode));
    this.#queue(stream, state, dispatch);
  }

  /** Streams admitted this turn, as (stream, its session's state, dispatch) triples, in arrival order. */
  #pending: unknown[] = [];
  /**
   * Hand this turn's streams to the App, after node has read everything that arrived with their HEADERS: a
   * stream reset meanwhile (a rapid-reset client sends HEADERS and RST_STREAM in one write) reaches no handler,
   * and its session is calmed before the App ran for any of them. One setImmediate per turn, not per stream.
   */
  readonly #drain = (): void => {
    const pending = this.#pending;
    this.#pending = [];
    for (let i = 0; i < pending.length; i += 3) {
      const stream = pending[i] as ServerHttp2Stream;
      const state = pending[i + 1] as SessionState;
      if (stream.closed || stream.destroyed) continue;
      const id = stream.id ?? 0;
      if (state.calm && id > state.goawayId) {
        // After its session broke a reset limit: not processed, as its GOAWAY said (RFC 9113 §6.8).
        stream.on('error', () => {});
        if (!stream.session?.destroyed) stream.close(h2.NGHTTP2_REFUSED_STREAM);
        continue;
      }
      if (state.unproven < Infinity) this.#prove(stream.session!, state);
      if (state.unproven <= 0) {
        state.held.push([stream, pending[i + 2] as () => void]);
        continue;
      }
      state.unproven--;
      state.lastDispatched = Math.max(state.lastDispatched, id);
      (pending[i + 2] as () => void)();
    }
  };

  /**
   * A new session's first streams: one PING, and its answer (a round trip) ends the wait. A client's first write
   * may carry only HEADERS, its RST_STREAMs coming in the next write (node's client does so when the first reset
   * finds a write in progress); what it sent before reading the PING has arrived by the time the ACK does, and the
   * held streams it reset reach no handler. Held streams go through #drain again (the ACK may share a read with
   * more resets).
   */
  #prove(session: Http2Session, state: SessionState): void {
    if (state.pinged) return;
    state.pinged = true;
    const proven = () => {
      state.unproven = Infinity;
      if (!state.calm) streamLimitOf(session)?.set('proof', null);
      for (const [stream, dispatch] of state.held.splice(0)) this.#queue(stream, state, dispatch);
    };
    try {
      // false: too many PINGs outstanding (the keepalive's); not worth holding streams for.
      if (!session.ping((err) => (err ? undefined : proven()))) proven();
    } catch {
      // Closing or destroyed: its held streams go with it.
    }
  }

  /**
   * At shutdown: the streams `session` holds for its PING's answer were never processed; REFUSED_STREAM (RFC 9113
   * §8.7: safe to retry elsewhere) rather than keep the session, and the shutdown, waiting for an answer.
   */
  refuseHeld(session: Http2Session): void {
    const state = this.#sessions.get(session);
    if (!state) return;
    for (const [stream] of state.held.splice(0)) {
      stream.on('error', () => {});
      if (!stream.destroyed && !session.destroyed) stream.close(h2.NGHTTP2_REFUSED_STREAM);
    }
  }

  #queue(stream: ServerHttp2Stream, state: SessionState, dispatch: () => void): void {
    this.#pending.push(stream, state, dispatch);
    if (this.#pending.length === 3) setImmediate(this.#drain);
  }

  #onReset(session: Http2Session, state: SessionState, rstCode: number | undefined): void {
    if (state.calm || session.destroyed || rstCode === undefined || rstCode === h2.NGHTTP2_NO_ERROR) return;
    if (state.resets && !state.resets.take()) this.#calm(session, state, 'h2_resets_per_second');
    else if (state.client.resets && !state.client.resets.take()) this.#calm(session, state, 'h2_client_resets_per_second');
  }

  #calm(session: Http2Session, state: SessionState, breach: H2Breach): void {
    state.calm = true;
    this.calmed[breach]++;
    // Too many streams: those admitted within the budget are still served. Too many resets: only those the App
    // already has; the rest of the turn's streams are refused.
    state.goawayId = breach === 'h2_streams_per_second' || breach === 'h2_client_streams_per_second' ? state.lastAdmitted : state.lastDispatched;
    // Streams held for the PING's answer: served or refused now, as the GOAWAY says (#drain).
    state.unproven = Infinity;
    for (const [stream, dispatch] of state.held.splice(0)) this.#queue(stream, state, dispatch);
    try {
      session.goaway(h2.NGHTTP2_ENHANCE_YOUR_CALM, state.goawayId);
      // Until the GOAWAY is on the wire nghttp2 still hands node every stream the client sends (a flood
      // kept doing so through the grace: ~23,000 streams, each a node stream refused from JS). A lowered
      // SETTINGS_MAX_CONCURRENT_STREAMS applies to what nghttp2 reads from now on, before any ACK, and it
      // refuses those streams itself (RST_STREAM REFUSED_STREAM, RFC 9113 §5.1.2) with no node object.
      const limit = streamLimitOf(session);
      if (limit) limit.calm();
      else session.settings({ maxConcurrentStreams: 0 });
    } catch {
      // Destroyed meanwhile.
    }
    // Not session.close(): node then waits for the peer to end the socket, which a hostile peer never does.
    const timer = setTimeout(() => session.destroy(), H2_CALM_GRACE_MS);
    timer.unref();
    session.once('close', () => clearTimeout(timer));
    this.#onBreach(breach, state.key);
  }
}
