import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { bullmqBackground, createApp, RedisPubSub, type App, type ServerHandle, type WorkerHandle } from '../index.js';
import { RedisStore } from '../../middleware/rate-limit/index.js';
import { NO_REDIS, startRedis, type RedisServer } from '../../test/helpers/redis-server.js';

// Generous bounds that turn a hang into a failure; not timing figures (those are `npm run bench`).
const ANSWER_BOUND_MS = 3000;
const RECOVERY_BOUND_MS = 20_000;

async function probe(url: string): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(ANSWER_BOUND_MS) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

/** Probe until the status is `want` (Redis reconnects with a backoff); the last answer. */
async function until(url: string, want: number): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const deadline = Date.now() + RECOVERY_BOUND_MS;
  for (;;) {
    const r = await probe(url);
    if (r.status === want || Date.now() > deadline) return r;
    await sleep(100);
  }
}

function assertDown(r: { status: number; body: Record<string, unknown>; headers: Headers }, down: string[]): void {
  assert.equal(r.status, 503, JSON.stringify(r.body));
  assert.match(r.headers.get('content-type')!, /^application\/problem\+json/);
  assert.equal(r.headers.get('retry-after'), '1');
  assert.equal(r.headers.get('cache-control'), 'no-store');
  assert.equal(r.body.code, 'KEEL_SERVICE_UNAVAILABLE');
  assert.deepEqual([...(r.body.down as string[])].sort(), [...down].sort());
  for (const name of down) assert.match(String(r.body.detail), new RegExp(`${name} is down`));
}

describe('readiness against a real redis-server', { skip: NO_REDIS }, () => {
  let redis: RedisServer;
  let client: Redis;
  let app: App;
  let server: ServerHandle;
  let pubsub: RedisPubSub;

  before(async () => {
    redis = await startRedis();
    // The rate-limit client is the user's, as docs/scaling.md shows it.
    client = new Redis(redis.url, { maxRetriesPerRequest: 1, commandTimeout: 500 });
    client.on('error', () => {});
    pubsub = new RedisPubSub({ connection: redis.url });
    app = createApp({ port: 0, readiness: { cache_ms: 0 }, metrics: { default_metrics: false }, background_tasks: { enabled: true } }, (a) => {
      a.get('/health', () => ({ status: 'ok' }));
      a.get('/limited', () => ({ ok: true }), { rate_limit: { per_second: 100, burst: 100 } });
      a.job('noop', async () => undefined);
    }, {
      rateLimit: { store: new RedisStore({ sendCommand: (cmd, ...args) => client.call(cmd!, ...args) as Promise<unknown> }) },
      background: bullmqBackground({ connection: redis.url, queueName: `ready-${process.pid}` }),
      pubsub,
    });
    server = await app.listen({ handleSignals: false });
  });
  after(async () => {
    redis?.resume();
    await server?.close();
    await pubsub?.close();
    client?.disconnect();
    await redis?.stop();
  });

  it('should answer 200 listing every dependency the App uses while Redis is up', async () => {
    const r = await until(`${server.url}/ready`, 200);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, { status: 'ready', checks: { rate_limit_store: { status: 'up' }, background: { status: 'up' }, pubsub: { status: 'up' } } });
    assert.equal(r.headers.get('cache-control'), 'no-store');
  });

  it('should answer 503 listing what is down while redis-server is stopped (SIGSTOP), /health staying 200, and 200 once it continues', async () => {
    redis.pause();
    try {
      assertDown(await probe(`${server.url}/ready`), ['rate_limit_store', 'background', 'pubsub']);
      assert.equal((await probe(`${server.url}/health`)).status, 200, 'liveness does not depend on Redis');
    } finally {
      redis.resume();
    }
    assert.equal((await until(`${server.url}/ready`, 200)).status, 200);
  });

  it('should answer 503 while redis-server is killed, and 200 once a new one listens on the port', async () => {
    await redis.kill();
    try {
      assertDown(await until(`${server.url}/ready`, 503), ['rate_limit_store', 'background', 'pubsub']);
      assert.equal((await probe(`${server.url}/health`)).status, 200);
    } finally {
      await redis.start();
    }
    const back = await until(`${server.url}/ready`, 200);
    assert.equal(back.status, 200, JSON.stringify(back.body));
    // keel's own clients (the job queue's, the event bus's) reconnected, and the metrics say so.
    const text = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(text, /^keel_redis_reconnects_total\{client="background"\} [1-9]\d*$/m);
    assert.match(text, /^keel_redis_reconnects_total\{client="pubsub"\} [1-9]\d*$/m);
    assert.match(text, /^keel_dependency_up\{dependency="pubsub"\} 1$/m);
  });
});

describe('a worker-only process with readiness on', { skip: NO_REDIS }, () => {
  let redis: RedisServer;
  let worker: WorkerHandle;

  before(async () => {
    redis = await startRedis();
    const app = createApp({ port: 0, readiness: { cache_ms: 0 }, metrics: { default_metrics: false }, background_tasks: { enabled: true } }, (a) => {
      a.job('noop', async () => undefined);
    }, { background: bullmqBackground({ connection: redis.url, queueName: `ready-worker-${process.pid}` }) });
    worker = await app.runWorker({ handleSignals: false });
  });
  after(async () => {
    redis?.resume();
    await worker?.close();
    await redis?.stop();
  });

  it('should serve /health and /ready on its own port: 200, 503 while Redis is down, 200 after', async () => {
    assert.ok(worker.url, 'the probe server URL');
    assert.equal((await probe(`${worker.url}/health`)).status, 200);
    assert.deepEqual((await until(`${worker.url}/ready`, 200)).body, { status: 'ready', checks: { background: { status: 'up' } } });
    const queue = `ready-worker-${process.pid}`;
    const up = await (await fetch(`${worker.url}/metrics`)).text();
    assert.match(up, new RegExp(`^keel_background_jobs\\{queue="${queue}",state="waiting"\\} 0$`, 'm'), 'queue depth read from BullMQ');
    assert.match(up, /^keel_dependency_up\{dependency="background"\} 1$/m);
    await redis.kill();
    try {
      assertDown(await until(`${worker.url}/ready`, 503), ['background']);
      assert.equal((await probe(`${worker.url}/health`)).status, 200);
      // The scrape still answers: no depth (Redis cannot say), the dependency down.
      const down = await (await fetch(`${worker.url}/metrics`, { signal: AbortSignal.timeout(ANSWER_BOUND_MS) })).text();
      assert.doesNotMatch(down, /^keel_background_jobs\{/m);
      assert.match(down, /^keel_dependency_up\{dependency="background"\} 0$/m);
      assert.match(down, /^keel_store_errors_total\{store="background",kind="(timeout|error)"\} [1-9]/m);
    } finally {
      await redis.start();
    }
    assert.equal((await until(`${worker.url}/ready`, 200)).status, 200);
    assert.equal((await fetch(`${worker.url}/items`)).status, 404);
  });
});

describe('readiness answers within cache_ms', { skip: NO_REDIS }, () => {
  it('should reuse one answer for a probe storm instead of asking Redis again', async () => {
    const redis = await startRedis();
    const pubsub = new RedisPubSub({ connection: redis.url });
    const app = createApp({ readiness: { cache_ms: 60_000 } }, undefined, { pubsub });
    try {
      const first = await app.inject({ method: 'GET', url: '/ready' });
      assert.equal(first.statusCode, 200);
      await redis.kill();
      // 50 probes after Redis died, within the cache period: the first answer, no new PING.
      const storm = await Promise.all(Array.from({ length: 50 }, () => app.inject({ method: 'GET', url: '/ready' })));
      assert.deepEqual(new Set(storm.map((r) => r.statusCode)), new Set([200]));
    } finally {
      await pubsub.close();
      await redis.stop();
    }
  });

  it('should run the App\'s own checks, bounded: a throwing one and one that never answers are down', async () => {
    let dbUp = false;
    const app = createApp({ readiness: { cache_ms: 0 } }, undefined, {
      readinessChecks: {
        db: async () => {
          if (!dbUp) throw new Error('connection refused');
        },
        search: () => new Promise(() => undefined),
      },
    });
    const down = await app.inject({ method: 'GET', url: '/ready' });
    assert.equal(down.statusCode, 503, down.body);
    const body = JSON.parse(down.body) as { down: string[]; checks: Record<string, { reason?: string }> };
    assert.deepEqual(body.down, ['db', 'search'], down.body);
    assert.equal(body.checks.db!.reason, 'connection refused');
    assert.match(body.checks.search!.reason!, /no answer within 500 ms/);
    dbUp = true;
    const again = await app.inject({ method: 'GET', url: '/ready' });
    assert.deepEqual(JSON.parse(again.body).down, ['search'], again.body);
  });

  it('should refuse a check named like one of keel\'s, or one that is not a function', () => {
    assert.throws(() => createApp({}, undefined, { readinessChecks: { pubsub: async () => undefined } }), /readinessChecks\.pubsub: keel's own check/);
    assert.throws(() => createApp({}, undefined, { readinessChecks: { db: 'SELECT 1' as never } }), /readinessChecks\.db must be a function/);
  });

  it('should answer probes before the rate limit and authentication: never a 429 or a 401', async () => {
    const app = createApp({ readiness: {}, rate_limit: { per_second: 0.001, burst: 1 }, api_key_auth: { keys: ['k-0123456789abcdef'] } }, (a) => a.get('/hello', () => ({ ok: true })));
    const probes = await Promise.all(Array.from({ length: 10 }, () => app.inject({ method: 'GET', url: '/ready' })));
    assert.deepEqual(probes.map((r) => r.statusCode), Array(10).fill(200));
    const head = await app.inject({ method: 'HEAD', url: '/ready' });
    assert.equal(head.statusCode, 200);
    assert.equal(head.body, '');
    // The routes are still behind both.
    assert.equal((await app.inject({ method: 'GET', url: '/hello' })).statusCode, 401);
  });

  it('should say ready with no dependency to check, and leave GET /ready to the routes when readiness is off', async () => {
    const on = createApp({ readiness: {} });
    assert.deepEqual(JSON.parse((await on.inject({ method: 'GET', url: '/ready' })).body), { status: 'ready', checks: {} });
    const off = createApp({}, (a) => a.get('/ready', () => ({ mine: true })));
    assert.deepEqual(JSON.parse((await off.inject({ method: 'GET', url: '/ready' })).body), { mine: true });
  });
});
