/**
 * Readiness (docs/operations.md, "Readiness"): whether the dependencies an App uses answer, so an
 * orchestrator sends traffic only to instances that can serve it. `/health` stays liveness (the
 * process serves); this answers 503 while Redis (rate-limit store, job queue, event bus) is down or
 * hung, or the background executor is not running.
 *
 * Every probe is cheap and bounded: an ioredis client's `status` first (a client that is reconnecting
 * is down without a round trip), then one PING bounded by READINESS_PROBE_TIMEOUT_MS, since a stopped
 * Redis keeps its sockets open and answers nothing. One answer is reused for `cache_ms` and concurrent
 * probes share the one in flight, so a probe storm costs Redis one PING per dependency per period.
 */
import type { ServerResponse } from 'node:http';
import type { KeelRequest } from '../http/request.js';
import { PROBLEM_CONTENT_TYPE, problemFor } from '../http/problem.js';
import { DEFAULT_REDIS_COMMAND_TIMEOUT_MS } from '../ops/redis-policy.js';
import { redisClientsOf, type WatchedRedisClient } from './observe.js';

/** Longest wait for one dependency's answer, ms (500: DEFAULT_REDIS_COMMAND_TIMEOUT_MS). */
export const READINESS_PROBE_TIMEOUT_MS = DEFAULT_REDIS_COMMAND_TIMEOUT_MS;
/** `Retry-After` of a 503 readiness answer, seconds (1). */
export const READINESS_RETRY_AFTER_SECONDS = 1;

/** The names of keel's own checks (an App's own checks take other names). */
export const KEEL_READINESS_CHECKS: readonly string[] = Object.freeze(['rate_limit_store', 'background', 'pubsub']);

/** One dependency: resolves when it is up, rejects (with why) when it is not. */
export interface DependencyCheck {
  readonly name: string;
  check(): Promise<void>;
}

/** What readiness reads from an App (its options, its executor). */
export interface ReadinessHost {
  readonly rateLimitOptions: { store?: unknown };
  readonly pubsub: unknown;
  readonly extensions: Map<string, unknown>;
  /** The App's own checks by name (AppOptions.readinessChecks). */
  readonly readinessChecks?: Readonly<Record<string, () => unknown>>;
}

export interface DependencyStatus {
  status: 'up' | 'down';
  /** Why it is down. */
  reason?: string;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, DependencyStatus>;
}

/**
 * `p`, or a rejection once `ms` have passed. The timer is not unref'd: someone awaits this answer (an
 * in-process `app.inject()` probe has no socket to keep the process alive), and it is cleared once `p` settles.
 */
function bounded(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  p.catch(() => undefined);
  return Promise.race([p, late]).then(() => undefined).finally(() => clearTimeout(timer));
}

/** Clients keel created for `owner`: every one connected, and a PING through those that do not block. */
async function checkClients(list: readonly { role: string; client: WatchedRedisClient; probe?: () => Promise<unknown> }[]): Promise<void> {
  for (const { client } of list) {
    if (client.status !== undefined && client.status !== 'ready') throw new Error(`redis connection ${client.status}`);
  }
  // A BullMQ worker's blocking connection (maxRetriesPerRequest: null) would queue a PING behind BZPOPMIN.
  // A store's own probe (the slots it needs, in a cluster) where it gave one.
  // A Cluster client keeps the option in redisOptions, and sends a PING to any node: a blocking one
  // (a BullMQ worker's, a sharded subscriber) is not pinged, whatever node a PING would reach.
  const blocking = (c: WatchedRedisClient) => (c.options?.maxRetriesPerRequest ?? (c.options as { redisOptions?: { maxRetriesPerRequest?: number | null } } | undefined)?.redisOptions?.maxRetriesPerRequest) === null;
  const pingable = list.filter(({ client, probe }) => probe || (!blocking(client) && typeof client.ping === 'function'));
  await Promise.all(pingable.map(({ client, probe }) => (probe ? probe() : client.ping!())));
}

/**
 * A store that tracks its own Redis state (lib/ops/store-health.ts: `status()` of the BullMQ executor and of
 * RedisPubSub) is down while it says Redis is down, even when a PING would pass: it refuses work (fails
 * fast) until its own probe sees Redis again. ('reconnecting' is left to the connection checks below: it
 * is also the state of a store that has not connected yet, which the PING then waits for.)
 */
function storeState(owner: unknown): void {
  const s = (owner as { status?(): { redis?: string } } | null)?.status;
  const redis = typeof s === 'function' ? s.call(owner)?.redis : undefined;
  if (redis === 'down') throw new Error('redis down (the store refuses work until Redis answers again)');
}

const hasPing = (v: unknown): v is { ping(): Promise<unknown> } => typeof (v as { ping?: unknown } | null)?.ping === 'function';

/** The checks an App needs: only dependencies it uses that can be down. */
export function dependencyChecks(app: ReadinessHost): DependencyCheck[] {
  const checks: DependencyCheck[] = [];
  const store = app.rateLimitOptions.store;
  // RedisStore (and any store with a ping()); MemoryStore cannot be down and has none.
  if (hasPing(store)) checks.push({ name: 'rate_limit_store', check: () => store.ping().then(() => undefined) });
  const executor = app.extensions.get('background') as { stats?(): { state: string } } | undefined;
  if (executor && typeof executor.stats === 'function') {
    checks.push({
      name: 'background',
      check: async () => {
        const { state } = executor.stats!();
        if (state !== 'running') throw new Error(`executor ${state}`);
        storeState(executor);
        await checkClients(redisClientsOf(executor));
      },
    });
  }
  // RedisPubSub: its two connections (publisher pinged, subscriber's status: a subscriber that is down
  // misses other instances' events) once it has opened them; before that ping() opens them. MemoryPubSub has none.
  const pubsub = app.pubsub;
  if (hasPing(pubsub)) {
    checks.push({
      name: 'pubsub',
      check: async () => {
        storeState(pubsub);
        const list = redisClientsOf(pubsub);
        await (list.length ? checkClients(list) : pubsub.ping());
      },
    });
  }
  for (const [name, fn] of Object.entries(app.readinessChecks ?? {})) {
    checks.push({ name, check: async () => void (await fn()) });
  }
  return checks;
}

/**
 * The readiness of one App: `report()` runs every check (bounded), reusing an answer for `cacheMs`.
 *
 * @example
 * const readiness = new Readiness(() => dependencyChecks(app), 1000);
 * const { ready, checks } = await readiness.report(); // { ready: false, checks: { pubsub: { status: 'down', reason: '…' } } }
 */
export class Readiness {
  readonly #checks: () => readonly DependencyCheck[];
  readonly #cacheMs: number;
  #list: readonly DependencyCheck[] | undefined;
  #last: { at: number; report: ReadinessReport } | undefined;
  #inFlight: Promise<ReadinessReport> | undefined;

  /** `checks` is called on the first report (the executor exists once the router is built). */
  constructor(checks: () => readonly DependencyCheck[], cacheMs: number) {
    this.#checks = checks;
    this.#cacheMs = cacheMs;
  }

  report(): Promise<ReadinessReport> {
    const last = this.#last;
    if (last && performance.now() - last.at < this.#cacheMs) return Promise.resolve(last.report);
    this.#inFlight ??= this.#run().finally(() => {
      this.#inFlight = undefined;
    });
    return this.#inFlight;
  }

  async #run(): Promise<ReadinessReport> {
    this.#list ??= this.#checks();
    const results = await Promise.all(this.#list.map(async ({ name, check }) => {
      try {
        await bounded(check(), READINESS_PROBE_TIMEOUT_MS);
        return [name, { status: 'up' }] as const;
      } catch (err) {
        return [name, { status: 'down', reason: String((err as Error)?.message ?? err) }] as const;
      }
    }));
    const checks: Record<string, DependencyStatus> = Object.fromEntries(results);
    const report: ReadinessReport = { ready: results.every(([, r]) => r.status === 'up'), checks };
    this.#last = { at: performance.now(), report };
    return report;
  }
}

/**
 * Answer a probe: 200 `{"status":"ready","checks":{…}}`, or 503 problem+json (`KEEL_SERVICE_UNAVAILABLE`,
 * `Retry-After`) naming what is down in `detail` and `checks`. Never cached by intermediaries.
 */
export function answerReadiness(readiness: Readiness, req: KeelRequest, res: ServerResponse): void {
  void readiness.report().then((report) => {
    if (res.headersSent) return;
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    let body: string;
    if (report.ready) {
      res.statusCode = 200;
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      body = JSON.stringify({ status: 'ready', checks: report.checks });
    } else {
      const down = Object.entries(report.checks).filter(([, c]) => c.status === 'down');
      const detail = `Not ready: ${down.map(([name, c]) => `${name} is down (${c.reason})`).join('; ')}`;
      const p = problemFor('KEEL_SERVICE_UNAVAILABLE', detail, { code: 'KEEL_SERVICE_UNAVAILABLE', down: down.map(([name]) => name), checks: report.checks });
      res.statusCode = 503;
      res.setHeader('Retry-After', String(READINESS_RETRY_AFTER_SECONDS));
      res.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
      body = JSON.stringify(p);
    }
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(req.method === 'HEAD' ? undefined : body);
  });
}
