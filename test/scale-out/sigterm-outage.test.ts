// keel:integration
/**
 * Issue 36, item 2: SIGTERM while Redis is away (SIGSTOPped: hung; or killed: reconnecting). The
 * instance (HTTP + a BullMQ worker) must exit within its drain timeout, not drain + BullMQ's hand-back
 * wait (HAND_BACK_GRACE_MS, 5 s: a hand-back cannot reach a Redis that is away), and a request in
 * flight when the signal came is still answered.
 *
 * DRAIN_SECS is 8 and the in-flight request takes 1 s: the old behaviour took 1 + 8 + 5 = 13.8 s from
 * the signal (a worker-only process, with no request: 8 + 5 = 13.0 s); the bound is 1 + 8 + 3.5 s (8 + 3.5
 * without a request), a margin for a busy machine: the new behaviour takes 8–9.3 s. The test tells them apart.
 */
import { describe, it, afterEach, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { bullmqBackground, createApp } from '../../lib/index.js';
import { backgroundOf } from '../../lib/background/index.js';
import { NO_REDIS, startRedis, type RedisServer } from '../helpers/redis-server.js';
import { startInstance, type Instance } from './instances.js';

const DRAIN_SECS = 8;
const IN_FLIGHT_MS = 1000;
const MARGIN_MS = 3500;

describe('when an instance is sent SIGTERM while its Redis is away', { skip: NO_REDIS }, () => {
  let redis: RedisServer | undefined;
  let instance: Instance | undefined;
  afterEach(async () => {
    await instance?.kill();
    redis?.resume();
    await redis?.stop();
    instance = redis = undefined;
  }, { timeout: 30_000 });

  /** Start Redis and an instance (HTTP + worker); with `job`, a job that runs for a minute is running in it. */
  async function setUp(job: boolean, mode: 'http' | 'worker' = 'http'): Promise<{ redis: RedisServer; instance: Instance }> {
    redis = await startRedis();
    instance = await startInstance({ REDIS_URL: redis.url, INSTANCE: 'A', MODE: mode, DRAIN_SECS: String(DRAIN_SECS) });
    if (job) {
      if (mode === 'worker') {
        // A worker-only process has no HTTP: an App here that runs no jobs enqueues it.
        const producer = createApp({ background_tasks: { enabled: true, drain_timeout_secs: 1 } }, (a) => a.job('slow', () => undefined), {
          logger: pino({ level: 'silent' }), background: bullmqBackground({ connection: redis.url, worker: false }),
        });
        (await producer.ready()).intoRouter();
        await backgroundOf(producer)!.enqueue('slow', { n: 1 });
        await backgroundOf(producer)!.shutdown();
      } else {
        const res = await fetch(`${instance.url}/enqueue?job=slow`, { method: 'POST' });
        assert.equal(res.status, 202, await res.text());
      }
      for (let i = 0; i < 600 && (await redis.client.llen('test:started')) === 0; i++) await sleep(50);
      assert.equal(await redis.client.llen('test:started'), 1, 'the job is running');
    }
    return { redis, instance };
  }

  /** A request in flight, Redis made away by `outage`, SIGTERM: how long the exit took, and the answer. */
  async function terminate(outage: (r: RedisServer) => Promise<void> | void): Promise<{ ms: number; code: number | null; answer?: Promise<Response> }> {
    // A worker-only process (no url) has no request in flight.
    const answer = instance!.url ? fetch(`${instance!.url}/wait?ms=${IN_FLIGHT_MS}`) : undefined;
    answer?.catch(() => undefined);
    await sleep(200); // the request has reached the handler
    await outage(redis!);
    const exited = once(instance!.child, 'exit');
    const started = performance.now();
    instance!.child.kill('SIGTERM');
    // Bounded: a hung process fails the test (and afterEach kills it).
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([exited, new Promise<'hung'>((r) => (timer = setTimeout(() => r('hung'), 60_000)))]);
    clearTimeout(timer);
    assert.notEqual(result, 'hung', `no exit within 60 s: ${instance!.output()}`);
    return { ms: performance.now() - started, code: (result as [number | null])[0], answer };
  }

  async function check(t: TestContext, outcome: { ms: number; code: number | null; answer?: Promise<Response> }): Promise<void> {
    t.diagnostic(`exited ${Math.round(outcome.ms)} ms after SIGTERM`);
    const bound = (outcome.answer ? IN_FLIGHT_MS : 0) + DRAIN_SECS * 1000 + MARGIN_MS;
    assert.ok(outcome.ms < bound, `exited after ${Math.round(outcome.ms)} ms, bound ${bound} ms: ${instance!.output()}`);
    assert.equal(outcome.code, 0, instance!.output());
    if (!outcome.answer) return;
    const res = await outcome.answer;
    assert.equal(res.status, 200, 'the request in flight was answered');
    assert.deepEqual(await res.json(), { waited: true, instance: 'A' });
  }

  it('should exit within the drain timeout when Redis hangs (SIGSTOP) while a job runs', { timeout: 120_000 }, async (t) => {
    await setUp(true);
    await check(t, await terminate((r) => r.pause()));
  });

  it('should exit within the drain timeout when Redis is killed while a job runs', { timeout: 120_000 }, async (t) => {
    await setUp(true);
    await check(t, await terminate((r) => r.kill()));
  });

  it('should exit within the drain timeout when a worker-only process\'s Redis is killed while a job runs', { timeout: 120_000 }, async (t) => {
    await setUp(true, 'worker');
    await check(t, await terminate((r) => r.kill()));
  });

  it('should exit without waiting out the drain timeout when Redis hangs and no job runs', { timeout: 120_000 }, async (t) => {
    await setUp(false);
    const outcome = await terminate((r) => r.pause());
    await check(t, outcome);
    // Nothing to drain: the wait is for the request in flight, not for a Redis that does not answer.
    assert.ok(outcome.ms < IN_FLIGHT_MS + (DRAIN_SECS * 1000) / 2, `exited after ${Math.round(outcome.ms)} ms with nothing to drain`);
  });
});
