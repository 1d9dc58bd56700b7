/**
 * The health of the Redis connections one keel component created (the BullMQ executor, RedisPubSub):
 * its state for readiness (`status()`), one log line per change of state (down / reconnecting / back),
 * refusals counted and logged at most once per interval (no stack: a refusal while Redis is down is
 * expected, and ~300 stacks in 10 s hid everything else, issue 28), and a circuit: once a failure was
 * seen, work fails at once instead of waiting out the command timeout again, until Redis answers.
 */
import type { Logger } from 'pino';
import { ThrottledLog } from './throttled-log.js';

/** 'up': every connection answers; 'down': commands time out or fail (a hung or refusing Redis); 'reconnecting': a connection closed, or is not connected yet, and ioredis is (re)connecting. */
export type StoreState = 'up' | 'down' | 'reconnecting';

/** What `status()` of a Redis-backed keel component returns (readiness checks read `redis`). */
export interface StoreStatus {
  redis: StoreState;
  /** When the state last changed (ms since the epoch). */
  since: number;
}

/** Refusals (and other expected failures) are logged at most once per this many ms, with a count: 1000. */
export const DEFAULT_STORE_LOG_INTERVAL_MS = 1000;

/** While Redis is not answering, how often a PING asks whether it is back, ms: 200. */
export const PROBE_INTERVAL_MS = 200;

/* eslint-disable @typescript-eslint/no-explicit-any -- ioredis is optional: its types stay out of keel's declarations */
type Client = any;

/** The message of an error, without its stack (expected failures are logged as one line). */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class StoreHealth {
  #logger: Logger;
  readonly #component: string;
  /** Per client: 'connecting' until its first 'ready', then 'up' / 'reconnecting'. */
  readonly #clients = new Map<Client, 'connecting' | 'up' | 'reconnecting'>();
  #hung = false;
  #failing = false;
  #state: StoreState = 'reconnecting';
  #since = Date.now();
  #downSince = 0;
  #probe: (() => Promise<unknown>) | undefined;
  #probeTimer: NodeJS.Timeout | undefined;
  /** Expected failures by message: each message's first at once, then a line per interval (ThrottledLog). */
  readonly #counts: ThrottledLog<string, Record<string, unknown>>;
  #listeners: ((state: StoreState, previous: StoreState, reconnected: boolean) => void)[] = [];
  #closed = false;
  #everUp = false;
  /** A connection that was up closed since the state was last 'up' (its subscriptions had to be renewed). */
  #lostConnection = false;
  #toldUnreachable = false;
  /**
   * Down / reconnecting / back lines, by message: the first of each at once (one outage: its down line and
   * its back line, as they happen), repeats within an interval (a failover flapping) as one line each with
   * `changes`, the line of the state now last.
   */
  readonly #transitions: ThrottledLog<string, { level: 'info' | 'warn'; fields: Record<string, unknown> }>;
  #latestTransition = '';

  constructor(logger: Logger, component: string, intervalMs = DEFAULT_STORE_LOG_INTERVAL_MS) {
    this.#logger = logger;
    this.#component = component;
    this.#counts = new ThrottledLog({
      intervalMs,
      perKey: true,
      first: (message, fields) => this.#warn({ ...fields, count: 1 }, message),
      interval: (counts, ms) => { for (const [message, { count, context }] of counts) this.#warn({ ...context, count, interval_ms: ms }, message); },
    });
    // Issue 47: a cluster failover logged 21 down/back pairs in 3 s. The latest change is what an interval's line says.
    this.#transitions = new ThrottledLog({
      intervalMs,
      perKey: true,
      first: (message, { level, fields }) => this.#logger[level](fields, message),
      interval: (counts, ms) => {
        const ordered = [...counts].sort(([a], [b]) => Number(a === this.#latestTransition) - Number(b === this.#latestTransition));
        for (const [message, { count, context }] of ordered) this.#logger[context.level]({ ...context.fields, changes: count, interval_ms: ms }, message);
      },
    });
  }

  /** Log through `logger` from now on (the App hands its logger to a store made without one). */
  useLogger(logger: Logger): void {
    this.#logger = logger;
  }

  /**
   * For a store with no connection of its own (the rate-limit RedisStore: the client is the user's):
   * judged by its commands only, 'up' until one fails.
   */
  commandsOnly(): void {
    this.#update();
  }

  /** Follow `client`'s connection events. `probe` (a PING on a command connection) ends a 'down' state once it answers. */
  attach(client: Client, probe?: () => Promise<unknown>): void {
    this.#clients.set(client, client.status === 'ready' ? 'up' : 'connecting');
    if (probe) this.#probe ??= probe;
    client.on('ready', () => {
      this.#clients.set(client, 'up');
      // A fresh connection answered its handshake: whatever hung before is gone.
      this.#hung = false;
      this.#update();
    });
    client.on('close', () => {
      if (this.#closed) return;
      this.#failing = true;
      if (this.#clients.get(client) === 'up') this.#lostConnection = true;
      this.#clients.set(client, 'reconnecting');
      this.#update();
    });
    // A failed connection attempt (ECONNREFUSED while Redis is away): the circuit opens, the state is unchanged.
    client.on('error', (err: unknown) => {
      if (this.#clients.get(client) === 'up' || this.#closed) return;
      this.#failing = true;
      if (!this.#everUp && !this.#toldUnreachable) {
        // A process started while Redis is away says so once (it keeps retrying).
        this.#toldUnreachable = true;
        this.#downSince = Date.now();
        this.#warn({ store: 'redis', reason: errorText(err) }, 'redis not reachable; retrying');
      }
    });
    this.#update();
  }

  get state(): StoreState {
    return this.#state;
  }

  status(): StoreStatus {
    return { redis: this.#state, since: this.#since };
  }

  /** Whether work should be tried now: false once a failure was seen and Redis has not answered since. */
  get available(): boolean {
    return this.#state === 'up' || !this.#failing;
  }

  /** A command failed or timed out (a hung Redis keeps its sockets open: only commands tell). */
  commandFailed(err: unknown): void {
    if (this.#closed) return;
    this.#failing = true;
    if (!this.#hung) {
      this.#hung = true;
      this.#update(errorText(err));
    }
  }

  /** Redis answered a command: a hang is over. */
  commandSucceeded(): void {
    if (!this.#hung) return;
    this.#hung = false;
    this.#update();
  }

  /**
   * Call `listener` on each change of state (after it is logged); `reconnected` is true when the state
   * becomes 'up' after a connection was lost and made again (subscriptions renewed, not just a hang over).
   */
  onChange(listener: (state: StoreState, previous: StoreState, reconnected: boolean) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Count one expected failure under `message` (a refused job, an event delivered here only); the first
   * is logged at once, the rest as one line per interval with `count`.
   */
  count(message: string, fields: Record<string, unknown> = {}): void {
    this.#counts.note(message, fields);
  }

  #warn(fields: Record<string, unknown>, message: string): void {
    try {
      this.#logger.warn({ component: this.#component, ...fields }, message);
    } catch {
      // A failing logger must not turn a refusal into a crash.
    }
  }

  #update(reason?: string): void {
    const states = [...this.#clients.values()];
    const next: StoreState = states.some((s) => s !== 'up') ? 'reconnecting' : this.#hung ? 'down' : 'up';
    const previous = this.#state;
    if (next === previous) return;
    this.#state = next;
    this.#since = Date.now();
    const base = { component: this.#component, store: 'redis' };
    const log = (level: 'info' | 'warn', fields: Record<string, unknown>, message: string) => {
      this.#latestTransition = message;
      this.#transitions.note(message, { level, fields });
    };
    try {
      if (next === 'up') {
        this.#failing = false;
        // The first connection of a fresh process is not news; coming back is.
        if (this.#downSince) log('info', { ...base, down_ms: this.#since - this.#downSince }, 'redis store back');
        this.#downSince = 0;
        this.#everUp = true;
      } else if (previous === 'up') {
        this.#downSince = this.#since;
        if (next === 'down') log('warn', { ...base, reason }, 'redis store down (not answering)');
        else log('warn', base, 'redis connection lost; reconnecting');
      } else if (next === 'reconnecting' && this.#downSince) {
        log('info', base, 'redis store reconnecting');
      }
    } catch {
      // as above
    }
    if (next === 'down') this.#startProbe();
    const reconnected = next === 'up' && this.#lostConnection;
    if (next === 'up') this.#lostConnection = false;
    for (const l of this.#listeners) l(next, previous, reconnected);
  }

  #startProbe(): void {
    if (this.#probeTimer || !this.#probe) return;
    const tick = (): void => {
      this.#probeTimer = setTimeout(() => {
        if (this.#state !== 'down' || this.#closed) {
          this.#probeTimer = undefined;
          return;
        }
        this.#probe!().then(() => this.commandSucceeded(), () => undefined).finally(tick);
      }, PROBE_INTERVAL_MS);
      this.#probeTimer.unref();
    };
    tick();
  }

  /** Stop probing and logging (the component is closing its connections). */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#probeTimer);
    this.#counts.close();
    this.#transitions.close();
  }
}
