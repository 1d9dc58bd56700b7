/**
 * express-rate-limit's Store API against a real redis-server: the real rate-limit-redis package, and
 * keel's RedisStore in the same role, each shared by two app instances (each with its own Redis
 * connection, as two processes behind a load balancer would be). Requests alternate between the
 * instances and the limit holds in total.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { Redis } from 'ioredis';
import { RedisStore as RateLimitRedisStore } from 'rate-limit-redis';
import { rateLimit, RedisStore } from './index.js';
import { EXPRESS_VERSIONS, type ExpressFactory } from '../../test/helpers/express-versions.js';
import { NO_REDIS, startRedis, type RedisServer } from '../../test/helpers/redis-server.js';

type Send = (command: string, ...args: string[]) => Promise<unknown>;

const stores: [string, (send: Send, prefix: string) => object][] = [
  ['rate-limit-redis', (send, prefix) => new RateLimitRedisStore({ prefix, sendCommand: (...args: string[]) => send(args[0]!, ...args.slice(1)) as never })],
  ["keel's RedisStore", (send, prefix) => new RedisStore({ prefix, sendCommand: (command, ...args) => send(command!, ...args) })],
];

describe('rateLimit with express-rate-limit options and a Redis store shared by two instances', { skip: NO_REDIS }, () => {
  let redis: RedisServer;
  const clients: Redis[] = [];
  const connect = async (): Promise<Send> => {
    const client = new Redis({ host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: 1 });
    clients.push(client);
    return (command, ...args) => client.call(command, ...args) as Promise<unknown>;
  };
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const c of clients) c.disconnect();
    await redis?.stop();
  });

  /** One app instance: its own Redis connection and store, the same prefix as its peer. */
  async function instance(express: ExpressFactory, makeStore: (send: Send, prefix: string) => object, prefix: string, options: Record<string, unknown>) {
    const app = express();
    app.use(rateLimit({ windowMs: 60_000, limit: 5, standardHeaders: 'draft-7', ...options, store: makeStore(await connect(), prefix) } as never));
    app.get('/', (_req, res) => void res.send('ok'));
    app.get('/fail', (_req, res) => void res.status(400).send('no'));
    return app;
  }

  for (const { name, express } of EXPRESS_VERSIONS) {
    for (const [storeName, makeStore] of stores) {
      describe(`with ${storeName} under ${name}`, () => {
        it('should hold the limit in total when requests alternate between the instances', async () => {
          const prefix = `${storeName}:${name}:total:`;
          const apps = [await instance(express, makeStore, prefix, {}), await instance(express, makeStore, prefix, {})];
          const answers = [];
          for (let i = 0; i < 8; i++) answers.push(await request(apps[i % 2]).get('/'));
          assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200, 429, 429, 429]);
          assert.deepEqual(answers.slice(0, 5).map((a) => a.headers.ratelimit?.replace(/reset=\d+/, 'reset')),
            [4, 3, 2, 1, 0].map((n) => `limit=5, remaining=${n}, reset`));
          assert.match(answers[5]!.headers['content-type'] ?? '', /^application\/problem\+json/);
          // Both instances wrote one counter, which expires with the window.
          const keys = await redis.client.keys(`${prefix}*`);
          assert.equal(keys.length, 1);
          const ttl = await redis.client.pttl(keys[0]!);
          assert.ok(ttl > 0 && ttl <= 60_000, `PTTL ${ttl}`);
        });

        it('should take back failed requests on the shared counter with skipFailedRequests', async () => {
          const prefix = `${storeName}:${name}:skip:`;
          const apps = [await instance(express, makeStore, prefix, { limit: 2, skipFailedRequests: true }), await instance(express, makeStore, prefix, { limit: 2, skipFailedRequests: true })];
          const counter = async (): Promise<number> => Number(await redis.client.get((await redis.client.keys(`${prefix}*`))[0] ?? 'none'));
          // The hit is taken back after the response is sent: wait for the shared counter to show it.
          const settled = async (hits: number): Promise<void> => {
            for (let i = 0; i < 200 && (await counter()) !== hits; i++) await new Promise((r) => setTimeout(r, 10));
            assert.equal(await counter(), hits);
          };
          const statuses: number[] = [];
          for (const [i, path] of ['/fail', '/fail', '/fail'].entries()) {
            statuses.push((await request(apps[i % 2]).get(path)).status);
            await settled(0);
          }
          for (const i of [0, 1, 0]) statuses.push((await request(apps[i]).get('/')).status);
          assert.deepEqual(statuses, [400, 400, 400, 200, 200, 429]);
        });

        it('should forget a client on resetKey from either instance', async () => {
          const prefix = `${storeName}:${name}:reset:`;
          const store = makeStore(await connect(), prefix);
          const limiter = rateLimit({ limit: 1, store } as never) as unknown as { resetKey(key: string): Promise<void> };
          const app = express();
          app.use(limiter as never);
          app.get('/', (_req, res) => void res.send('ok'));
          const peer = await instance(express, makeStore, prefix, { limit: 1 });
          assert.equal((await request(app).get('/')).status, 200);
          assert.equal((await request(peer).get('/')).status, 429);
          await limiter.resetKey('127.0.0.1');
          assert.equal((await request(peer).get('/')).status, 200);
        });
      });
    }
  }
});
