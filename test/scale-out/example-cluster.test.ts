// keel:integration
/**
 * Two example servers (examples/server.ts) with REDIS_CLUSTER_NODES on a real 3-primary Redis Cluster
 * (issue 37): both ready; the server-level limit (burst 100, 50/s, per client address) is one bucket
 * across both; a /ws/chat message sent on one reaches a client of the other. docs/scaling.md#redis-cluster.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, get } from 'node:http';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { spawnFixture, type Fixture } from '../helpers/spawn-fixture.js';
import { NO_REDIS_CLUSTER, startRedisCluster, type RedisCluster } from '../helpers/redis-server.js';

const SERVER = fileURLToPath(new URL('../../examples/server.ts', import.meta.url));

interface Example { fixture: Fixture; url: string; output(): string }

async function startExample(seeds: string): Promise<Example> {
  const fixture = await spawnFixture(SERVER, {
    env: { PORT: '0', HOST: '127.0.0.1', REDIS_CLUSTER_NODES: seeds, REDIS_URL: '', NODE_ENV: 'test', KEEL_LOG_LEVEL: 'silent' },
    ready: /keel example server on (http:\/\/\S+) \(Redis Cluster mode/,
  });
  return { fixture, url: fixture.ready[1]!, output: fixture.output };
}

async function kill(e: Example | undefined): Promise<void> {
  await e?.fixture.kill();
}

describe('when two example servers run with REDIS_CLUSTER_NODES', { skip: NO_REDIS_CLUSTER }, () => {
  let cluster: RedisCluster;
  let a: Example;
  let b: Example;
  const sockets: WebSocket[] = [];

  before(async () => {
    cluster = await startRedisCluster();
    [a, b] = await Promise.all([startExample(cluster.seeds), startExample(cluster.seeds)]);
  });
  after(async () => {
    for (const s of sockets) s.terminate();
    await Promise.all([kill(a), kill(b)]);
    await cluster?.stop();
  });

  it('should answer /ready 200 on both', async () => {
    for (const e of [a, b]) {
      let status = 0;
      // The connections open on first use: readiness turns 200 once every primary answered.
      for (let i = 0; i < 100 && status !== 200; i++) {
        status = (await fetch(`${e.url}/ready`)).status;
        if (status !== 200) await sleep(100);
      }
      assert.equal(status, 200, e.output());
    }
  });

  it('should allow one shared bucket (burst 100 + 50/s) of 400 requests split over both, not two', async (t) => {
    // 16 keep-alive connections to each (the server allows one client 100 at once: max_connections_per_client).
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const status = (url: string) => new Promise<number>((resolve, reject) => {
      get(url, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      }).on('error', reject);
    });
    const started = performance.now();
    const statuses = await Promise.all(Array.from({ length: 400 }, (_, i) => status(`${(i % 2 ? a : b).url}/items`))).finally(() => agent.destroy());
    const elapsedS = (performance.now() - started) / 1000;
    const allowed = statuses.filter((s) => s === 200).length;
    assert.deepEqual([...new Set(statuses)].sort(), [200, 429]);
    // One bucket: 100 at once, then 50 per second of the run; two buckets would allow 200 at once.
    const most = 100 + Math.ceil(50 * elapsedS);
    t.diagnostic(`allowed ${allowed} of 400 in ${elapsedS.toFixed(2)} s`);
    assert.ok(allowed >= 100 && allowed <= most, `allowed ${allowed} of 400 in ${elapsedS.toFixed(2)} s (one bucket: 100..${most})`);
  });

  it('should deliver a /ws/chat message sent on one to a client of the other', async () => {
    const connect = (url: string) => new Promise<{ ws: WebSocket; got: string[] }>((resolve, reject) => {
      const ws = new WebSocket(`${url.replace('http', 'ws')}/ws/chat`);
      const got: string[] = [];
      ws.on('message', (d: Buffer) => got.push(d.toString()));
      ws.once('open', () => resolve({ ws, got }));
      ws.once('error', reject);
    });
    // The test before drained this client's shared bucket; it refills at 50/s: 2.1 s make it full again.
    await sleep(2100);
    const onA = await connect(a.url);
    const onB = await connect(b.url);
    sockets.push(onA.ws, onB.ws);
    for (let i = 0; i < 400; i++) {
      const n = Number(await cluster.client.eval(`return redis.call('PUBSUB', 'SHARDNUMSUB', KEYS[1])[2]`, 1, 'keel:ps:chat'));
      if (n >= 2) break;
      await sleep(25);
    }
    onA.ws.send('hello from A');
    for (let i = 0; i < 200 && onB.got.length === 0; i++) await sleep(25);
    await sleep(300); // a duplicate would show up here
    assert.deepEqual(onB.got, ['hello from A']);
    assert.deepEqual(onA.got, ['hello from A']);
  });
});
