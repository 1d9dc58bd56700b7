/**
 * A Redis Cluster losing a primary during traffic (issue 37): a 3-primary cluster with one replica each;
 * the primary holding the job queue's slot (and, by the '{keel:bull}' hash tag in PUBSUB_PREFIX, the
 * chat channel's) is SIGKILLed while instance A enqueues jobs and publishes events (fail closed) and B
 * runs the jobs and has a chat client. Every answer is bounded, every accepted job runs once, no job
 * answered 503 runs, no event arrives twice or after a 503. The figures go to docs/scaling.md.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { NO_REDIS_CLUSTER, startRedisCluster, type ClusterNode, type RedisCluster } from '../helpers/redis-server.js';
import { startInstance, type Instance } from './instances.js';

const PUBSUB_PREFIX = '{keel:bull}:ps:';

interface Answer { kind: 'job' | 'event'; n: number; status: number; ms: number; at: number }

async function drive(a: Instance, stop: { done: boolean }, answers: Answer[]): Promise<void> {
  for (let n = 1; !stop.done && n < 5000; n++) {
    const timed = async (kind: Answer['kind'], send: () => Promise<Response>) => {
      const t0 = performance.now();
      const status = await send().then((r) => r.status, () => 0);
      answers.push({ kind, n, status, ms: performance.now() - t0, at: t0 });
    };
    await Promise.all([
      timed('job', () => fetch(`${a.url}/enqueue?n=${n}`, { method: 'POST', signal: AbortSignal.timeout(15_000) })),
      timed('event', () => fetch(`${a.url}/publish`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ topic: 'chat', payload: `e${n}` }), signal: AbortSignal.timeout(15_000) })),
    ]);
    await sleep(20);
  }
}

describe('when the primary of the queue\'s slot is killed during traffic', { skip: NO_REDIS_CLUSTER }, () => {
  let cluster: RedisCluster;
  let a: Instance;
  let b: Instance;
  let victim: ClusterNode;
  let doneKey = '';
  let chat: WebSocket | undefined;

  before(async () => {
    cluster = await startRedisCluster({ replicas: 1 });
    victim = await cluster.primaryOf(Number(await cluster.client.call('CLUSTER', 'KEYSLOT', '{keel:bull}')));
    // The jobs' record lives on another shard, so it survives the kill.
    for (let i = 0; !doneKey; i++) {
      const key = `test:done:{${i}}`;
      if ((await cluster.primaryOf(Number(await cluster.client.call('CLUSTER', 'KEYSLOT', key)))) !== victim) doneKey = key;
    }
    const env = { REDIS_CLUSTER_NODES: cluster.seeds, DONE_KEY: doneKey, PUBSUB_PREFIX, PUBSUB_FAIL_CLOSED: '1' };
    [a, b] = await Promise.all([startInstance({ ...env, INSTANCE: 'A', WORKER: '0' }), startInstance({ ...env, INSTANCE: 'B' })]);
  });
  after(async () => {
    chat?.terminate();
    await Promise.all([a?.kill(), b?.kill()]);
    await cluster?.stop();
  });

  it('should answer within bounds, run every accepted job once and deliver no event twice', async (t) => {
    const got: string[] = [];
    chat = new WebSocket(`${b.url.replace('http', 'ws')}/ws/chat`);
    chat.on('message', (d: Buffer) => got.push(d.toString()));
    await new Promise((resolve, reject) => chat!.once('open', resolve).once('error', reject));
    for (let i = 0; i < 400; i++) {
      const n = Number(await cluster.client.eval(`return redis.call('PUBSUB', 'SHARDNUMSUB', KEYS[1])[2]`, 1, `${PUBSUB_PREFIX}chat`));
      if (n >= 1) break;
      await sleep(25);
    }

    const answers: Answer[] = [];
    const stop = { done: false };
    const traffic = drive(a, stop, answers);
    await sleep(1000);
    const killedAt = performance.now();
    await victim.kill();
    // The replica takes over once the others have missed the primary for cluster-node-timeout (1 s).
    const slot = Number(await cluster.client.call('CLUSTER', 'KEYSLOT', '{keel:bull}'));
    for (let i = 0; i < 600 && (await cluster.primaryOf(slot).catch(() => victim)) === victim; i++) await sleep(50);
    await cluster.healthy(30_000);
    const promotedMs = performance.now() - killedAt;
    assert.notEqual(await cluster.primaryOf(slot), victim, 'the replica was not promoted');
    await sleep(3000); // traffic after the failover
    stop.done = true;
    await traffic;

    const jobs = answers.filter((x) => x.kind === 'job');
    const events = answers.filter((x) => x.kind === 'event');
    for (const x of answers) assert.ok([200, 202, 503].includes(x.status), `${x.kind} ${x.n} answered ${x.status}`);
    const accepted = new Set(jobs.filter((x) => x.status === 202).map((x) => x.n));
    const refused = new Set(jobs.filter((x) => x.status === 503).map((x) => x.n));

    // Every accepted job runs; wait for them (bounded), then a little longer for duplicates.
    let runs: number[] = [];
    for (let i = 0; i < 600; i++) {
      runs = (await cluster.client.lrange(doneKey, 0, -1)).map((r) => (JSON.parse(r) as { payload: { n: number } }).payload.n);
      if ([...accepted].every((n) => runs.includes(n))) break;
      await sleep(50);
    }
    await sleep(1000);
    runs = (await cluster.client.lrange(doneKey, 0, -1)).map((r) => (JSON.parse(r) as { payload: { n: number } }).payload.n);
    const lost = [...accepted].filter((n) => !runs.includes(n));
    const twice = runs.filter((n, i) => runs.indexOf(n) !== i);
    const refusedRan = runs.filter((n) => refused.has(n));

    const published = new Set(events.filter((x) => x.status === 200).map((x) => `e${x.n}`));
    const failed = new Set(events.filter((x) => x.status === 503).map((x) => `e${x.n}`));
    const eventTwice = got.filter((e, i) => got.indexOf(e) !== i);
    const failedDelivered = got.filter((e) => failed.has(e));
    const eventsLost = [...published].filter((e) => !got.includes(e));

    const failures = answers.filter((x) => x.status !== 200 && x.status !== 202);
    const window = failures.length ? (Math.max(...failures.map((x) => x.at + x.ms)) - Math.min(...failures.map((x) => x.at))) / 1000 : 0;
    const slowest = Math.max(...answers.map((x) => x.ms));
    t.diagnostic(`replica promoted (cluster ok) ${(promotedMs / 1000).toFixed(1)} s after the kill; 503s for ${window.toFixed(1)} s; slowest answer ${slowest.toFixed(0)} ms`);
    t.diagnostic(`jobs: ${accepted.size} accepted, ${refused.size} refused (503); lost ${lost.length}, ran twice ${twice.length}, refused but ran ${refusedRan.length}`);
    t.diagnostic(`events: ${published.size} published, ${failed.size} refused (503); delivered twice ${eventTwice.length}, refused but delivered ${failedDelivered.length}, published but not delivered ${eventsLost.length}`);

    assert.ok(slowest < 5000, `slowest answer ${slowest.toFixed(0)} ms`);
    assert.ok(accepted.size > 0 && refused.size + accepted.size === jobs.length);
    assert.deepEqual(lost, [], 'accepted jobs that never ran');
    assert.deepEqual(twice, [], 'jobs that ran twice');
    assert.deepEqual(refusedRan, [], 'jobs answered 503 that ran');
    assert.deepEqual(eventTwice, [], 'events delivered twice');
    assert.deepEqual(failedDelivered, [], 'events answered 503 that were delivered');
    // Traffic after the failover is served again.
    const last = answers.slice(-10);
    assert.ok(last.every((x) => x.status !== 503), `still failing after the failover: ${JSON.stringify(last)}`);
  });
});
