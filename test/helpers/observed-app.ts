/**
 * A keel App that makes every metric the operator assets (the Grafana dashboard and the alert rules)
 * chart: requests by route and status (200, 404, 429, 500), a Redis-backed rate limit, BullMQ jobs that
 * succeed and fail, RedisPubSub events with a local subscriber, readiness and prom-client's process
 * metrics. Used by test/operations-assets.test.ts and by the dashboard picture script.
 */
import { Redis } from 'ioredis';
import { bullmqBackground, createApp, RedisPubSub, response, type App, type ServerHandle } from '../../lib/index.js';
import { RedisStore } from '../../middleware/rate-limit/index.js';

export interface ObservedApp {
  readonly app: App;
  readonly url: string;
  /** One round of mixed traffic: every route, a job that succeeds, one that fails, an event. */
  traffic(round: number): Promise<Record<number, number>>;
  close(): Promise<void>;
}

export interface ObservedAppOptions {
  /** BullMQ queue name (distinct per run, so leftovers of an earlier run are not counted). */
  queue: string;
  /** Milliseconds the slow route waits at most (a spread of latencies for the histogram). Default 50. */
  slowMs?: number;
}

export async function startObservedApp(redisUrl: string, options: ObservedAppOptions): Promise<ObservedApp> {
  const slowMs = options.slowMs ?? 50;
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
  const pubsub = new RedisPubSub({ connection: redisUrl, prefix: `${options.queue}:ps:` });
  redis.on('error', () => {}); // outages are part of the runs; keel counts them
  const app = createApp(
    { port: 0, host: '127.0.0.1', metrics: {}, readiness: {}, background_tasks: { enabled: true, drain_timeout_secs: 2 }, shutdown_timeout: 2 },
    (a) => {
      a.job('work', async (payload) => {
        if ((payload as { fail?: boolean }).fail) throw new Error('the job failed on purpose');
      });
      a.get('/users/{id:int}', (d) => ({ id: d.pathParams.id }));
      a.get('/slow', async () => {
        await new Promise((r) => setTimeout(r, Math.random() * slowMs));
        return { slow: true };
      });
      a.get('/boom', () => {
        throw new Error('a handler failed on purpose');
      });
      a.get('/limited', () => ({ ok: true }), { rate_limit: { per_second: 2, burst: 4, ip_based: false } });
      a.post('/jobs', async (d) => {
        await d.background!.enqueue('work', { fail: d.query.fail === '1' });
        return response({ queued: true }, { status: 202 });
      });
      a.post('/events', async () => {
        await a.publish('news', { at: Date.now() });
        return { published: true };
      });
    },
    {
      rateLimit: { store: new RedisStore({ prefix: `${options.queue}:rl:`, sendCommand: (command, ...args) => redis.call(command!, ...args) as Promise<unknown> }) },
      background: bullmqBackground({ connection: redisUrl, queueName: options.queue }),
      pubsub,
    },
  );
  let handle: ServerHandle;
  try {
    handle = await app.listen({ handleSignals: false });
  } catch (err) {
    redis.disconnect();
    await pubsub.close();
    throw err;
  }
  // A local subscriber: published events come back from Redis and are delivered to it.
  const events = app.pubsub.subscribe('news');
  void (async () => {
    for await (const _ of events) void _;
  })().catch(() => undefined);

  const send = async (method: string, path: string) => {
    try {
      const res = await fetch(`${handle.url}${path}`, { method, signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 0;
    }
  };
  return {
    app,
    url: handle.url,
    async traffic(round) {
      const statuses: Record<number, number> = {};
      const calls: [string, string][] = [
        ['GET', `/users/${round}`], ['GET', `/users/${round + 1}`], ['GET', '/slow'], ['GET', '/slow'],
        ['GET', `/nowhere/${round}`], ['GET', '/limited'], ['GET', '/limited'], ['GET', '/limited'],
        ['POST', '/jobs'], ['POST', '/events'],
      ];
      if (round % 3 === 0) calls.push(['GET', '/boom'], ['POST', '/jobs?fail=1']);
      for (const status of await Promise.all(calls.map(([m, p]) => send(m, p)))) statuses[status] = (statuses[status] ?? 0) + 1;
      return statuses;
    },
    async close() {
      await events.return?.();
      await handle.close();
      // The App does not own the pub/sub it was given: its connections are ours to close.
      await pubsub.close();
      redis.disconnect();
    },
  };
}
