// keel:integration
/**
 * Issue 47, item 2: counters an alert can see move. Every counter an alert reads is present at 0 from
 * start-up (an increase from a first sample of 4 is no increase to Prometheus); load shedding (503
 * overloaded) is counted; a Redis that comes back empty says so and counts the jobs it lost.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { bullmqBackground, createApp, response, type App, type ServerHandle } from '../../lib/index.js';
import { NO_REDIS, startRedis, type RedisServer } from '../helpers/redis-server.js';
import { sample } from '../helpers/exposition.js';
import { workGateOf } from '../../lib/server/cost.js';
import { EPOCH_DEPTH_SAMPLE_MS } from '../../lib/ops/redis-epoch.js';

/** A logger whose lines the test reads. */
function captured(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

const until = async (what: string, ok: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe('when a keel App with BullMQ jobs and work limits starts', { skip: NO_REDIS, timeout: 120_000 }, () => {
  const queue = `counters-${process.pid}`;
  let redis: RedisServer;
  let app: App;
  let server: ServerHandle;
  const log = captured();
  const scrape = async () => (await fetch(`${server.url}/metrics`)).text();

  before(async () => {
    redis = await startRedis();
    app = createApp(
      { port: 0, host: '127.0.0.1', metrics: { default_metrics: false }, background_tasks: { enabled: true, drain_timeout_secs: 1 }, shutdown_timeout: 1, rate_limit: null,
        work_limits: { cpu_ms_per_second: null, max_concurrent: 1, max_queued: 0, max_event_loop_delay_ms: 0 } },
      (a) => {
        a.job('work', async () => undefined);
        a.post('/jobs', async (d) => {
          await d.background!.enqueue('work', {});
          return response({ queued: true }, { status: 202 });
        });
      },
      // worker: false: the jobs stay waiting in Redis, as behind busy workers.
      { logger: log.logger, background: bullmqBackground({ connection: redis.url, queueName: queue, worker: false }) },
    );
    server = await app.listen({ handleSignals: false });
  });
  after(async () => {
    await server?.close();
    await redis?.stop();
  });

  it('should expose the stalled, lost, shed and event counters at 0 before anything happened', async () => {
    const text = await scrape();
    assert.equal(sample(text, 'keel_background_jobs_stalled_total', { queue }), 0, text);
    assert.equal(sample(text, 'keel_background_jobs_lost_total', { queue }), 0);
    assert.equal(sample(text, 'keel_requests_shed_total', { reason: 'overloaded' }), 0);
    assert.equal(sample(text, 'keel_requests_shed_total', { reason: 'max_queued' }), 0);
    assert.equal(sample(text, 'keel_events_total', { outcome: 'refused' }), 0);
  });

  it('should count each request shed with 503 overloaded in keel_requests_shed_total', async () => {
    const before = sample(await scrape(), 'keel_requests_shed_total', { reason: 'max_queued' }) ?? 0;
    // The App's own gate (what GraphQL, AsyncAPI and JSON-RPC run expensive work through): one slot, no queue.
    const gate = workGateOf(app)!.gate;
    const runs = Array.from({ length: 4 }, () => gate.run('203.0.113.7', () => new Promise((r) => setTimeout(r, 20))).then(() => 200, (e: { status?: number }) => e.status));
    const statuses = await Promise.all(runs);
    const shed = statuses.filter((s) => s === 503).length;
    assert.ok(shed >= 1, `four at once do not fit one slot and no queue: ${statuses.join(',')}`);
    assert.equal((sample(await scrape(), 'keel_requests_shed_total', { reason: 'max_queued' }) ?? 0) - before, shed);
  });

  it('should say that Redis came back empty, and count the jobs it held as lost', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await fetch(`${server.url}/jobs`, { method: 'POST' })).status, 202);
    // The depth is sampled every EPOCH_DEPTH_SAMPLE_MS while Redis answers: let one sample see the five.
    await new Promise((r) => setTimeout(r, EPOCH_DEPTH_SAMPLE_MS + 1000));
    await redis.kill();
    await until('the outage seen', () => log.lines.some((l) => /redis (store down|connection lost)/.test(String(l.msg))));
    await redis.start(); // no persistence: an empty Redis
    await until('the loss reported', () => log.lines.some((l) => String(l.msg).startsWith('redis came back empty')));
    const line = log.lines.find((l) => String(l.msg).startsWith('redis came back empty'))!;
    assert.equal(line.jobs_lost, 5, JSON.stringify(line));
    assert.equal(line.queue, queue);
    assert.equal(line.level, 50, 'an error line');
    assert.equal(sample(await scrape(), 'keel_background_jobs_lost_total', { queue }), 5);
  });
});
