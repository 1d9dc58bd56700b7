/**
 * Fair reading under pressure (issue 44 #6/#9: "one client, however many connections, never stalls the others").
 *
 * What makes `/health` wait under a botnet of polite clients is the event loop's long turns: one turn reads, parses and
 * answers every request that arrived on every socket while the last one ran (199 addresses × 45 cheap requests/s:
 * `/health` p50 48–60 ms, p99 242–372 ms), and a light client's request waits behind all of them. Shedding (503)
 * still pays for each refused request. Here nothing is refused: while the event loop is late (a timer due every
 * FAIR_READ_SAMPLE_INTERVAL_MS fires later than `fair_read_event_loop_delay_ms`), each loop turn answers at most
 * `fair_read_requests_per_turn` requests of clients that sent more than half their fair share lately (the window's
 * requests over its active addresses); the others are held: their socket stops being read (libuv `readStop`, so the
 * kernel's buffer fills and TCP backpressure slows that client), and they are answered on later turns, one socket per
 * client in turn (a client with many connections gets no more turns than one with one). A light client — under half
 * the fair share, as a health probe — is never held, and is read on the next turn whatever the others send.
 *
 * The pause is keel's own, on the socket's handle, not node's `socket._paused` (its pipelining backpressure, which
 * node's socketOnDrain lifts when a response drains): node only restarts reading on a socket 'resume' event, which
 * needs a socket.pause() first; if it does (pipelined answers draining), requests read meanwhile still wait in the
 * held socket's queue in order, and reading stops again. Nothing is lost: a held request is answered as it would
 * have been, later (or, held longer than `shed_event_loop_delay_ms`, shed as overload shedding would have: 503
 * overloaded, before routing); a socket closed meanwhile is dropped. HTTP/1.1 only: HTTP/2 streams share a session, bounded by
 * its own limits (h2_*), and upgrades (WebSockets) by theirs.
 *
 * Off or idle, it costs one property read per request: the per-client counts and the turn's `setImmediate` exist only
 * while the loop is late (or held requests remain), and end after FAIR_READ_QUIET_WINDOWS calm windows.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Period of the timer whose lateness says the loop is late, ms: 100 (a botnet is noticed within a tenth of a second).
 * One unref'd timer and its own lateness, not a delay histogram: idle, it wakes the loop ten times a second.
 */
export const FAIR_READ_SAMPLE_INTERVAL_MS = 100;
/** Calm windows in a row (loop on time, no turn over budget, nothing held) before fair reading stops: 10 (1 s). */
export const FAIR_READ_QUIET_WINDOWS = 10;
/** Windows after which the per-client counts are halved (recent use weighs most): 10 (1 s). */
export const FAIR_READ_DECAY_WINDOWS = 10;
/** A client that sent at most this share of the fair share is light: never held. */
export const FAIR_READ_LIGHT_SHARE = 0.5;

export interface FairReadsOptions {
  /** Event-loop delay (ms: how late the check timer fires) past which heavy clients' requests are spread over turns; 0 = never. */
  maxEventLoopDelayMs: number;
  /** Requests of heavy clients answered per loop turn while it applies. */
  requestsPerTurn: number;
  /**
   * Open connections now: fair reading starts only with two or more (one client on one connection has nobody to
   * be fair to, and a loop late under it, as under a profiler, would only pay for the counting).
   */
  connections: () => number;
  /** What answers a request (the rest of the listener): called at once, or on a later turn for a held one. */
  serve: (req: IncomingMessage, res: ServerResponse) => void;
  /**
   * Overload shedding (ServerConfig.shed_event_loop_delay_ms): a request held longer than `afterMs` is offered to
   * `shed` when its turn comes (503 overloaded unless exempt; true when it answered). The loop's own delay stays low
   * while turns are bounded, so the wait in the hold is what says a client is served too late.
   */
  overdue?: { afterMs: number; shed: (req: IncomingMessage, res: ServerResponse, waitedMs: number) => boolean };
}

/** A held socket's requests in order, and when it was held (performance.now()). */
type Held = { at: number; requests: [IncomingMessage, ServerResponse][] };
type ReadingHandle = { reading?: boolean; readStop?: () => number; readStart?: () => number };
const kHeld = Symbol('keel.fairReads.held');
type HeldSocket = Socket & { [kHeld]?: Held; _handle?: ReadingHandle | null; _paused?: boolean };

/** One server's fair reading; `undefined` from `create` when the delay threshold is 0. */
export class FairReads {
  /** True while requests are counted and heavy clients' requests may be held; read on every request. */
  active = false;
  /** Requests held since the server started (observability, tests). */
  held = 0;
  readonly #maxDelayMs: number;
  readonly #timer: NodeJS.Timeout;
  /** When the check timer is due (performance.now()). */
  #due: number;
  readonly #perTurn: number;
  readonly #serve: FairReadsOptions['serve'];
  readonly #overdue: FairReadsOptions['overdue'];
  readonly #connections: () => number;
  /** Recent requests per client address (halved every FAIR_READ_DECAY_WINDOWS) and their sum. */
  readonly #counts = new Map<string, number>();
  #total = 0;
  /** Held sockets per client address; Map order is the round-robin order. */
  readonly #waiting = new Map<string, HeldSocket[]>();
  #waitingSockets = 0;
  /** Heavy clients' requests answered in the current turn; whether the turn's end is scheduled. */
  #served = 0;
  #turnArmed = false;
  #overBudgetTurns = 0;
  #quiet = 0;
  #windows = 0;

  static create(options: FairReadsOptions): FairReads | undefined {
    if (options.maxEventLoopDelayMs <= 0) return undefined;
    return new FairReads(options);
  }

  private constructor(options: FairReadsOptions) {
    this.#perTurn = options.requestsPerTurn;
    this.#serve = options.serve;
    this.#overdue = options.overdue;
    this.#connections = options.connections;
    this.#maxDelayMs = options.maxEventLoopDelayMs;
    this.#due = performance.now() + FAIR_READ_SAMPLE_INTERVAL_MS;
    this.#timer = setTimeout(checkWindow, FAIR_READ_SAMPLE_INTERVAL_MS, this);
    this.#timer.unref();
  }

  /** Requests waiting on held sockets now. */
  get waiting(): number {
    return this.#waitingSockets;
  }

  /**
   * Called for each request while `active`: true when it was held (it will be served on a later turn), false when
   * the caller serves it now.
   */
  admit(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.httpVersionMajor !== 1) return false;
    const socket = req.socket as HeldSocket;
    const queue = socket[kHeld];
    if (queue !== undefined) {
      // A request read on a held socket (pipelined in the same chunk, or node restarted reading): after the others.
      queue.requests.push([req, res]);
      stopReading(socket);
      return true;
    }
    const key = socket.remoteAddress ?? '';
    const count = (this.#counts.get(key) ?? 0) + 1;
    this.#counts.set(key, count);
    this.#total++;
    this.#armTurn();
    if (this.#served < this.#perTurn) {
      this.#served++;
      return false;
    }
    // Light: at most half of what each active client would get in an even split.
    if (count * this.#counts.size <= this.#total * FAIR_READ_LIGHT_SHARE) return false;
    this.#served++;
    socket[kHeld] = { at: performance.now(), requests: [[req, res]] };
    stopReading(socket);
    let sockets = this.#waiting.get(key);
    if (sockets === undefined) this.#waiting.set(key, (sockets = []));
    sockets.push(socket);
    this.#waitingSockets++;
    this.held++;
    return true;
  }

  /** Stop sampling; held requests are still answered on the following turns. */
  close(): void {
    clearTimeout(this.#timer);
    this.active = false;
  }

  #armTurn(): void {
    if (this.#turnArmed) return;
    this.#turnArmed = true;
    setImmediate(endTurn, this);
  }

  /** End of a turn (check phase, after the poll that read the sockets): answer held requests, up to the budget. */
  turn(): void {
    this.#turnArmed = false;
    if (this.#served > this.#perTurn) this.#overBudgetTurns++;
    let served = 0;
    while (served < this.#perTurn && this.#waiting.size > 0) {
      // Round robin over clients: the first client's oldest held socket, then that client goes to the back.
      const [key, sockets] = this.#waiting.entries().next().value as [string, HeldSocket[]];
      const socket = sockets.shift()!;
      this.#waiting.delete(key);
      if (sockets.length > 0) this.#waiting.set(key, sockets);
      this.#waitingSockets--;
      served += this.#release(socket);
    }
    // What was answered here counts against the next poll's budget: a turn answers about `requestsPerTurn` in all.
    this.#served = served;
    // Scheduled from the check phase, the next call runs after the next poll: light clients are read in between.
    if (this.#waiting.size > 0 || served > 0) this.#armTurn();
  }

  /** Answer a held socket's requests in order and read it again; how many were answered. */
  #release(socket: HeldSocket): number {
    const queue = socket[kHeld]!;
    socket[kHeld] = undefined;
    if (socket.destroyed) return 0;
    const handle = socket._handle;
    // node's own pause (socket._paused: pipelined answers not yet written) is node's to lift.
    if (handle && !handle.reading && !socket._paused) {
      handle.reading = true;
      handle.readStart?.();
    }
    const waited = this.#overdue ? performance.now() - queue.at : 0;
    const shed = this.#overdue !== undefined && waited > this.#overdue.afterMs ? this.#overdue.shed : undefined;
    let n = 0;
    for (const [req, res] of queue.requests) {
      if (socket.destroyed) break;
      n++;
      if (shed?.(req, res, waited) !== true) this.#serve(req, res);
    }
    return n;
  }

  /** Once a window (the check timer): start while the loop is late; stop after calm windows; let old counts fade. */
  window(): void {
    const now = performance.now();
    const late = now - this.#due > this.#maxDelayMs;
    this.#due = now + FAIR_READ_SAMPLE_INTERVAL_MS;
    this.#timer.refresh();
    if (late || this.#overBudgetTurns > 0 || this.#waitingSockets > 0) {
      this.#quiet = 0;
      if (late && this.#connections() > 1) this.active = true;
    } else if (this.active && ++this.#quiet >= FAIR_READ_QUIET_WINDOWS) {
      this.active = false;
      this.#counts.clear();
      this.#total = 0;
    }
    this.#overBudgetTurns = 0;
    if (this.active && ++this.#windows % FAIR_READ_DECAY_WINDOWS === 0) this.#decay();
  }

  #decay(): void {
    let total = 0;
    for (const [key, n] of this.#counts) {
      const half = n >> 1;
      if (half === 0) this.#counts.delete(key);
      else {
        this.#counts.set(key, half);
        total += half;
      }
    }
    this.#total = total;
  }
}

function checkWindow(fair: FairReads): void {
  fair.window();
}

function endTurn(fair: FairReads): void {
  fair.turn();
}

/** libuv stops reading the socket: its kernel buffer fills, and TCP's window slows its sender. */
function stopReading(socket: HeldSocket): void {
  const handle = socket._handle;
  if (handle?.reading && handle.readStop) {
    handle.reading = false;
    handle.readStop();
  }
}
