// keel:integration
/**
 * A Redis Cluster in trouble during traffic (issue 37), on 3 primaries: (1) with one replica each, the
 * primary holding the job queue's slot (and, by the '{keel:bull}' hash tag in PUBSUB_PREFIX, the chat
 * channel's) is SIGKILLed once its replica is in sync, and the replica takes over; (2) that slot migrates to another primary
 * (MIGRATING / IMPORTING, MIGRATE in small batches: ASK and TRYAGAIN, then MOVED). Every answer is
 * bounded, every accepted job runs once, no job answered 503 runs, no event arrives twice or after a
 * 503 (cluster-traffic.ts). The figures are in docs/scaling.md#redis-cluster.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type WebSocket from 'ws';
import { NO_REDIS_CLUSTER, startRedisCluster, type ClusterNode, type RedisCluster, type StartRedisClusterOptions } from '../helpers/redis-server.js';
import { startInstance, type Instance } from './instances.js';
import { chatClient, PUBSUB_PREFIX, trafficThrough } from './cluster-traffic.js';

const slotOf = async (cluster: RedisCluster, key: string) => Number(await cluster.client.call('CLUSTER', 'KEYSLOT', key));

/** A cluster, the primary of the queue's slot, a record key on another shard, instances A (no worker) and B. */
function setUp(options: StartRedisClusterOptions) {
  const s = { cluster: undefined as unknown as RedisCluster, a: undefined as unknown as Instance, b: undefined as unknown as Instance, owner: undefined as unknown as ClusterNode, slot: 0, doneKey: '', chat: undefined as { ws: WebSocket; got: string[] } | undefined };
  before(async () => {
    s.cluster = await startRedisCluster(options);
    s.slot = await slotOf(s.cluster, '{keel:bull}');
    s.owner = await s.cluster.primaryOf(s.slot);
    // The jobs' record lives on another shard, so it is not part of the trouble.
    for (let i = 0; !s.doneKey; i++) {
      const key = `test:done:{${i}}`;
      if ((await s.cluster.primaryOf(await slotOf(s.cluster, key))) !== s.owner) s.doneKey = key;
    }
    const env = { REDIS_CLUSTER_NODES: s.cluster.seeds, DONE_KEY: s.doneKey, PUBSUB_PREFIX, PUBSUB_FAIL_CLOSED: '1', RUNS_ON_STDOUT: '1' };
    [s.a, s.b] = await Promise.all([startInstance({ ...env, INSTANCE: 'A', WORKER: '0' }), startInstance({ ...env, INSTANCE: 'B' })]);
    s.chat = await chatClient(s.cluster, s.b);
  });
  after(async () => {
    s.chat?.ws.terminate();
    await Promise.all([s.a?.kill(), s.b?.kill()]);
    await s.cluster?.stop();
  });
  return s;
}

describe('when the primary of the queue\'s slot is killed during traffic', { skip: NO_REDIS_CLUSTER }, () => {
  const s = setUp({ replicas: 1 });

  it('should answer within bounds, run every accepted job once and deliver no event twice', async (t) => {
    await trafficThrough(t, s.cluster, s.a, s.b, s.chat!.got, async () => {
      // The replica has a copy (startRedisCluster waits for the links): killing a primary whose replica was
      // still in its handshake promoted an empty node and lost the jobs not yet run (the flake this prevents).
      const role = (await s.owner.client.call('ROLE')) as [string, number, unknown[]];
      assert.equal(role[2].length, 1, `the queue's primary has no replica in sync: ${JSON.stringify(role)}`);
      const killedAt = performance.now();
      await s.owner.kill();
      // The replica takes over once the others have missed the primary for cluster-node-timeout (1 s).
      const deadline = performance.now() + 60_000;
      while (performance.now() < deadline && (await s.cluster.primaryOf(s.slot).catch(() => s.owner)) === s.owner) await sleep(50);
      await s.cluster.healthy(60_000);
      assert.notEqual(await s.cluster.primaryOf(s.slot), s.owner, 'the replica was not promoted');
      return `replica promoted (cluster ok) ${((performance.now() - killedAt) / 1000).toFixed(1)} s after the kill`;
    });
  });
});

describe('when the queue\'s slot migrates to another primary during traffic', { skip: NO_REDIS_CLUSTER }, () => {
  const s = setUp({});

  it('should answer within bounds, run every accepted job once and deliver no event twice', async (t) => {
    await trafficThrough(t, s.cluster, s.a, s.b, s.chat!.got, async () => {
      const to = s.cluster.nodes.find((n) => n !== s.owner)!;
      const [fromId, toId] = await Promise.all([s.owner.client.call('CLUSTER', 'MYID'), to.client.call('CLUSTER', 'MYID')]) as string[];
      const started = performance.now();
      await to.client.call('CLUSTER', 'SETSLOT', s.slot, 'IMPORTING', fromId!);
      await s.owner.client.call('CLUSTER', 'SETSLOT', s.slot, 'MIGRATING', toId!);
      // Small batches with pauses, so traffic meets the slot half moved (ASK, TRYAGAIN).
      let moved = 0;
      for (let i = 0; i < 1000; i++) {
        const keys = (await s.owner.client.call('CLUSTER', 'GETKEYSINSLOT', s.slot, 5)) as string[];
        if (keys.length === 0) break;
        await s.owner.client.call('MIGRATE', '127.0.0.1', to.port, '', 0, 5000, 'KEYS', ...keys);
        moved += keys.length;
        await sleep(50);
      }
      for (const n of [to, s.owner, ...s.cluster.nodes.filter((n) => n !== to && n !== s.owner)]) await n.client.call('CLUSTER', 'SETSLOT', s.slot, 'NODE', toId!);
      await s.cluster.healthy(30_000);
      assert.equal(await s.cluster.primaryOf(s.slot), to);
      return `slot ${s.slot} migrated (${moved} keys) in ${((performance.now() - started) / 1000).toFixed(1)} s`;
    });
  });
});
