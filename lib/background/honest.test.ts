/**
 * The BullMQ executor's answers are honest (issue 28): a job answered 503 never runs, a job answered
 * with an id runs, a caller's jobId adds one job however often it is enqueued, and Redis outages are
 * logged once per change of state with refusals counted, not one stack per job.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { createApp, type App } from '../index.js';
import { backgroundOf, bullmqBackground, BackgroundStoreError, type BackgroundRunner } from './index.js';
import { NO_REDIS, useRedis } from '../../test/helpers/redis-server.js';
import { captureLogs, type LogRecord } from '../../test/helpers/log-capture.js';

// A generous bound, far above the 500 ms enqueue timeout: proof an enqueue did not wait for Redis to
// resume, not a timing figure.
const ANSWER_BOUND_MS = 5000;
let queueNo = 0;

function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  for (const t0 = Date.now(); Date.now() - t0 < ms; await sleep(25)) if (await check()) return;
  assert.fail(`timed out waiting for ${what}`);
}

describe('the BullMQ executor, honest about what it stored', { skip: NO_REDIS }, () => {
  const redis = useRedis();

  async function start(options: Record<string, unknown> = {}): Promise<{ app: App; bg: BackgroundRunner; ran: string[]; queue: Queue; logs: LogRecord[] }> {
    const queueName = `honest${++queueNo}`;
    const ran: string[] = [];
    const logs: LogRecord[] = [];
    const { logger, next } = captureLogs();
    void (async () => { for (;;) logs.push(await next()); })();
    const app = createApp({ background_tasks: { enabled: true, drain_timeout_secs: 1 } }, (a) => {
      a.job('record', (payload, ctx) => void ran.push(`${(payload as { n: number }).n}@${ctx.id}`));
    }, { logger, background: bullmqBackground({ connection: redis.url, queueName, ...options }) });
    (await app.ready()).intoRouter();
    const bg = backgroundOf(app)!;
    const queue = new Queue(queueName, { connection: { host: '127.0.0.1', port: redis.port }, prefix: 'keel:bull' });
    redis.closeAtEnd(() => queue.close(), () => bg.shutdown()); // closed last first: the executor, then the queue
    return { app, bg, ran, queue, logs };
  }

  describe('when a caller gives a jobId', () => {
    it('should resolve with it and add the job once however often it is enqueued', async () => {
      const { bg, ran } = await start();
      assert.equal(await bg.enqueue('record', { n: 1 }, { jobId: 'order-17' }), 'order-17');
      assert.equal(await bg.enqueue('record', { n: 1 }, { jobId: 'order-17' }), 'order-17');
      const other = await bg.enqueue('record', { n: 2 });
      assert.match(String(other), /^[0-9a-f-]{36}$/);
      await until('both jobs to run', () => ran.length >= 2);
      await sleep(300); // a second copy of order-17 would run now
      assert.deepEqual(ran.sort(), [`1@order-17`, `2@${other}`]);
    });
    it('should refuse a jobId BullMQ cannot store, naming the rule', async () => {
      const { bg } = await start();
      assert.throws(() => bg.enqueue('record', {}, { jobId: '42' }), /jobId .* not only digits/);
      assert.throws(() => bg.enqueue('record', {}, { jobId: 'a:b' }), /jobId/);
    });
  });

  describe('when a copy of a refused enqueue reaches Redis late', () => {
    it('should discard it unrun, log the discard, and run a job without a verdict', async () => {
      const { ran, queue, logs } = await start();
      // What a hung Redis leaves behind: the job stored, and the producer's verdict beside it.
      await redis.client.set(`keel:bull:${queue.name}:keel-fate:tok-refused`, 'refused');
      await queue.add('record', { payload: { n: 1 }, metadata: { name: 'record', request_id: null }, token: 'tok-refused' }, { jobId: 'late-copy' });
      await queue.add('record', { payload: { n: 2 }, metadata: { name: 'record', request_id: null }, token: 'tok-fine' }, { jobId: 'fine' });
      await until('the queue to drain', async () => (await queue.getCompletedCount()) === 2);
      assert.deepEqual(ran, ['2@fine']);
      const discard = logs.find((l) => /discarded, not run/.test(String(l.msg)));
      assert.ok(discard, JSON.stringify(logs));
      assert.equal(discard.job_id, 'late-copy');
      assert.equal(await redis.client.get(`keel:bull:${queue.name}:keel-fate:tok-fine`), 'run');
    });
  });

  describe('when Redis hangs (SIGSTOP) while jobs are being enqueued, then resumes', () => {
    it('should answer every enqueue within the bound, run each job it gave an id for, never one it refused', async () => {
      const { bg, ran, queue, logs } = await start();
      const accepted: string[] = [];
      let refused = 0;
      let n = 0;
      const enqueueOne = async () => {
        const k = n++;
        try {
          const id = await within(bg.enqueue('record', { n: k }) as Promise<string>, ANSWER_BOUND_MS);
          accepted.push(`${k}@${id}`);
        } catch (err) {
          assert.ok(err instanceof BackgroundStoreError, String(err));
          assert.equal(err.status, 503);
          refused++;
        }
      };
      // A steady stream of enqueues, so that some adds are in flight at the moment Redis stops.
      let flowing = true;
      const stream = (async () => {
        while (flowing) {
          await Promise.all(Array.from({ length: 8 }, enqueueOne));
          await sleep(5); // refusals answer at once: leave the timers their turn
        }
      })();
      await until('some jobs stored', () => accepted.length >= 20);
      redis.pause();
      try {
        await until('refusals', () => refused >= 20, ANSWER_BOUND_MS * 2);
        assert.equal(bg.status!().redis, 'down');
      } finally {
        redis.resume();
      }
      await until('the executor to see Redis again', () => bg.status!().redis === 'up');
      await until('more jobs stored after the hang', () => accepted.length >= 60);
      flowing = false;
      await stream;
      await until('the queue to drain', async () => (await queue.getWaitingCount()) + (await queue.getActiveCount()) === 0 && ran.length >= accepted.length);
      await sleep(500);
      assert.deepEqual([...ran].sort(), [...accepted].sort(), `${refused} refused`);
      // One line when Redis stopped answering, one when it came back; refusals counted, no stack.
      const msgs = logs.map((l) => String(l.msg));
      assert.equal(msgs.filter((m) => m === 'redis store down (not answering)').length, 1, msgs.join('\n'));
      assert.equal(msgs.filter((m) => m === 'redis store back').length, 1, msgs.join('\n'));
      const refusals = logs.filter((l) => /jobs refused/.test(String(l.msg)));
      assert.ok(refusals.length >= 1 && refusals.length < refused, `${refusals.length} refusal lines for ${refused} refusals`);
      assert.ok(refusals.every((l) => l.err === undefined && typeof l.count === 'number'), JSON.stringify(refusals));
    });
  });
});
