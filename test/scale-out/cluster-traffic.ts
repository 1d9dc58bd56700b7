/**
 * Traffic through a Redis Cluster in trouble (issue 37), shared by the failover and slot-migration
 * tests: instance A enqueues a job and publishes an event (fail closed) every ~20 ms while `disturb`
 * runs; B runs the jobs and has a chat client. `trafficThrough` then waits for the accepted jobs, asserts the
 * honesty rules (every answer bounded, accepted jobs once, refused jobs never, no event twice, no
 * refused event delivered) and reports the figures.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import type { RedisCluster } from '../helpers/redis-server.js';
import type { Instance } from './instances.js';

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

/** Run traffic from `a` while `disturb` runs and for `afterMs` after; then check and report. */
export async function trafficThrough(t: TestContext, cluster: RedisCluster, a: Instance, doneKey: string, got: string[], disturb: () => Promise<string>, afterMs = 3000): Promise<void> {
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
  t.diagnostic(`503s for ${window.toFixed(1)} s; slowest answer ${slowest.toFixed(0)} ms`);
  t.diagnostic(`jobs: ${accepted.size} accepted, ${refused.size} refused (503); lost ${lost.length}, ran twice ${twice.length}, refused but ran ${refusedRan.length}`);
  t.diagnostic(`events: ${published.size} published, ${failed.size} refused (503); delivered twice ${eventTwice.length}, refused but delivered ${failedDelivered.length}, published but not delivered ${eventsLost.length}`);

  assert.ok(slowest < 5000, `slowest answer ${slowest.toFixed(0)} ms`);
  assert.ok(accepted.size > 0 && refused.size + accepted.size === jobs.length);
  assert.deepEqual(lost, [], 'accepted jobs that never ran');
  assert.deepEqual(twice, [], 'jobs that ran twice');
  assert.deepEqual(refusedRan, [], 'jobs answered 503 that ran');
  assert.deepEqual(eventTwice, [], 'events delivered twice');
  assert.deepEqual(failedDelivered, [], 'events answered 503 that were delivered');
  // Traffic after the trouble is served again.
  const last = answers.slice(-10);
  assert.ok(last.every((x) => x.status !== 503), `still failing afterwards: ${JSON.stringify(last)}`);
}
