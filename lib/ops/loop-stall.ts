/**
 * How long this process's event loop was stalled during an interval, so that a Redis command that
 * "timed out" because the process itself was starved (a long synchronous handler, a busy CI machine)
 * is not taken for a Redis outage (issue 36: a 1.9 s CPU stall on a Redis-free route made jobs answer
 * 503 and events reach one instance only). After a stall Node runs expired timers before it reads the
 * sockets, so a reply that arrived in time loses the race against its own timeout.
 *
 * Why not `perf_hooks.monitorEventLoopDelay` alone: its histogram tells the worst delay since a reset,
 * shared by every caller, not the stall inside one command's interval. A timer that measures its own
 * lateness (what monitorEventLoopDelay does inside libuv) answers that per interval; it runs only while
 * a Redis-backed store holds it (`watchLoop()`), every LOOP_SAMPLE_MS, unref'd.
 */
import { performance } from 'node:perf_hooks';

/** How often the sampler looks at the loop, ms: 50 (stalls shorter than that never starve a 500 ms bound). */
export const LOOP_SAMPLE_MS = 50;
/** Stalls remembered, at most (the oldest dropped first): 64. */
const MAX_STALLS = 64;

let timer: NodeJS.Timeout | undefined;
let users = 0;
let last = 0;
/** Stalls seen by the sampler: when each ended (performance.now()) and how long the loop was late. */
const stalls: { end: number; ms: number }[] = [];

function tick(): void {
  const now = performance.now();
  const late = now - last - LOOP_SAMPLE_MS;
  if (late >= LOOP_SAMPLE_MS) {
    stalls.push({ end: now, ms: late });
    if (stalls.length > MAX_STALLS) stalls.shift();
  }
  last = now;
}

/** Start sampling (shared by every caller); the returned function stops this caller's use. */
export function watchLoop(): () => void {
  if (users++ === 0) {
    last = performance.now();
    timer = setInterval(tick, LOOP_SAMPLE_MS);
    timer.unref();
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--users === 0) {
      clearInterval(timer);
      timer = undefined;
      stalls.length = 0;
    }
  };
}

/** Milliseconds the loop was stalled since `start` (performance.now()), including a stall that only just ended. */
export function loopStalledSince(start: number, now = performance.now()): number {
  let total = 0;
  for (const s of stalls) if (s.end > start) total += Math.min(s.ms, s.end - start);
  // The sampler may not have run yet after the stall this very callback is late from.
  if (timer) {
    const ongoing = now - last - LOOP_SAMPLE_MS;
    if (ongoing > 0) total += Math.min(ongoing, now - Math.max(start, last));
  }
  return total;
}

/**
 * Whether a wait bounded by `boundMs` that began at `start` was starved: the loop was stalled for at
 * least half the bound meanwhile, so the bound says nothing about Redis. Callers then extend or retry
 * once (bounded); a Redis that hangs while the loop runs on time is still judged down.
 */
export function starved(start: number, boundMs: number): boolean {
  return boundMs > 0 && loopStalledSince(start) >= boundMs / 2;
}

/**
 * `reply`, or `timeout()`'s error once `ms` have passed. If the loop was starved meanwhile, the bound is
 * extended once by `ms` (the reply may be waiting in the socket, read after the timers): bounded by 2 × ms.
 */
export function raceStarvationAware<T>(reply: Promise<T>, ms: number, timeout: () => Error, unref = true): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const started = performance.now();
  const late = new Promise<never>((_, reject) => {
    const arm = (extended: boolean, from: number): void => {
      t = setTimeout(() => {
        // This timer's own lateness is a measure of the stall even when no sampler runs.
        const lateBy = performance.now() - from - ms;
        if (!extended && (lateBy >= ms / 2 || starved(from, ms))) arm(true, performance.now());
        else reject(timeout());
      }, ms);
      if (unref) t.unref();
    };
    arm(false, started);
  });
  reply.catch(() => undefined); // a reply that fails after the timeout is not an unhandled rejection
  return Promise.race([reply, late]).finally(() => clearTimeout(t));
}
