/**
 * Limits weighted by cost (issue 35 items 2 and 3): expensive work (AsyncAPI parse / validate, GraphQL
 * operations over HTTP and WebSocket, JSON-RPC batches, gRPC calls) is paid for by the time it takes, not by the request.
 *
 * The request rate limit counts requests, so a client under it could still buy unbounded CPU: 45
 * AsyncAPI documents a second at ~70 ms each (under 50/s) took 3 s of CPU per second and held
 * `/health` for 14 s. One cost model answers it, in milliseconds of event-loop time:
 *
 * 1. **A CPU budget per client** (the rate limit's key: the address, trust_proxy-aware, IPv6 by /56).
 *    A token bucket of `cpu_ms_burst` milliseconds refilled at `cpu_ms_per_second`, kept as GCRA
 *    (one number per client, as middleware/rate-limit/store.ts). Work is admitted while the bucket
 *    holds anything; once it is done its measured time is charged, and the bucket may go into debt,
 *    so the client's next requests are refused with 429 + Retry-After (the time until the debt is
 *    repaid). Charging after the work is what lets the cost be measured rather than guessed.
 * 2. **A server-wide queue**: at most `max_concurrent` operations run at once and `max_queued` wait,
 *    served round-robin between clients; past the queue: 503 + Retry-After to the client with most waiting
 *    (a lighter client's operation takes the place of that client's newest, issue 44 #9). The queue starts one operation per turn of the event loop
 *    (setImmediate), and after an operation that took d ms the next starts no sooner than
 *    d × (1 − max_loop_share) / max_loop_share ms later, so the requests that arrived meanwhile
 *    (`/health`, cheap routes, new connections, which take several turns to become requests) are
 *    served between two expensive ones instead of behind all of them.
 * 3. **Overload shedding** (lib/server/overload.ts): while the event loop's mean delay or utilisation over the
 *    last window passes its threshold, new expensive work is refused with 503 + Retry-After, when expensive
 *    work is what keeps it late (some running or queued, or SHED_CHARGED_SHARE of the window charged).
 *
 * JSON-RPC batches and gRPC calls use the same budget (admitted the same way, refused in their own
 * protocol's words) but not the queue: a gRPC stream lives as long as its client wants and a JSON-RPC
 * method may wait on a database, so neither may hold one of `max_concurrent` slots. They charge the
 * slices of work keel runs for them, each timed as it runs: parsing, decoding, a handler's synchronous
 * part (all of a sync handler; an async one up to its first await), each streamed message produced,
 * encoding and serialising the answer. What an async handler does after an await is not charged.
 *
 * What is measured: for work that completes synchronously, its wall time, which is the event-loop time
 * it took from everyone else. For work that goes async, the lesser of its wall time and the process
 * CPU time spent meanwhile (so a resolver waiting on a database is not charged its wait). Budgets live
 * in the process: CPU is a per-process resource, so with `workers: N` each worker keeps its own.
 */
import type { ServerResponse } from 'node:http';
import type { KeelRequest, Middleware, NextFunction } from '../http/request.js';
import { sendProblem } from '../http/problem.js';
import { clientKeys, compileTrust, DEFAULT_IPV6_SUBNET, keyFromAddress } from '../../middleware/rate-limit/client-key.js';
import type { WorkLimitsConfig } from '../records/work.js';
import { WorkGate } from './work-gate.js';

export { CpuLedger, DEFAULT_LEDGER_MAX_KEYS } from './cpu-ledger.js';
export { WorkGate, WorkRefusal, SHED_CHARGED_SHARE, WORK_UNAVAILABLE_RETRY_AFTER_SECONDS } from './work-gate.js';

/** Where an App's gate is kept in `host.extensions`. */
/** Key of the App's work gate in `app.extensions`. */
export const WORK_GATE_EXTENSION = 'keel:work-gate';
const GATE_KEY = WORK_GATE_EXTENSION;

export interface WorkGateHost {
  readonly config: { readonly work_limits: Readonly<WorkLimitsConfig> | null; readonly trust_proxy: unknown };
  readonly extensions: Map<string, unknown>;
  onShutdown(fn: () => void | Promise<void>): unknown;
}

/** An App's gate and client key, or undefined when `work_limits` is null. */
export interface AppWorkGate {
  readonly gate: WorkGate;
  readonly keyOf: (req: KeelRequest) => string;
}

/**
 * The App's WorkGate (one per App, made on first use from `ServerConfig.work_limits`), with the
 * client key the server-level rate limit uses; undefined when `work_limits` is null.
 */
export function workGateOf(host: WorkGateHost): AppWorkGate | undefined {
  const config = host.config.work_limits;
  if (!config) return undefined;
  const existing = host.extensions.get(GATE_KEY) as AppWorkGate | undefined;
  if (existing) return existing;
  // The rate limit's client key: the address trust_proxy picks, IPv6 grouped by /56.
  const trust = host.config.trust_proxy === false ? null : compileTrust(host.config.trust_proxy as Parameters<typeof compileTrust>[0]);
  const made: AppWorkGate = { gate: new WorkGate(config), keyOf: keyFromAddress(clientKeys(DEFAULT_IPV6_SUBNET), trust) };
  host.extensions.set(GATE_KEY, made);
  host.onShutdown(() => made.gate.close());
  return made;
}

/**
 * Connect-style admission for a mount or route: refuses (429 / 503 problem with Retry-After) before the
 * body is read, so a refusal costs the server almost nothing.
 */
export function workAdmission(g: AppWorkGate): Middleware {
  return function keelWorkAdmission(req: KeelRequest, res: ServerResponse, next: NextFunction): void {
    try {
      g.gate.admit(g.keyOf(req));
    } catch (err) {
      sendProblem(res, err);
      return;
    }
    next();
  };
}

/**
 * `work` for an HTTP request, through the gate when there is one: queued, measured and charged to
 * the request's client; skipped (undefined) when the response ended meanwhile (timeout, client gone).
 */
export function runWork<T>(g: AppWorkGate | undefined, req: KeelRequest, res: ServerResponse, work: () => T | Promise<T>): Promise<T | undefined> {
  if (!g) return Promise.resolve().then(work);
  return g.gate.run(g.keyOf(req), work, () => res.writableEnded || res.destroyed);
}
