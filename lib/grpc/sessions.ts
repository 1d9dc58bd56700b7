/**
 * The HTTP/2 sessions of the shared port (lib/grpc/server.ts): how many may be open, how long an idle one
 * lives, and how they end at shutdown. Issue 26: a session that sent nothing but PING ACKs was never closed,
 * and nothing bounded how many one client (or all of them) could hold, each one a file descriptor.
 *
 * - A session with no open stream is closed after `h2_idle_timeout` seconds whatever it answers to PINGs
 *   (RFC 9113 §9.1: a server may close an idle connection, with GOAWAY, §6.8). node's own
 *   `session.setTimeout` would not do: every frame received, PING included, restarts it.
 * - Past `max_h2_sessions` (server) or `max_h2_sessions_per_client` (one remote address) a new session
 *   gets GOAWAY with last-stream-id 0, so the client knows no stream was processed (RFC 9113 §6.8), and is
 *   closed: REFUSED_STREAM when the server is full (retrying later, or elsewhere, is safe), ENHANCE_YOUR_CALM
 *   when one address holds too many (RFC 9113 §7: "excessive load"). One warn line per interval, with counts.
 * - Shutdown sends GOAWAY to every session at once: an idle one closes at once, a busy one when its streams
 *   end, and what is left at the deadline is destroyed.
 */
import { constants as h2, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import type { Logger } from 'pino';
import { isOverClientBudget } from '../server/client-budget.js';
import { ThrottledLog } from '../ops/throttled-log.js';
import { H2Abuse, type H2AbuseLimits, type H2Breach } from './h2-abuse.js';

/** After GOAWAY, how long a session may take to flush and close before it is destroyed, ms: 1000. */
export const H2_CLOSE_GRACE_MS = 1_000;
/** Refused sessions are logged at most once per this many ms, with counts: 1000. */
export const DEFAULT_H2_REFUSAL_LOG_INTERVAL_MS = 1_000;

export interface H2SessionPolicy {
  /** Close a session after this many ms without an open stream. */
  idleTimeoutMs: number;
  /** Sessions open at once on the server. */
  maxSessions: number;
  /** Sessions open at once from one client address. */
  maxSessionsPerClient: number;
  /** PING every `intervalMs`; destroy a session whose ACK has not come back after `timeoutMs`. */
  keepalive?: { intervalMs: number; timeoutMs: number };
  /** Where refusals are logged (warn, throttled). */
  logger?: Pick<Logger, 'warn'>;
  /** Resets and streams opened per second, per session and per client (./h2-abuse.ts); none when absent. */
  abuse?: H2AbuseLimits;
}

type RefusalReason = 'max_h2_sessions' | 'max_h2_sessions_per_client' | H2Breach;
/**
 * Refusals by cap; `max_connections_per_client` is the App's budget across protocols (lib/server/client-budget.ts);
 * the `h2_client_*` keys count new sessions of a client whose reset / stream budget was spent (./h2-abuse.ts).
 */
export type H2Refusals = Record<'max_h2_sessions' | 'max_h2_sessions_per_client' | 'max_connections_per_client' | 'h2_client_budget', number>;

/** The open HTTP/2 sessions of one server and the rules they live by. */
export class H2Sessions {
  /** Open (admitted) sessions. */
  readonly open = new Set<Http2Session>();
  /** Sessions refused since the server started, by the cap that refused them. */
  readonly refused: H2Refusals = { max_h2_sessions: 0, max_h2_sessions_per_client: 0, max_connections_per_client: 0, h2_client_budget: 0 };
  /** Reset and stream rates (./h2-abuse.ts); `abuse.calmed` counts the sessions closed for them. */
  readonly abuse: H2Abuse | undefined;
  readonly #policy: H2SessionPolicy;
  readonly #byClient = new Map<string, number>();
  /** The first refusal at once, then one line per interval with the counts since the last. */
  readonly #log: ThrottledLog<RefusalReason, string>;

  constructor(policy: H2SessionPolicy) {
    this.#policy = policy;
    this.#log = new ThrottledLog<RefusalReason, string>({
      intervalMs: DEFAULT_H2_REFUSAL_LOG_INTERVAL_MS,
      first: (reason, client) => this.#write({ [reason]: 1 }, { client }),
      interval: (counts, ms) => this.#write({
        max_h2_sessions: counts.get('max_h2_sessions')?.count ?? 0,
        max_h2_sessions_per_client: counts.get('max_h2_sessions_per_client')?.count ?? 0,
        ...Object.fromEntries([...counts].filter(([k]) => k.startsWith('h2_')).map(([k, c]) => [k, c.count])),
      }, { interval_ms: ms }),
    });
    this.abuse = policy.abuse ? new H2Abuse(policy.abuse, (breach, client) => this.#policy.logger && this.#log.note(breach, client)) : undefined;
  }

  /** Every stream, before the App sees it: `dispatch` hands it to the App, at the end of the turn when budgets are on, unless refused (./h2-abuse.ts). */
  admitStream(stream: ServerHttp2Stream, dispatch: () => void): void {
    if (this.abuse) this.abuse.admitStream(stream, dispatch);
    else dispatch();
  }

  /** Take a new session (the http2 server's 'session' event): admit it, or refuse it with GOAWAY. */
  add(session: Http2Session): void {
    session.on('error', () => {});
    // Its client already holds max_connections_per_client connections (HTTP/1.1, WebSockets, h2c): the
    // budget counted and logged it when the TCP connection was accepted; this says so in HTTP/2's words.
    if (isOverClientBudget(session.socket)) {
      this.refused.max_connections_per_client++;
      session.goaway(h2.NGHTTP2_ENHANCE_YOUR_CALM, 0);
      session.close();
      return destroyAfterGrace(session);
    }
    const client = clientAddress(session);
    if (this.open.size >= this.#policy.maxSessions) return this.#refuse(session, 'max_h2_sessions', h2.NGHTTP2_REFUSED_STREAM, client);
    const fromClient = this.#byClient.get(client) ?? 0;
    if (fromClient >= this.#policy.maxSessionsPerClient) return this.#refuse(session, 'max_h2_sessions_per_client', h2.NGHTTP2_ENHANCE_YOUR_CALM, client);
    if (this.abuse && !this.abuse.admitSession(session)) {
      this.refused.h2_client_budget++;
      session.goaway(h2.NGHTTP2_ENHANCE_YOUR_CALM, 0);
      session.close();
      return destroyAfterGrace(session);
    }
    this.open.add(session);
    this.#byClient.set(client, fromClient + 1);
    session.once('close', () => {
      this.open.delete(session);
      const left = (this.#byClient.get(client) ?? 1) - 1;
      if (left > 0) this.#byClient.set(client, left);
      else this.#byClient.delete(client);
    });
    watchIdle(session, this.#policy.idleTimeoutMs);
    if (this.#policy.keepalive) startKeepalive(session, this.#policy.keepalive.intervalMs, this.#policy.keepalive.timeoutMs);
  }

  /**
   * GOAWAY to every session: idle ones close at once, busy ones once their streams end; after `timeoutMs`
   * the rest are destroyed. Resolves when every session has closed.
   */
  async shutdown(timeoutMs: number): Promise<void> {
    const closing = [...this.open].map((s) => closed(s));
    for (const s of this.open) {
      this.abuse?.refuseHeld(s);
      goaway(s);
    }
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)));
    const result = await Promise.race([Promise.all(closing), expired]);
    clearTimeout(timer);
    if (result === 'timeout') for (const s of this.open) s.destroy();
  }

  #refuse(session: Http2Session, reason: 'max_h2_sessions' | 'max_h2_sessions_per_client', code: number, client: string): void {
    this.refused[reason]++;
    session.goaway(code, 0);
    session.close();
    destroyAfterGrace(session);
    if (this.#policy.logger) this.#log.note(reason, client);
  }

  #write(counts: Partial<Record<RefusalReason, number>>, extra: object): void {
    const limits = { max_h2_sessions: this.#policy.maxSessions, max_h2_sessions_per_client: this.#policy.maxSessionsPerClient };
    this.#policy.logger!.warn({ refused: counts, ...limits, ...extra }, 'HTTP/2 connections refused or closed (GOAWAY): session limit or reset / stream rate reached');
  }
}

/** The remote address a session counts against (an IPv4-mapped IPv6 address as its IPv4 form). */
function clientAddress(session: Http2Session): string {
  const address = session.socket?.remoteAddress ?? 'unknown';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/** Open streams per admitted session (the idle clock and shutdown read it). */
const openStreams = new WeakMap<Http2Session, { count: number }>();

/** Close `session` after `idleMs` with no open stream; every stream that opens stops the clock. */
function watchIdle(session: Http2Session, idleMs: number): void {
  const streams = { count: 0 };
  openStreams.set(session, streams);
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => goaway(session), idleMs);
    timer.unref();
  };
  session.on('stream', (stream: ServerHttp2Stream) => {
    if (stream.destroyed) return; // reset before node emitted it: never open for the App (./h2-abuse.ts)
    streams.count++;
    clearTimeout(timer);
    stream.once('close', () => {
      if (--streams.count === 0 && !session.closed) arm();
    });
  });
  session.once('close', () => clearTimeout(timer));
  arm();
}

/**
 * GOAWAY (NO_ERROR, the last stream processed) through node's graceful close: running streams finish, new
 * ones are refused, and the session closes when none is left. An idle session that has not closed within
 * H2_CLOSE_GRACE_MS (a peer that stops reading holds the GOAWAY in the socket) is destroyed; a busy one is
 * bounded by whoever called (shutdown's deadline).
 */
function goaway(session: Http2Session): void {
  if (session.closed || session.destroyed) return;
  session.close();
  if (!session.destroyed && (openStreams.get(session)?.count ?? 0) === 0) destroyAfterGrace(session);
}

function destroyAfterGrace(session: Http2Session): void {
  const timer = setTimeout(() => session.destroy(), H2_CLOSE_GRACE_MS);
  timer.unref();
  session.once('close', () => clearTimeout(timer));
}

function closed(session: Http2Session): Promise<void> {
  return session.destroyed ? Promise.resolve() : new Promise((resolve) => session.once('close', () => resolve()));
}

/** RFC 9113 §6.7: a PING not acknowledged within `timeoutMs` means the peer (or the path to it) is gone. */
function startKeepalive(session: Http2Session, intervalMs: number, timeoutMs: number): void {
  const interval = setInterval(() => {
    if (session.destroyed || session.closed) return;
    const dead = setTimeout(() => session.destroy(), timeoutMs);
    dead.unref();
    const sent = session.ping((err) => {
      clearTimeout(dead);
      if (err && !session.destroyed) session.destroy();
    });
    if (!sent) clearTimeout(dead);
  }, intervalMs);
  interval.unref();
  session.once('close', () => clearInterval(interval));
}
