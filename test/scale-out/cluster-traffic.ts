/**
 * Traffic through a Redis Cluster in trouble (issue 37), shared by the failover and slot-migration
 * tests: instance A enqueues a job and publishes an event (fail closed) every ~20 ms while `disturb`
 * runs; B runs the jobs and has a chat client. `trafficThrough` then waits for the accepted jobs (B's own record of
 * its runs, up to RUN_WAIT_MS: long enough for BullMQ's stall check), asserts the honesty rules (every answer bounded, accepted jobs once, refused jobs never, no event twice, no
 * refused event delivered) and reports the figures.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import type { RedisCluster } from '../helpers/redis-server.js';
import type { Instance } from './instances.js';
import { DEFAULT_BULLMQ_LOCK_DURATION_MS, DEFAULT_BULLMQ_STALLED_INTERVAL_MS } from '../../lib/background/bullmq-options.js';

export const PUBSUB_PREFIX = '{keel:bull}:ps:';

export interface Answer { kind: 'job' | 'event'; n: number; status: number; ms: number; at: number }

export async function drive(a: Instance, stop: { done: boolean }, answers: Answer[]): Promise<void> {
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


/** A chat client on `instance`, once its shard subscription is in place. */
export async function chatClient(cluster: RedisCluster, instance: Instance): Promise<{ ws: WebSocket; got: string[] }> {
  const got: string[] = [];
  const ws = new WebSocket(`${instance.url.replace('http', 'ws')}/ws/chat`);
  ws.on('message', (d: Buffer) => got.push(d.toString()));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  for (let i = 0; i < 400; i++) {
    const n = Number(await cluster.client.eval(`return redis.call('PUBSUB', 'SHARDNUMSUB', KEYS[1])[2]`, 1, `${PUBSUB_PREFIX}chat`));
    if (n >= 1) break;
    await sleep(25);
  }
  return { ws, got };
}

/** The jobs `worker` ran (started with RUNS_ON_STDOUT=1): their `n`, once per run, in order. */
export function runsOf(worker: Instance): number[] {
  return [...worker.output().matchAll(/^RAN (.+)$/gm)].map((m) => (JSON.parse(m[1]!) as { payload: { n: number } }).payload.n);
}

/**
 * How long an accepted job may take to run after the trouble, ms: a job the worker took just as its primary died
 * (the replica has it active, the worker never got the reply, or its claim was not answered and Redis could not take
 * it back) runs once its lock expires and a stall check has seen it twice: lockDuration + 2 × stalledInterval (the
 * defaults), and 20 s for the worker's own retry delay and a busy machine.
 */
export const RUN_WAIT_MS = DEFAULT_BULLMQ_LOCK_DURATION_MS + 2 * DEFAULT_BULLMQ_STALLED_INTERVAL_MS + 20_000;

/** Where the jobs of these `n` are in the queue (its shard's primary now): state, attempts, stalls, failure, claim. */
export async function whereAre(cluster: RedisCluster, ns: readonly number[]): Promise<string[]> {
  const queue = '{keel:bull}:keel-background';
  const node = (await cluster.primaryOf(Number(await cluster.client.call('CLUSTER', 'KEYSLOT', queue)))).client;
  const found = new Map<number, string>();
  for (const key of await node.keys(`${queue}:*`)) {
    if ((await node.type(key)) !== 'hash') continue;
    const job = await node.hgetall(key);
    const data = JSON.parse(job.data ?? 'null') as { payload?: { n?: number }; token?: string } | null;
    const n = data?.payload?.n;
    if (n === undefined || !ns.includes(n)) continue;
    const id = key.slice(queue.length + 1);
    const lists = ['wait', 'active', 'paused'];
    const sets = ['completed', 'failed', 'delayed', 'prioritized'];
    const where = [
      ...(await Promise.all(lists.map(async (l) => ((await node.lpos(`${queue}:${l}`, id)) !== null ? l : '')))),
      ...(await Promise.all(sets.map(async (z) => ((await node.zscore(`${queue}:${z}`, id)) !== null ? z : '')))),
      (await node.sismember(`${queue}:stalled`, id)) ? 'stalled-set' : '',
    ].filter(Boolean);
    const fate = data?.token ? await node.get(`${queue}:keel-fate:${data.token}`) : null;
    found.set(n, `job ${n} (${id}): ${where.join(',') || 'in no list'}, attemptsMade ${job.atm ?? 0}, stalled ${job.stc ?? 0}, failedReason ${JSON.stringify(job.failedReason ?? '')}, claim ${fate}`);
  }
  return ns.map((n) => found.get(n) ?? `job ${n}: no job hash on the queue's primary (the add never reached it, or its replica)`);
}

/** Run traffic from `a` while `disturb` runs and for `afterMs` after; then check and report (`b` runs the jobs). */
export async function trafficThrough(t: TestContext, cluster: RedisCluster, a: Instance, b: Instance, got: string[], disturb: () => Promise<string>, afterMs = 3000): Promise<void> {
  const answers: Answer[] = [];
  const stop = { done: false };
  const traffic = drive(a, stop, answers);
  await sleep(1000);
  const what = await disturb();
  await sleep(afterMs);
  stop.done = true;
  await traffic;
  t.diagnostic(what);

  const jobs = answers.filter((x) => x.kind === 'job');
  const events = answers.filter((x) => x.kind === 'event');
  for (const x of answers) assert.ok([200, 202, 503].includes(x.status), `${x.kind} ${x.n} answered ${x.status}`);
  const accepted = new Set(jobs.filter((x) => x.status === 202).map((x) => x.n));
  const refused = new Set(jobs.filter((x) => x.status === 503).map((x) => x.n));

  // Every accepted job runs; wait for them (bounded: RUN_WAIT_MS), then a little longer for duplicates. The runs
  // are B's own record of them (stdout), not a Redis list: the test's bookkeeping must not fail with the cluster.
  const waitedFrom = performance.now();
  while (performance.now() - waitedFrom < RUN_WAIT_MS && ![...accepted].every((n) => runsOf(b).includes(n))) await sleep(50);
  const lateMs = performance.now() - waitedFrom;
  await sleep(1000);
  const runs = runsOf(b);
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
  t.diagnostic(`503s for ${window.toFixed(1)} s; slowest answer ${slowest.toFixed(0)} ms`);
  t.diagnostic(`jobs: ${accepted.size} accepted, ${refused.size} refused (503); lost ${lost.length}, ran twice ${twice.length}, refused but ran ${refusedRan.length}; the last accepted one ran ${(lateMs / 1000).toFixed(1)} s after the traffic`);
  t.diagnostic(`events: ${published.size} published, ${failed.size} refused (503); delivered twice ${eventTwice.length}, refused but delivered ${failedDelivered.length}, published but not delivered ${eventsLost.length}`);

  assert.ok(slowest < 5000, `slowest answer ${slowest.toFixed(0)} ms`);
  assert.ok(accepted.size > 0 && refused.size + accepted.size === jobs.length);
  if (lost.length) assert.fail(`accepted jobs that never ran (waited ${RUN_WAIT_MS} ms): ${lost.join(', ')}\n${(await whereAre(cluster, lost)).join('\n')}`);
  assert.deepEqual(twice, [], 'jobs that ran twice');
  assert.deepEqual(refusedRan, [], 'jobs answered 503 that ran');
  assert.deepEqual(eventTwice, [], 'events delivered twice');
  assert.deepEqual(failedDelivered, [], 'events answered 503 that were delivered');
  // Traffic after the trouble is served again.
  const last = answers.slice(-10);
  assert.ok(last.every((x) => x.status !== 503), `still failing afterwards: ${JSON.stringify(last)}`);
}
