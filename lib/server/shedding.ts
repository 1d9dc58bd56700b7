/**
 * Overload shedding for cheap work too (issue 44 #9; anchor: fastify's @fastify/under-pressure). Shedding that
 * covers only expensive work leaves the server to a botnet of polite clients: 199 addresses at 45 cheap requests a
 * second each (every one under every limit) saturated it, `/health` p99 167 ms. While the event loop's mean delay
 * over the last two windows in a row passes `shed_event_loop_delay_ms` (or its utilisation `shed_event_loop_utilization`), every
 * new HTTP request is answered at once with a 503 problem `overloaded` and `Retry-After: 1`, before routing, parsing
 * or any middleware; the health, readiness and metrics paths are never shed, so probes still see the truth. While
 * expensive work is what keeps the loop late, the work gate sheds that first (lib/server/work-gate.ts) and cheap
 * requests are left alone.
 *
 * Every shed request (and every expensive operation the work gate refuses for load) is published on the
 * diagnostics channel `keel.shed` (SHED_CHANNEL) as a ShedEvent: a metric or a log subscribes there, and nothing
 * is paid while nobody does.
 */
import diagnostics from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { problemFor, PROBLEM_CONTENT_TYPE } from '../http/problem.js';
import { LoadMonitor } from './overload.js';
import { observe } from '../observability/observe.js';

/** The diagnostics channel every shed request is published on. */
export const SHED_CHANNEL = 'keel.shed';
/** Retry-After of a shed request, seconds: 1 (one sample window is rarely longer). */
export const SHED_RETRY_AFTER_SECONDS = 1;
/** The window the event loop is sampled over for shedding, ms: 500 (as work_limits' default). */
export const SHED_SAMPLE_INTERVAL_MS = 500;
/**
 * Overloaded windows in a row before cheap requests are shed: 2. One long task (a 16 MB JSON answer) makes one
 * window late and is over; a flood keeps the loop late window after window.
 */
export const SHED_AFTER_WINDOWS = 2;

/** What `keel.shed` carries. */
export interface ShedEvent {
  /** `'request'`: a cheap HTTP request shed before routing; `'work'`: expensive work refused (work_limits). */
  readonly kind: 'request' | 'work';
  /** Why: `overloaded` (event loop), or the work gate's `max_queued`. */
  readonly reason: 'overloaded' | 'max_queued';
  readonly eventLoopDelayMs?: number;
  readonly eventLoopUtilization?: number;
}

const channel = diagnostics.channel(SHED_CHANNEL);

/** Publish one shed request or refused operation on `keel.shed` (free when nobody subscribes). */
export function publishShed(event: ShedEvent): void {
  if (channel.hasSubscribers) channel.publish(event);
}

/**
 * Subscribe to every shed request (the one hook a counter needs); returns the function that unsubscribes.
 *
 * @example
 * const stop = onShed((e) => shedCounter.inc({ kind: e.kind, reason: e.reason }));
 */
export function onShed(listener: (event: ShedEvent) => void): () => void {
  const fn = (message: unknown) => listener(message as ShedEvent);
  diagnostics.subscribe(SHED_CHANNEL, fn);
  return () => void diagnostics.unsubscribe(SHED_CHANNEL, fn);
}

export interface ShedderOptions {
  maxEventLoopDelayMs: number;
  maxEventLoopUtilization: number;
  /** Paths never shed (health, readiness, metrics). */
  exemptPaths: readonly string[];
  /**
   * True while expensive work keeps the loop late and the work gate sheds it (WorkGate#busy): cheap requests are
   * then left alone, so expensive work is shed first and refused in its protocol's words.
   */
  expensiveWorkBusy?: () => boolean;
}

/** The listener-side shedder of one server; `undefined` from `create` when both thresholds are 0. */
export class RequestShedder {
  readonly monitor: LoadMonitor;
  readonly #exempt: ReadonlySet<string>;
  readonly #expensiveWorkBusy: () => boolean;
  /** Requests shed since the server started. */
  shed = 0;

  static create(options: ShedderOptions): RequestShedder | undefined {
    if (options.maxEventLoopDelayMs <= 0 && options.maxEventLoopUtilization <= 0) return undefined;
    return new RequestShedder(options);
  }

  private constructor(options: ShedderOptions) {
    this.monitor = new LoadMonitor({ maxEventLoopDelayMs: options.maxEventLoopDelayMs, maxEventLoopUtilization: options.maxEventLoopUtilization, sampleIntervalMs: SHED_SAMPLE_INTERVAL_MS });
    this.#exempt = new Set(options.exemptPaths);
    this.#expensiveWorkBusy = options.expensiveWorkBusy ?? (() => false);
    this.monitor.start();
  }

  /** Answer `req` with 503 when the loop is overloaded and its path is not exempt; true when it was shed. */
  shedIfOverloaded(req: IncomingMessage, res: ServerResponse): boolean {
    const load = this.monitor.sample;
    if (!load.overloaded || this.monitor.streak < SHED_AFTER_WINDOWS) return false;
    return this.shed503(req, res, load.delayMs, load.utilization);
  }

  /**
   * Answer `req` with 503 overloaded unless its path is exempt or expensive work is what is late; true when it was
   * shed. Also for a request fair reading held longer than the threshold (lib/server/fair-reads.ts): its wait is
   * the delay it saw, though the loop's own delay stays low while turns are bounded.
   */
  shed503(req: IncomingMessage, res: ServerResponse, delayMs: number, loopUtilization: number): boolean {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    if (this.#exempt.has(q === -1 ? url : url.slice(0, q)) || this.#expensiveWorkBusy()) return false;
    this.shed++;
    const delay = Math.round(delayMs);
    const utilization = Math.round(loopUtilization * 100) / 100;
    publishShed({ kind: 'request', reason: 'overloaded', eventLoopDelayMs: delay, eventLoopUtilization: utilization });
    // keel_requests_shed_total{reason="overloaded"} counts these with the work gate's refusals (docs/operations.md).
    observe.shed('overloaded');
    const body = Buffer.from(JSON.stringify(problemFor('KEEL_OVERLOADED',
      `The server is overloaded (event-loop delay ${delay} ms, utilisation ${utilization}); retry in ${SHED_RETRY_AFTER_SECONDS} s`,
      { reason: 'overloaded', event_loop_delay_ms: delay, event_loop_utilization: utilization })));
    res.writeHead(503, { 'Content-Type': PROBLEM_CONTENT_TYPE, 'Retry-After': String(SHED_RETRY_AFTER_SECONDS), 'Content-Length': body.length });
    res.end(body);
    // The request's body (if any) is not read: node discards it, bounded by boundUnreadBody.
    return true;
  }

  close(): void {
    this.monitor.stop();
  }
}
