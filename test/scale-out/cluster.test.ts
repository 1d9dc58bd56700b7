// keel:integration
/**
 * Two keel processes on a real 3-primary Redis Cluster (`redis-cli --cluster create` on loopback,
 * issue 37): a rate limit is one limit across both (the GCRA script's one key lives on one shard), a
 * job enqueued on A runs once on B's worker (BullMQ under the '{keel:bull}' hash tag), an event
 * published on A reaches B's subscribers once (sharded pub/sub). docs/scaling.md#redis-cluster.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { NO_REDIS_CLUSTER, startRedisCluster, type RedisCluster } from '../helpers/redis-server.js';
import { startInstance, type Instance } from './instances.js';

/** Resolves once `n` connections have SSUBSCRIBEd the channel (asked on the channel's shard). */
async function shardSubscribers(cluster: RedisCluster, channel: string, n: number): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const count = Number(await cluster.client.eval(`return redis.call('PUBSUB', 'SHARDNUMSUB', KEYS[1])[2]`, 1, channel));
    if (count >= n) return;
    await sleep(25);
  }
  assert.fail(`fewer than ${n} subscribers of ${channel}`);
}

function open(url: string): Promise<{ ws: WebSocket; messages: string[] }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const messages: string[] = [];
    ws.on('message', (d: Buffer) => {
      messages.push(d.toString());
      if (d.toString() === 'subscribed') resolve({ ws, messages });
    });
    ws.once('error', reject);
  });
}

describe('when two instances share a Redis Cluster', { skip: NO_REDIS_CLUSTER }, () => {
  let cluster: RedisCluster;
  let a: Instance;
  let b: Instance;
  const sockets: WebSocket[] = [];

  before(async () => {
    cluster = await startRedisCluster();
    [a, b] = await Promise.all([
      startInstance({ REDIS_CLUSTER_NODES: cluster.seeds, INSTANCE: 'A', WORKER: '0' }),
      startInstance({ REDIS_CLUSTER_NODES: cluster.seeds, INSTANCE: 'B' }),
    ]);
  });
  after(async () => {
    for (const s of sockets) s.terminate();
    await Promise.all([a?.kill(), b?.kill()]);
    await cluster?.stop();
  });

  it('should allow the limit in total, not the limit per instance', async () => {
    const started = performance.now();
    const statuses = await Promise.all(Array.from({ length: 60 }, (_, i) => fetch(`${(i % 2 ? a : b).url}/limited`).then((r) => r.status)));
    const elapsedS = (performance.now() - started) / 1000;
    const allowed = statuses.filter((s) => s === 200).length;
    assert.deepEqual([...new Set(statuses)].sort(), [200, 429]);
    assert.ok(allowed >= 20 && allowed <= 20 + Math.floor(elapsedS), `allowed ${allowed} of 60 in ${elapsedS.toFixed(2)} s (limit 20)`);
  });

  it('should keep each route\'s bucket on the primary of its key\'s slot', async () => {
    await Promise.all([fetch(`${a.url}/limited-too`), fetch(`${b.url}/limited`)]);
    const owners = await Promise.all(['test:rl:route:GET /limited:global', 'test:rl:route:GET /limited-too:global'].map(async (key) => {
      const slot = Number(await cluster.client.call('CLUSTER', 'KEYSLOT', key));
      const node = await cluster.primaryOf(slot);
      assert.equal(await node.client.exists(key), 1, `${key} is on the primary of slot ${slot}`);
      return node.port;
    }));
    assert.equal(owners.length, 2, 'both buckets found on their shards');
  });

  it('should run a job enqueued on A (no worker) once, on B', async () => {
    const res = await fetch(`${a.url}/enqueue?n=37`, { method: 'POST', headers: { 'x-request-id': 'req-cluster' } });
    assert.equal(res.status, 202, a.output());
    let rows: string[] = [];
    for (let i = 0; i < 300 && rows.length === 0; i++) {
      rows = await cluster.client.lrange('test:done', 0, -1);
      if (rows.length === 0) await sleep(50);
    }
    await sleep(500); // a second run would show up here
    rows = await cluster.client.lrange('test:done', 0, -1);
    assert.deepEqual(rows.map((r) => JSON.parse(r)), [{ instance: 'B', payload: { n: 37 }, request_id: 'req-cluster', attempt: 1 }]);
    // Every key of the queue is under the hash tag: one slot.
    const keys = await Promise.all(cluster.nodes.map((n) => n.client.keys('*keel-background*')));
    assert.ok(keys.flat().length > 0 && keys.flat().every((k) => k.startsWith('{keel:bull}:keel-background:')), keys.flat().join(' '));
  });

  it('should deliver an event published on A to B\'s subscribers once', async () => {
    const onB = await open(`${b.url.replace('http', 'ws')}/ws/chat`);
    const alsoOnB = await open(`${b.url.replace('http', 'ws')}/ws/chat`);
    const onA = await open(`${a.url.replace('http', 'ws')}/ws/chat`);
    sockets.push(onB.ws, alsoOnB.ws, onA.ws);
    // One sharded subscription per instance, however many of its clients listen.
    await shardSubscribers(cluster, 'keel:ps:chat', 2);
    for (let i = 0; i < 5; i++) onA.ws.send(`hello ${i}`);
    const want = Array.from({ length: 5 }, (_, i) => `A: hello ${i}`);
    for (let i = 0; i < 200 && (onB.messages.length < 6 || alsoOnB.messages.length < 6 || onA.messages.length < 6); i++) await sleep(25);
    await sleep(300); // a duplicate would show up here
    assert.deepEqual(onB.messages, ['subscribed', ...want]);
    assert.deepEqual(alsoOnB.messages, ['subscribed', ...want]);
    assert.deepEqual(onA.messages, ['subscribed', ...want]);
  });
});
