import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import request from 'supertest';
import { Queue } from 'bullmq';
import { AppError } from '../http/errors.js';
import { createApp, response, type App } from '../index.js';
import { backgroundOf, bullmqBackground, UnknownJobError } from './index.js';
import { NO_REDIS, startRedis, type RedisServer } from '../../test/helpers/redis-server.js';

const silent = pino({ level: 'silent' });
let queueNo = 0;

describe('bullmqBackground options', () => {
  it('should refuse a connection that is not a redis URL, naming the option', () => {
    assert.throws(() => bullmqBackground({ connection: 'http://localhost' }), (e: Error) => e instanceof AppError && /connection/.test(e.message));
  });
  it('should refuse an unknown option, naming the known ones', () => {
    assert.throws(() => bullmqBackground({ connection: 'redis://x', retries: 3 } as never), /retries.*one of connection, queueName/);
  });
  it('should refuse attempts below 1 and a bad backoff', () => {
    assert.throws(() => bullmqBackground({ connection: 'redis://x', attempts: 0 }), /attempts/);
    assert.throws(() => bullmqBackground({ connection: 'redis://x', backoff: { type: 'linear', delay: 1 } as never }), /backoff/);
  });
});

describe('named jobs in an App', () => {
  it('should refuse a bad or duplicate job name at registration', () => {
    const app = createApp({ background_tasks: { enabled: true } }, undefined, { logger: silent });
    assert.throws(() => app.job('has space', () => undefined), /not valid/);
    app.job('ok', () => undefined);
    assert.throws(() => app.job('ok', () => undefined), /already registered/);
  });
  it('should refuse to start with jobs registered but background tasks off', () => {
    const app = createApp({}, (a) => a.job('x', () => undefined), { logger: silent });
    assert.throws(() => app.intoRouter(), /background_tasks.enabled is false/);
  });
  it('should run a named job in process and refuse an unregistered name at enqueue', async () => {
    const seen: unknown[] = [];
    const app = createApp({ background_tasks: { enabled: true }, enable_request_id: true }, (a) => {
      a.job('note', (payload, ctx) => void seen.push([payload, ctx.metadata.name, ctx.metadata.request_id]));
      a.post('/ok', (data) => { data.background!.enqueue('note', { n: 1 }); return response(null, { status: 202 }); });
      a.post('/typo', (data) => { data.background!.enqueue('nope', {}); return response(null, { status: 202 }); });
    }, { logger: silent });
    const router = app.intoRouter();
    assert.equal((await request(router).post('/ok').set('x-request-id', 'r1')).status, 202);
    await backgroundOf(app)!.idle();
    assert.deepEqual(seen, [[{ n: 1 }, 'note', 'r1']]);
    const typo = await request(router).post('/typo');
    assert.equal(typo.status, 500);
    assert.doesNotMatch(JSON.stringify(typo.body), /nope/); // 500s never leak internals
    assert.throws(() => backgroundOf(app)!.enqueue('nope'), (e: Error) => e instanceof UnknownJobError && /app\.job\("nope"/.test(e.message));
  });
  it('should refuse app.runWorker() without a shared queue', async () => {
    const app = createApp({ background_tasks: { enabled: true } }, (a) => a.job('x', () => undefined), { logger: silent });
    await assert.rejects(app.runWorker({ handleSignals: false }), /needs a shared job queue/);
  });
});

describe('the BullMQ executor in one process', { skip: NO_REDIS }, () => {
  let redis: RedisServer;
  const apps: { close(): Promise<void> }[] = [];
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const a of apps) await a.close();
    await redis?.stop();
  });

  function jobsApp(config: Record<string, unknown>, setup: (a: App) => void, options: Record<string, unknown> = {}): { app: App; queueName: string } {
    const queueName = `q${++queueNo}`;
    const app = createApp({ port: 0, host: '127.0.0.1', enable_request_id: true, ...config, background_tasks: { enabled: true, ...(config.background_tasks as object) } }, setup, {
      logger: silent,
      background: bullmqBackground({ connection: redis.url, queueName, ...options }),
    });
    return { app, queueName };
  }

  it('should refuse a closure: it cannot cross processes', async () => {
    const { app } = jobsApp({}, (a) => a.job('x', () => undefined));
    const handle = await app.listen({ handleSignals: false });
    apps.push(handle);
    assert.throws(() => backgroundOf(app)!.enqueue(() => undefined), /closure cannot cross processes/);
    assert.throws(() => backgroundOf(app)!.enqueue('missing'), UnknownJobError);
  });

  it('should retry a failing job with backoff when attempts > 1', async () => {
    const runs: number[] = [];
    const { app } = jobsApp({}, (a) => a.job('flaky', (_p, ctx) => {
      runs.push(ctx.attempt);
      if (ctx.attempt < 3) throw new Error('not yet');
    }), { attempts: 3, backoff: { type: 'fixed', delay: 20 } });
    const handle = await app.listen({ handleSignals: false });
    apps.push(handle);
    await backgroundOf(app)!.enqueue('flaky');
    // Bounded by a deadline, not a count of sleeps: on a busy machine BullMQ's delayed retries come late.
    const deadline = Date.now() + 30_000;
    while (runs.length < 3 && Date.now() < deadline) await sleep(25);
    assert.deepEqual(runs, [1, 2, 3]);
  });

  it('should answer 503 when max_queue_size jobs are waiting in Redis', async () => {
    // A web-only instance: nothing takes the jobs, so they stay waiting.
    const { app } = jobsApp({ background_tasks: { max_queue_size: 2 } }, (a) => {
      a.job('x', () => undefined);
      a.post('/e', async (data) => { await data.background!.enqueue('x'); return response(null, { status: 202 }); });
    }, { worker: false });
    const router = (await app.ready()).intoRouter();
    apps.push({ close: () => backgroundOf(app)!.shutdown().then(() => undefined) });
    assert.equal((await request(router).post('/e')).status, 202);
    assert.equal((await request(router).post('/e')).status, 202);
    const full = await request(router).post('/e');
    assert.equal(full.status, 503);
    assert.equal(full.headers['retry-after'], '1');
    assert.equal(full.body.type, 'https://keel.dev/errors/background-queue-full');
  });

  it('should hand a job that outlives drain_timeout_secs back to the queue, its signal aborted', async () => {
    let aborted = false;
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const { app, queueName } = jobsApp({ background_tasks: { drain_timeout_secs: 1 } }, (a) => a.job('long', (_p, ctx) => new Promise<void>((_, reject) => {
      started();
      ctx.signal.addEventListener('abort', () => {
        aborted = true;
        reject(ctx.signal.reason);
      });
    })));
    const handle = await app.listen({ handleSignals: false });
    await backgroundOf(app)!.enqueue('long', { big: true });
    await running;
    const t0 = performance.now();
    await handle.close();
    assert.ok(performance.now() - t0 >= 900, 'waited drain_timeout_secs');
    assert.equal(aborted, true);
    const queue = new Queue(queueName, { connection: { host: '127.0.0.1', port: redis.port }, prefix: 'keel:bull' });
    const waiting = await queue.getWaiting();
    await queue.close();
    assert.deepEqual(waiting.map((j) => [j.name, j.data.payload]), [['long', { big: true }]]);
  });
});
