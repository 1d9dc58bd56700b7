/**
 * WorkLimitsConfig (ServerConfig.work_limits): what expensive work may cost one client and the server
 * (issue 35 items 2 and 3). The mechanics are in lib/server/cost.ts (client CPU budgets, the queue) and
 * lib/server/overload.ts (event-loop delay and utilisation); docs/workers-and-limits.md, "Work limits".
 */
import { defineRecord, fail, t, type InputOf } from './define.js';

/**
 * Default CPU budget refill per client: 250 ms of event-loop time per second, a quarter of the one
 * thread. An AsyncAPI document just inside `max_expanded_nodes` costs ~70 ms: 45 of them a second
 * under the request rate took 3 s of CPU per second and held `/health` 14 s (issue 35).
 */
export const DEFAULT_WORK_CPU_MS_PER_SECOND = 250;
/** Default CPU budget per client at once (bucket size): 5000 ms, so bursts of ordinary queries never meet it. */
export const DEFAULT_WORK_CPU_MS_BURST = 5000;
/** Default expensive operations running at once, server-wide (async ones hold their slot until they finish): 4. */
export const DEFAULT_WORK_MAX_CONCURRENT = 4;
/**
 * Default most of the event loop's time expensive work may take back to back: 0.5. After an operation
 * that took d ms, the next starts d ms later at the earliest, so `/health`, cheap routes and new
 * connections get at least half of the loop however much expensive work waits (issue 35: 70 ms
 * documents one per turn still held a new connection, which needs several turns, for seconds).
 */
export const DEFAULT_WORK_MAX_LOOP_SHARE = 0.5;
/**
 * Default expensive operations waiting for a slot: 8; one more is refused with 503 + Retry-After. The
 * queue is a wait: 8 near-budget documents (~70 ms each, as much again for the loop's share) are
 * ~1 s, where 32 waited past the example server's 10 s request_timeout on a loaded machine.
 */
export const DEFAULT_WORK_MAX_QUEUED = 8;
/**
 * Default shedding threshold on event-loop delay: 100 ms, the mean lateness of a 10 ms timer over the
 * last sample window (what fastify's under-pressure measures as `maxEventLoopDelay`).
 */
export const DEFAULT_WORK_MAX_EVENT_LOOP_DELAY_MS = 100;
/**
 * Default shedding threshold on event-loop utilisation (node's `performance.eventLoopUtilization()`
 * over the last sample window): 0, not checked. Utilisation near 1 says the loop is busy, not that it
 * is late: a loop running one short task after another still answers `/health` between them (keel's
 * own test suite runs at 1.0 and answers in time). Delay is what clients wait; set this to shed on
 * utilisation as well (e.g. 0.98).
 */
export const DEFAULT_WORK_MAX_EVENT_LOOP_UTILIZATION = 0;
/** Default length of the window the event loop is sampled over, ms: 500. */
export const DEFAULT_WORK_SAMPLE_INTERVAL_MS = 500;

export interface WorkLimitsConfig {
  cpu_ms_per_second: number | null;
  cpu_ms_burst: number;
  max_concurrent: number;
  max_queued: number;
  max_loop_share: number;
  max_event_loop_delay_ms: number;
  max_event_loop_utilization: number;
  sample_interval_ms: number;
}

export const WorkLimitsConfig = defineRecord<WorkLimitsConfig>()('WorkLimitsConfig', {
  cpu_ms_per_second: { type: t.number(0), nullable: true, default: DEFAULT_WORK_CPU_MS_PER_SECOND, doc: 'Per client: milliseconds of event-loop time per second expensive work (AsyncAPI parse / validate, GraphQL operations, JSON-RPC batches, gRPC calls) may use, refilled continuously; null = no per-client budget' },
  cpu_ms_burst: { type: t.integer(1), default: DEFAULT_WORK_CPU_MS_BURST, doc: 'Per client: milliseconds of that time usable at once (bucket size); past it, 429 with Retry-After' },
  max_concurrent: { type: t.integer(1), default: DEFAULT_WORK_MAX_CONCURRENT, doc: 'Server-wide: expensive operations running at once; others wait in the queue, one started per turn of the event loop' },
  max_queued: { type: t.integer(0), default: DEFAULT_WORK_MAX_QUEUED, doc: 'Server-wide: expensive operations waiting for a slot; past it, 503 with Retry-After' },
  max_loop_share: { type: t.number(0, 1), default: DEFAULT_WORK_MAX_LOOP_SHARE, doc: 'Server-wide: most of the event loop\'s time expensive work may take back to back (0-1]: after an operation of d ms the next starts d × (1 − share) / share ms later; 1 = one per turn' },
  max_event_loop_delay_ms: { type: t.number(0), default: DEFAULT_WORK_MAX_EVENT_LOOP_DELAY_MS, doc: 'New expensive work is refused (503) while the mean event-loop delay of the last window passes this, ms; 0 = not checked' },
  max_event_loop_utilization: { type: t.number(0, 1), default: DEFAULT_WORK_MAX_EVENT_LOOP_UTILIZATION, doc: 'New expensive work is refused (503) while event-loop utilisation over the last window passes this (0-1); 0 = not checked' },
  sample_interval_ms: { type: t.integer(10, 60_000), default: DEFAULT_WORK_SAMPLE_INTERVAL_MS, doc: 'The window event-loop delay and utilisation are measured over, ms' },
}, {
  check: (v, path) => {
    if (v.max_loop_share === 0) fail('WorkLimitsConfig', path, 'max_loop_share', 0, 'a number > 0 and <= 1', 'At 0 expensive work would never start; 1 lets it run one operation per turn.');
    if (v.cpu_ms_per_second === 0) fail('WorkLimitsConfig', path, 'cpu_ms_per_second', 0, 'a number > 0, or null for no per-client budget', 'At 0 a client could never run expensive work again once its burst is spent.');
  },
});

export type WorkLimitsConfigInput = InputOf<typeof WorkLimitsConfig>;
