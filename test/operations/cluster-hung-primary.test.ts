// keel:integration
/**
 * Issue 47, item 3: a hung Redis Cluster primary (SIGSTOP) affects only its own slots, and only until the
 * cluster fails it over. On 3 primaries with a replica each: instance A enqueues jobs and publishes events
 * (fail closed), B runs the jobs and has a chat client. Before, keel asked every primary (pingEveryPrimary)
 * before leaving "down", and ioredis kept listing the hung node: 576 of 592 jobs refused for a 60 s hang,
 * no event crossed, /ready 503 on both instances. Now a store asks only the shards it needs (pingSlotsOf).
 */
import { describe, it, before, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type WebSocket from 'ws';
import { NO_REDIS_CLUSTER, startRedisCluster, type ClusterNode, type RedisCluster } from '../helpers/redis-server.js';
import { startInstance, type Instance } from '../scale-out/instances.js';
import { chatClient, drive, PUBSUB_PREFIX, type Answer } from '../scale-out/cluster-traffic.js';

const slotOf = async (cluster: RedisCluster, key: string) => Number(await cluster.client.call('CLUSTER', 'KEYSLOT', key));

interface World { cluster: RedisCluster; a: Instance; b: Instance; queueShard: ClusterNode; otherShard: ClusterNode; doneKey: string; chat: { ws: WebSocket; got: string[] } }

function setUp(): World {
  const w = {} as World;
  before(async () => {
    w.cluster = await startRedisCluster({ replicas: 1 });
    w.queueShard = await w.cluster.primaryOf(await slotOf(w.cluster, '{keel:bull}'));
    // The jobs' record on a second shard; the third is the one hung when the queue's is not.
    for (let i = 0; !w.doneKey; i++) {
      const key = `test:done:{${i}}`;
      const owner = await w.cluster.primaryOf(await slotOf(w.cluster, key));
      if (owner !== w.queueShard) w.doneKey = key;
    }
    const doneShard = await w.cluster.primaryOf(await slotOf(w.cluster, w.doneKey));
    const primaries = await Promise.all([0, 5461, 10923].map((slot) => w.cluster.primaryOf(slot)));
    w.otherShard = primaries.find((n) => n !== w.queueShard && n !== doneShard)!;
    const env = { REDIS_CLUSTER_NODES: w.cluster.seeds, DONE_KEY: w.doneKey, PUBSUB_PREFIX, PUBSUB_FAIL_CLOSED: '1', READINESS: '1' };
    [w.a, w.b] = await Promise.all([startInstance({ ...env, INSTANCE: 'A', WORKER: '0' }), startInstance({ ...env, INSTANCE: 'B' })]);
    w.chat = await chatClient(w.cluster, w.b);
  });
  after(async () => {
    w.chat?.ws.terminate();
    await Promise.all([w.a?.kill(), w.b?.kill()]);
    await w.cluster?.stop();
  });
  return w;
}

/** The port of the primary serving `slot`, asked of a node that is not `hung` (a stopped node would never answer). */
async function primaryPort(cluster: RedisCluster, slot: number, hung: ClusterNode): Promise<number | undefined> {
  for (const n of cluster.nodes) {
    if (n === hung || !n.alive) continue;
    const ranges = await Promise.race([
      n.client.call('CLUSTER', 'SLOTS') as Promise<[number, number, [string, number]][]>,
      sleep(1000).then(() => undefined),
    ]).catch(() => undefined);
    const range = ranges?.find(([from, to]) => slot >= from && slot <= to);
    if (range) return Number(range[2][1]);
  }
  return undefined;
}

/** Resolves once another primary than `node` serves `slot` (its replica promoted), with when. */
async function promotion(cluster: RedisCluster, slot: number, node: ClusterNode, ms = 60_000): Promise<number> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    const port = await primaryPort(cluster, slot, node);
    if (port !== undefined && port !== node.port) return performance.now();
    await sleep(50);
  }
  throw new Error(`no replica promoted for slot ${slot} within ${ms} ms`);
}

/** Why /ready said 503, and when (the test's diagnostics). */
const whyNot: { at: number; text: string }[] = [];
const ready = async (i: Instance) => {
  const res = await fetch(`${i.url}/ready`, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
  if (res && res.status !== 200) whyNot.push({ at: performance.now(), text: ((await res.json()) as { detail: string }).detail });
  return res?.status ?? 0;
};

/**
 * Hang `hung` for `hangMs` under traffic. Returns what the test asserts on: the answers, when the replica
 * took over, and the /ready answers of both instances polled every 200 ms.
 */
async function hang(w: World, hung: ClusterNode, slot: number, hangMs: number, how: 'SIGSTOP' | 'SIGKILL' = 'SIGSTOP') {
  const answers: Answer[] = [];
  const probes: { at: number; a: number; b: number }[] = [];
  const stop = { done: false };
  const traffic = drive(w.a, stop, answers);
  const polling = (async () => {
    while (!stop.done) {
      const at = performance.now();
      const [a, b] = await Promise.all([ready(w.a), ready(w.b)]);
      probes.push({ at, a, b });
      await sleep(200);
    }
  })();
  await sleep(1000);
  const gotBefore = w.chat.got.length;
  const hungAt = performance.now();
  if (how === 'SIGSTOP') hung.pause();
  else void hung.kill();
  let promotedAt = 0;
  try {
    promotedAt = await promotion(w.cluster, slot, hung);
    await sleep(Math.max(0, hungAt + hangMs - performance.now()));
  } finally {
    if (how === 'SIGSTOP') hung.resume();
  }
  await sleep(2000);
  stop.done = true;
  await Promise.all([traffic, polling]);
  return { answers, probes, hungAt, promotedAt, resumedAt: hungAt + hangMs, gotBefore };
}

describe('when a Redis Cluster primary keel does not use hangs (SIGSTOP 60 s)', { skip: NO_REDIS_CLUSTER, timeout: 300_000 }, () => {
  const w = setUp();

  it('should accept jobs, carry events across instances and answer /ready 200 from 5 s after the promotion on', (t) => otherShardTrouble(t, w, 60_000, 'SIGSTOP'));
});

describe('when a Redis Cluster primary keel does not use is killed (SIGKILL)', { skip: NO_REDIS_CLUSTER, timeout: 300_000 }, () => {
  const w = setUp();

  it('should accept jobs, carry events across instances and answer /ready 200 from 5 s after the promotion on', (t) => otherShardTrouble(t, w, 15_000, 'SIGKILL'));
});

/** Trouble on a shard keel's queue and channel do not use: nothing of keel's is refused once its replica is promoted. */
async function otherShardTrouble(t: TestContext, w: World, ms: number, how: 'SIGSTOP' | 'SIGKILL'): Promise<void> {
    const hungSlot = await (async () => {
      for (const s of [0, 5461, 10923, 16383]) if ((await w.cluster.primaryOf(s)) === w.otherShard) return s;
      throw new Error('no slot of the other shard');
    })();
    const r = await hang(w, w.otherShard, hungSlot, ms, how);
    const settled = r.promotedAt + 5000;
    const jobs = r.answers.filter((x) => x.kind === 'job');
    const events = r.answers.filter((x) => x.kind === 'event');
    const afterPromotion = (xs: Answer[]) => xs.filter((x) => x.at >= settled && x.at < r.resumedAt);
    t.diagnostic(`not ready after the promotion: ${[...new Set(whyNot.filter((x) => x.at > settled).map((x) => `${((x.at - r.promotedAt) / 1000).toFixed(1)} s ${x.text}`))].slice(0, 8).join(' | ')}`);
    t.diagnostic(`replica promoted ${((r.promotedAt - r.hungAt) / 1000).toFixed(1)} s after ${how}; jobs ${jobs.filter((x) => x.status === 202).length} accepted, ${jobs.filter((x) => x.status === 503).length} refused; events ${events.filter((x) => x.status === 200).length} published, ${events.filter((x) => x.status === 503).length} refused; /ready 503 answers: ${r.probes.filter((p) => p.a !== 200 || p.b !== 200).length} of ${r.probes.length} polls`);
    const jobsAfter = afterPromotion(jobs);
    assert.ok(jobsAfter.length > 20, `traffic while hung: ${jobsAfter.length}`);
    assert.deepEqual(jobsAfter.filter((x) => x.status !== 202).map((x) => x.status), [], 'jobs refused after the promotion, though their shard is healthy');
    assert.deepEqual(afterPromotion(events).filter((x) => x.status !== 200).map((x) => x.status), [], 'events refused after the promotion');
    const probesAfter = r.probes.filter((p) => p.at >= settled && p.at < r.resumedAt);
    assert.ok(probesAfter.length > 20);
    assert.deepEqual(probesAfter.filter((p) => p.a !== 200 || p.b !== 200), [], '/ready 503 after the promotion');
    // Events crossed from A to B while the node was hung.
    const published = new Set(afterPromotion(events).map((x) => `e${x.n}`));
    const crossed = w.chat.got.filter((e) => published.has(e)).length;
    assert.ok(crossed >= published.size * 0.9, `events crossing: ${crossed} of ${published.size}`);
}

describe('when the primary of the queue\'s slot hangs (SIGSTOP 12 s)', { skip: NO_REDIS_CLUSTER, timeout: 300_000 }, () => {
  const w = setUp();

  it('should refuse jobs only until the replica takes over, then accept them within 5 s, and answer /ready 200', async (t) => {
    const slot = await slotOf(w.cluster, '{keel:bull}');
    const r = await hang(w, w.queueShard, slot, 12_000);
    const settled = r.promotedAt + 5000;
    const jobs = r.answers.filter((x) => x.kind === 'job');
    const after = jobs.filter((x) => x.at >= settled && x.at < r.resumedAt);
    const refusedWindow = jobs.filter((x) => x.status === 503);
    t.diagnostic(`replica promoted ${((r.promotedAt - r.hungAt) / 1000).toFixed(1)} s after SIGSTOP; ${refusedWindow.length} of ${jobs.length} jobs refused, the last ${refusedWindow.length ? ((Math.max(...refusedWindow.map((x) => x.at)) - r.promotedAt) / 1000).toFixed(1) : '-'} s after the promotion`);
    assert.ok(after.length > 5, `traffic between promotion + 5 s and the resume: ${after.length}`);
    assert.deepEqual(after.filter((x) => x.status !== 202).map((x) => x.status), [], 'jobs refused more than 5 s after the promotion');
    t.diagnostic(`not ready after the promotion: ${[...new Set(whyNot.filter((x) => x.at > settled && x.at < r.resumedAt).map((x) => `${((x.at - r.promotedAt) / 1000).toFixed(1)} s ${x.text}`))].slice(0, 8).join(' | ')}`);
    const probesAfter = r.probes.filter((p) => p.at >= settled && p.at < r.resumedAt);
    assert.deepEqual(probesAfter.filter((p) => p.a !== 200 || p.b !== 200), [], '/ready 503 more than 5 s after the promotion');
  });
});
