/**
 * Fair reading under pressure (issue 44 #6/#9: "one client, however many connections, never stalls the others").
 *
 * What makes `/health` wait under a botnet of polite clients is the event loop's long turns: one turn reads, parses and
 * answers every request that arrived on every socket while the last one ran (199 addresses × 45 cheap requests/s:
 * `/health` p50 48–60 ms, p99 242–372 ms), and a light client's request waits behind all of them. Shedding (503)
 * still pays for each refused request. Here nothing is refused: while the event loop is late (a timer due every
 * FAIR_READ_SAMPLE_INTERVAL_MS fires later than `fair_read_event_loop_delay_ms`), a loop turn answers requests of
 * clients above their fair share (their recent requests over the active addresses') for `fair_read_turn_ms` of CPU
 * time, in its poll phase and again in its check phase; past that they are held: their socket stops being read (libuv
 * `readStop`, so the kernel's buffer fills and TCP backpressure slows that client), and they are answered on later
 * turns, one socket per client in turn (a client with many connections gets no more turns than one with one). A
 * client at or under its fair share (a health probe) is never held, and is read on the next turn whatever the others
 * send. A time, not a count: a server that keeps up holds nothing.
 *
 * The pause is keel's own, on the socket's handle, not node's `socket._paused` (its pipelining backpressure, which
 * node's socketOnDrain lifts when a response drains): node only restarts reading on a socket 'resume' event, which
 * needs a socket.pause() first; if it does (pipelined answers draining), requests read meanwhile still wait in the
 * held socket's queue in order, and reading stops again. Nothing is lost: a held request is answered as it would
 * have been, later (or, held longer than `shed_event_loop_delay_ms`, shed as overload shedding would have: 503
 * overloaded, before routing); a socket closed meanwhile is dropped. HTTP/1.1 only: HTTP/2 streams share a session, bounded by
 * its own limits (h2_*), and upgrades (WebSockets) by theirs.
 *
 * Off or idle, it costs one property read per request: the per-client counts, the clock read and the turn's
 * `setImmediate` exist only while the loop is late (or a turn ran over, or requests are held), and end after
 * FAIR_READ_QUIET_WINDOWS calm windows.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Period of the timer whose lateness says the loop is late, ms: 100 (a botnet is noticed within a tenth of a second).
 * One unref'd timer and its own lateness, not a delay histogram: idle, it wakes the loop ten times a second.
 */
export const FAIR_READ_SAMPLE_INTERVAL_MS = 100;
/** Calm windows in a row (loop on time, no turn over its time, nothing held) before fair reading stops: 10 (1 s). */
export const FAIR_READ_QUIET_WINDOWS = 10;
/** Windows after which the per-client counts are halved (recent use weighs most): 10 (1 s). */
export const FAIR_READ_DECAY_WINDOWS = 10;

export interface FairReadsOptions {
  /** Event-loop delay (ms: how late the check timer fires) past which heavy clients' requests are spread over turns; 0 = never. */
  maxEventLoopDelayMs: number;
  /** CPU milliseconds of a loop turn (its poll, then its check phase) spent answering before heavy clients are held. */
  turnMs: number;
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
  readonly #turnMs: number;
  readonly #serve: FairReadsOptions['serve'];
  readonly #overdue: FairReadsOptions['overdue'];
  readonly #connections: () => number;
  /** Recent requests per client address (halved every FAIR_READ_DECAY_WINDOWS) and their sum. */
  readonly #counts = new Map<string, number>();
  #total = 0;
  /** Held sockets per client address; Map order is the round-robin order. */
  readonly #waiting = new Map<string, HeldSocket[]>();
  #waitingSockets = 0;
  /** CPU time (cpuMs) when the current turn's first request was admitted (-1: none yet); whether its end is scheduled. */
  #turnStart = -1;
  #turnArmed = false;
  /** Whether a request was held in this turn: the turn was over its time. */
  #overTurn = false;
  #overBudgetTurns = 0;
  #quiet = 0;
  #windows = 0;

  static create(options: FairReadsOptions): FairReads | undefined {
    if (options.maxEventLoopDelayMs <= 0) return undefined;
    return new FairReads(options);
  }

  private constructor(options: FairReadsOptions) {
    this.#turnMs = options.turnMs;
    this.#serve = options.serve;
    this.#overdue = options.overdue;
    this.#connections = options.connections;
    this.#maxDelayMs = options.maxEventLoopDelayMs;
    this.#due = performance.now() + FAIR_READ_SAMPLE_INTERVAL_MS;
    this.#timer = setTimeout(checkWindow, FAIR_READ_SAMPLE_INTERVAL_MS, this);
    this.#timer.unref();
  }

  /** Sockets held now (each with one or more requests waiting). */
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
    const cpu = cpuMs();
    if (!this.#turnArmed) {
      this.#turnArmed = true;
      setImmediate(endTurn, this);
    }
    if (this.#turnStart < 0) this.#turnStart = cpu;
    if (cpu - this.#turnStart < this.#turnMs) return false;
    // Light: at most what each active client would get in an even split (the fair share).
    if (count * this.#counts.size <= this.#total) return false;
    this.#overTurn = true;
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

  /** End of a turn (check phase, after the poll that read the sockets): answer held requests for up to `turnMs`. */
  turn(): void {
    this.#turnArmed = false;
    this.#turnStart = -1;
    if (this.#overTurn) this.#overBudgetTurns++;
    this.#overTurn = false;
    const start = cpuMs();
    while (this.#waiting.size > 0 && cpuMs() - start < this.#turnMs) {
      // Round robin over clients: the first client's oldest held socket, then that client goes to the back.
      const [key, sockets] = this.#waiting.entries().next().value as [string, HeldSocket[]];
      const socket = sockets.shift()!;
      this.#waiting.delete(key);
      if (sockets.length > 0) this.#waiting.set(key, sockets);
      this.#waitingSockets--;
      this.#release(socket);
    }
    // Scheduled from the check phase, the next call runs after the next poll: light clients are read in between.
    if (this.#waiting.size > 0) {
      this.#turnArmed = true;
      setImmediate(endTurn, this);
    }
  }

  /** Answer a held socket's requests in order and read it again. */
  #release(socket: HeldSocket): void {
    const queue = socket[kHeld]!;
    socket[kHeld] = undefined;
    if (socket.destroyed) return;
    const handle = socket._handle;
    // node's own pause (socket._paused: pipelined answers not yet written) is node's to lift.
    if (handle && !handle.reading && !socket._paused) {
      handle.reading = true;
      handle.readStart?.();
    }
    const waited = this.#overdue ? performance.now() - queue.at : 0;
    const shed = this.#overdue !== undefined && waited > this.#overdue.afterMs ? this.#overdue.shed : undefined;
    for (const [req, res] of queue.requests) {
      if (socket.destroyed) break;
      if (shed?.(req, res, waited) !== true) this.#serve(req, res);
    }
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

/**
 * CPU time of the process, ms: a turn's time is the CPU it spent, not the wall clock. On a shared machine a process
 * preempted mid-turn would otherwise see every turn "over" and hold clients while it has capacity to spare (the
 * replay at load 4: a wall-clock turn held, went overdue and kept the loop busy, p99 29 -> 143 ms).
 */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
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
